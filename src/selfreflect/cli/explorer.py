"""``selfreflect explorer``: the run's explorer folder."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT


@click.command()
@CONFIG
@OUT
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def explorer(config_path: str, out: str, files: tuple[str, ...]) -> None:
    """Write the run's explorer folder (index.html and one data file per question) from its
    answers, answer clusters (``selfreflect cluster-answers``), summaries, scores and
    controlled-pair FILES (told apart by the kind each file records)."""
    from selfreflect.config import load_config
    from selfreflect.explorer import OWNER, read_files, write_explorer
    from selfreflect.fileio import check_replaceable

    config = load_config(config_path)
    check_replaceable(out, OWNER)
    count = write_explorer(read_files(files), config["run"], out)
    click.echo(f"explorer of {count} questions written to {out}")
