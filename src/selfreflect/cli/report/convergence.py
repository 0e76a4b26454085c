"""``selfreflect report convergence``: the score against the number of answers used."""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    FIGURE_SETTINGS,
    OUT_DIR,
    STATS_SETTINGS,
    claims,
    figure_args,
    read_config,
    skipped,
    stats_args,
)
from selfreflect.report import readers, tables, writers


@reads("seed", *STATS_SETTINGS, *FIGURE_SETTINGS)
@click.command("convergence")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@FILES
@claims("convergence")
def convergence(config_path: str, out_dir: str, figure_dir: str, files) -> None:
    """Score vs number of conditioning / masked-out answers (FILES: convergence studies)."""
    from selfreflect.report.figures import convergence_figure

    config = read_config(config_path)
    scores = readers.read_tables("convergence_scores", files)
    table = tables.convergence_table(scores, **stats_args(config))
    if table.empty:
        return skipped("convergence", "no convergence scores", out_dir, figure_dir, config)
    display = writers.with_intervals(table, {"score": ("mean", "ci_low", "ci_high")})
    caption = "SelfReflect score with subsampled answer sets (mean and bootstrap CI)."
    writers.write_table_files(table, display, out_dir, "convergence", caption)
    convergence_figure(table, Path(figure_dir) / "convergence", **figure_args(config))
