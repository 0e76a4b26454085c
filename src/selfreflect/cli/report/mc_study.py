"""``selfreflect report mc-study``: the multiple-choice study's rank correlation."""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.cli.options import CONFIG
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    FILES,
    METRICS,
    OUT_DIR,
    figure_args,
    read_config,
    skipped,
    write_metrics,
)
from selfreflect.report import tables


@click.command("mc-study")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@METRICS
@FILES
def mc_study(config_path: str, out_dir: str, figure_dir: str, metrics_path, files) -> None:
    """Rank correlation of SelfReflect with the true W1 on multiple-choice questions."""
    from selfreflect.report.figures import mc_figure

    config = read_config(config_path)
    mc = tables.read_tables("mc_scores", files)
    if mc.empty or mc["score"].isna().all():
        reason = "no multiple-choice (source: mmlu) summary was scored"
        return skipped("mc_study", reason, out_dir, figure_dir, config, metrics_path)
    table = tables.mc_table(mc)
    caption = "Spearman correlation of SelfReflect with the true 1-Wasserstein distance."
    tables.write_table_files(table, table, out_dir, "mc_study", caption)
    mc_figure(mc, table, Path(figure_dir) / "mc_study", **figure_args(config))
    write_metrics(metrics_path, table, ["spearman_rho"])
