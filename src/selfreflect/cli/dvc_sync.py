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
def dvc_sync(config_path: str | None) -> None:
    """After `dvc pull`, `dvc checkout`, `dvc commit` or `dvc exp apply`: date the outputs dvc.lock
    records (content untouched), those made with the config's settings after their inputs, so
    that Snakemake keeps them, those made with other settings before, so that it remakes them
    (run where snakemake runs, the repository root; `snakemake -n` says when this is due)."""
    from selfreflect.config import load_config
    from selfreflect.dvc_record import dvc_sync as sync

    source = config_path or DEFAULT_CONFIG
    plan = sync(load_config(source), source)
    click.echo(
        f"{len(plan.after)} outputs dated after their inputs, {len(plan.before)} before "
        "(Snakemake remakes those)"
    )
