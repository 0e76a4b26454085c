"""``selfreflect report cost-table``: the cost of each strategy."""

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


@reads("models")
@click.command("cost-table")
@CONFIG
@OUT_DIR
@FILES
@claims("cost")
def cost_table(config_path: str, out_dir: str, files) -> None:
    """Tokens, seconds and summary lengths per strategy (FILES: summaries tables)."""
    config = read_config(config_path)
    summaries = readers.read_tables("summaries", files)
    thinking = {name: spec["thinking"] for name, spec in config["models"].items()}
    table = tables.cost_table(summaries, thinking)
    if table.empty:
        return skipped("cost", "no summaries", out_dir)
    caption = (
        "Mean cost per summary: prompt and completion tokens (thinking summarisers' include "
        "the reasoning), seconds, and the summary's length in words."
    )
    writers.write_table_files(table, table, out_dir, "cost", caption)
