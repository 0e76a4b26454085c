"""``selfreflect tiny-model``: the tiny random-weight model of the smoke configuration."""

from __future__ import annotations

import click

from selfreflect.cli.options import OUT
from selfreflect.config import SEED_MAX


@click.command("tiny-model")
@OUT
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(min=0, max=SEED_MAX),
    help="Weight initialisation seed.",
)
def tiny_model(out: str, seed: int) -> None:
    """Build the tiny random-weight chat model used by the smoke configuration."""
    from selfreflect.tiny_model import build_tiny_model

    build_tiny_model(out, seed=seed)
    click.echo(f"tiny model written to {out}")
