"""``selfreflect config-docs``: the config reference, from the schema."""

from __future__ import annotations

import click

CONFIG_README = "config/README.md"


@click.command("config-docs")
@click.option("--out", default=CONFIG_README, show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if OUT is not up to date.")
def config_docs(out: str, check: bool) -> None:
    """Write the config reference (every key, type, default, description) from the schema."""
    from pathlib import Path

    from selfreflect.config_docs import config_readme
    from selfreflect.errors import ConfigError
    from selfreflect.fileio import write_text

    text = config_readme()
    if not check:
        write_text(out, text)
        click.echo(f"{out} written from the config schema")
    elif not Path(out).is_file() or Path(out).read_text(encoding="utf-8") != text:
        raise ConfigError(
            f"{out}: not up to date with the config schema; run selfreflect config-docs"
        )
