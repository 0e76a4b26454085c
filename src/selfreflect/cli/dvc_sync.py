"""``selfreflect dvc-sync``: date the outputs DVC recorded, so Snakemake reruns what DVC would."""

from __future__ import annotations

import click

from selfreflect.cli.options import file_option
from selfreflect.paths import DEFAULT_CONFIG


@click.command("dvc-sync")
@file_option(
    "--config",
    f"The config Snakemake runs [default: {DEFAULT_CONFIG}].",
    required=False,
    exists=True,
)
@click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="KEY=VALUE",
    help="An override Snakemake is given with --config (repeatable; the warning's command"
    " repeats the run's).",
)
def dvc_sync(config_path: str | None, overrides: tuple[str, ...]) -> None:
    """After `dvc pull`, `dvc checkout`, `dvc commit` or `dvc exp apply`: date the outputs dvc.lock
    records (content untouched), those made with the config's settings after their inputs, so
    that Snakemake keeps them, those made with other settings before, so that it remakes them
    (run where snakemake runs, the repository root; `snakemake -n` says when this is due)."""
    from selfreflect.config import merge_config, read_config_file, validate_config
    from selfreflect.dvc_record import dvc_sync as sync
    from selfreflect.rule_inputs import parsed_overrides

    source = config_path or DEFAULT_CONFIG
    config = merge_config(read_config_file(source), parsed_overrides(overrides, "--set"))
    plan = sync(validate_config(config, source=source), source, overrides)
    click.echo(
        f"{len(plan.after)} outputs dated after their inputs, {len(plan.before)} before "
        "(Snakemake remakes those)"
    )
