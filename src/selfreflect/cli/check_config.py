"""``selfreflect check-config``: validate a config (or ``params.yaml``) and record it resolved."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT


@click.command("check-config")
@CONFIG
@OUT
def check_config(config_path: str, out: str) -> None:
    """Validate the config against the schema and the run's names (every key, unknown ones
    refused) and write it resolved (defaults filled in) to OUT."""
    import yaml

    from selfreflect.config import load_config
    from selfreflect.fileio import check_writable, write_text

    check_writable(out)
    config = load_config(config_path)
    write_text(out, yaml.safe_dump(config, sort_keys=False, width=100))
    click.echo(f"{config_path}: a valid config of run {config['run']}; resolved in {out}")
