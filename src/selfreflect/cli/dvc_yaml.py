"""``selfreflect dvc-yaml``: ``dvc.yaml`` and ``params.yaml`` from the Snakemake rules."""

from __future__ import annotations

import click

from selfreflect import paths
from selfreflect.cli.options import file_option

DVC_YAML = "selfreflect dvc-yaml"


@click.command("dvc-yaml")
@file_option(
    "--config",
    required=False,
    exists=True,
    help="The config to build the DAG for [default: the one params.yaml was resolved from, "
    f"else {paths.DEFAULT_CONFIG}].",
)
@click.option(
    "--project",
    type=click.Path(file_okay=False),
    help=f"The DVC project to write [default: the repository root for {paths.DEFAULT_CONFIG} "
    f"and without --config, {paths.DVC_PROJECT}/ (made a DVC project of its own) for any "
    "other config].",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file is not up to date.")
@click.option(
    "--check-params",
    is_flag=True,
    help="Write nothing; exit 1 unless params.yaml (as DVC's -S left it) is a valid config whose "
    "DAG is dvc.yaml's. DVC's dvc_yaml stage runs this on every change of params.yaml.",
)
def dvc_yaml(config_path: str | None, project: str | None, check: bool, check_params: bool) -> None:
    """Write a config's DVC project, dvc.yaml from the Snakemake rules and params.yaml, the
    resolved config (run in the repository root; DVC's commands then run in the project)."""
    from pathlib import Path

    from selfreflect.code_deps import plugin_files, running_command_deps
    from selfreflect.config import load_config, params_source
    from selfreflect.dvc_project import (
        GIT_IGNORE,
        ROOT,
        config_files,
        make_project,
        missing_ignores,
        missing_links,
        project_folder,
        project_links,
    )
    from selfreflect.errors import ConfigError
    from selfreflect.fileio import write_text
    from selfreflect.workflow import PARAMS_FILE, dvc_yaml, params_yaml
    from selfreflect.workflow import check_params as check_params_file

    code = running_command_deps().files  # the deps of the stage that checks params.yaml
    if check_params:
        check_params_file(Path(paths.SNAKEFILE), Path("dvc.yaml"), code)
        return
    config = Path(config_path or params_source(Path(PARAMS_FILE)) or paths.DEFAULT_CONFIG)
    settings = load_config(config)
    folder = Path(project) if project else ROOT
    if config_path and not project:
        folder = project_folder(config, settings["run"])
    texts = {
        "dvc.yaml": dvc_yaml(Path(paths.SNAKEFILE), config, code),
        PARAMS_FILE: params_yaml(config),
    }
    plugins = settings["summaries"]["plugins"].values()
    plugin_code = [file for target in plugins for file in plugin_files(target)]
    files = [] if folder == ROOT else config_files(settings, str(config))
    links = project_links([*plugin_code, *files])
    if not check:
        make_project(folder, links)
    elif missing := missing_links(folder, links):
        raise ConfigError(f"{folder}: no link to {', '.join(missing)}; run {DVC_YAML}")
    elif missing := missing_ignores(folder, links):
        raise ConfigError(f"{folder / GIT_IGNORE}: lacks {', '.join(missing)}; run {DVC_YAML}")
    for name, text in texts.items():
        out = folder / name
        if not check:
            write_text(out, text)
        elif not out.is_file() or out.read_text(encoding="utf-8") != text:
            raise ConfigError(f"{out}: not up to date with the rules and {config}; run {DVC_YAML}")
    if not check:
        click.echo(f"{folder / 'dvc.yaml'} and {folder / PARAMS_FILE} written for {config}")
