"""Command-line options that several ``selfreflect`` commands share."""

from __future__ import annotations

import click

CONFIG = click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Experiment config (YAML).",
)
OUT = click.option("--out", required=True, type=click.Path(), help="Output path.")
SUBJECT = click.option("--subject", required=True, help="Subject model name from the config.")
DATASET = click.option("--dataset", required=True, help="Dataset name from the config.")
JUDGE = click.option("--judge", required=True, help="Judge model name from the config.")
QUESTIONS = click.option(
    "--questions", "questions_path", required=True, type=click.Path(dir_okay=False)
)
ANSWERS = click.option("--answers", "answers_path", required=True, type=click.Path())
SHARD = click.option("--shard", default=0, show_default=True, help="Which shard (0-based).")
SHARDS = click.option("--shards", default=1, show_default=True, help="Number of shards.")
METHOD = click.option("--method", required=True, type=click.Choice(["sft", "dpo"]))


def distinct_files(ctx: click.Context, param: click.Parameter, files: tuple[str, ...]) -> tuple:
    """Refuse a file named twice (also by another path to it): its rows would count twice."""
    import os

    from selfreflect.errors import InputError

    seen: dict[str, str] = {}
    for file in files:
        real = os.path.realpath(file)
        if real in seen:
            raise InputError(f"{file}: given twice (also as {seen[real]}); each file once")
        seen[real] = file
    return files


FILES = click.argument(
    "files", nargs=-1, required=True, type=click.Path(dir_okay=False), callback=distinct_files
)
