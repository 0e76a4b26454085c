"""``selfreflect check-config``: validate a config (or ``params.yaml``) and record it resolved."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG


@click.command("check-config")
@CONFIG
@click.option(
    "--out", type=click.Path(dir_okay=False), help="Write the config resolved (defaults filled in)."
)
def check_config(config_path: str, out: str | None) -> None:
    """Validate the config against the schema and the run's names (every key: unknown ones are
    refused); with --out, write it resolved."""
    import yaml

    from selfreflect.config import load_config
    from selfreflect.fileio import check_writable, write_text

    if out:
        check_writable(out)
    config = load_config(config_path)
    if out:
        write_text(out, yaml.safe_dump(config, sort_keys=False, width=100))
    click.echo(f"{config_path}: a valid config of run {config['run']}")
