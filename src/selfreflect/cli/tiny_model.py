"""``selfreflect tiny-model``: the tiny random-weight model of the smoke configuration."""

from __future__ import annotations

import click

from selfreflect.cli.options import OUT


@click.command("tiny-model")
@OUT
@click.option("--seed", default=0, show_default=True, help="Weight initialisation seed.")
def tiny_model(out: str, seed: int) -> None:
    """Build the tiny random-weight chat model used by the smoke configuration."""
    from selfreflect.tiny_model import build_tiny_model

    build_tiny_model(out, seed=seed)
    click.echo(f"tiny model written to {out}")
