"""``selfreflect report human-agreement``: agreement with human ratings."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    OUT_DIR,
    claims,
    read_config,
    skipped,
)
from selfreflect.report import readers, tables, writers


@reads("report.human_ratings")
@click.command("human-agreement")
@CONFIG
@click.option(
    "--ratings",
    "ratings_path",
    type=click.Path(dir_okay=False),
    help="Ratings CSV (default: the config's report.human_ratings; none: an empty table).",
)
@OUT_DIR
@FILES
@claims("human_agreement")
def human_agreement(config_path: str, ratings_path: str | None, out_dir: str, files) -> None:
    """Krippendorff's alpha among raters and with SelfReflect (FILES: scores tables)."""
    config = read_config(config_path)
    ratings_path = ratings_path or config["report"]["human_ratings"]
    if ratings_path is None:
        reason = "no human ratings configured (report.human_ratings is null)"
        return skipped("human_agreement", reason, out_dir)
    scores = readers.read_tables("scores", files)
    table = tables.human_agreement_table(readers.read_ratings(ratings_path), scores)
    if table.empty or table["n_units"].eq(0).all():
        reason = f"the ratings in {ratings_path} rate no question and strategy this run scored"
        return skipped("human_agreement", reason, out_dir)
    caption = f"Krippendorff's alpha of the ratings in {ratings_path} and SelfReflect."
    writers.write_table_files(table, table, out_dir, "human_agreement", caption)
