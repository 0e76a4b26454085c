"""``selfreflect dvc-yaml``: ``dvc.yaml`` and ``params.yaml`` from the Snakemake rules."""

from __future__ import annotations

import click

from selfreflect import paths

DVC_YAML = "selfreflect dvc-yaml"


@click.command("dvc-yaml")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    help="The config to build the DAG for [default: the one params.yaml was resolved from, "
    f"else {paths.DEFAULT_CONFIG}].",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file is not up to date.")
@click.option(
    "--check-params",
    is_flag=True,
    help="Write nothing; exit 1 unless params.yaml (as DVC's -S left it) is a valid config whose "
    "DAG is dvc.yaml's. DVC's dvc_yaml stage runs this on every change of params.yaml.",
)
def dvc_yaml(config_path: str | None, check: bool, check_params: bool) -> None:
    """Write dvc.yaml from the Snakemake rules and params.yaml, the resolved config (run in the
    project folder)."""
    from pathlib import Path

    from selfreflect.code_deps import running_command_deps
    from selfreflect.errors import ConfigError
    from selfreflect.fileio import write_text
    from selfreflect.workflow import PARAMS_FILE, dvc_yaml, params_source, params_yaml
    from selfreflect.workflow import check_params as check_params_file

    code = running_command_deps().files  # the deps of the stage that checks params.yaml
    if check_params:
        check_params_file(Path(paths.SNAKEFILE), Path("dvc.yaml"), code)
        return
    config = Path(config_path or params_source(Path(PARAMS_FILE)) or paths.DEFAULT_CONFIG)
    texts = {
        "dvc.yaml": dvc_yaml(Path(paths.SNAKEFILE), config, code),
        PARAMS_FILE: params_yaml(config),
    }
    for out, text in texts.items():
        if not check:
            write_text(out, text)
        elif not Path(out).is_file() or Path(out).read_text(encoding="utf-8") != text:
            raise ConfigError(f"{out}: not up to date with the rules and {config}; run {DVC_YAML}")
    if not check:
        click.echo(f"dvc.yaml and {PARAMS_FILE} written for {config}")
