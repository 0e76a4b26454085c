"""``selfreflect report validation``: Table 1, the controlled pairs each metric ranks correctly."""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    FIGURE_SETTINGS,
    METRICS,
    OUT_DIR,
    PLAN_SETTINGS,
    claims,
    figure_args,
    plan_args,
    plan_caption,
    read_config,
    skipped,
    write_metrics,
)
from selfreflect.report import readers, tables, writers
from selfreflect.verdicts import Plan


@reads("report.confidence", *PLAN_SETTINGS, "report.plan.min_pairs", *FIGURE_SETTINGS)
@click.command("validation")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@METRICS
@FILES
@claims("validation")
def validation(config_path: str, out_dir: str, figure_dir: str, metrics_path, files) -> None:
    """Table 1: fraction of controlled pairs each metric ranks correctly (FILES: studies)."""
    from selfreflect.report.figures import validation_figure

    config = read_config(config_path)
    controlled = readers.read_tables("controlled_scores", files)
    plan = Plan(**plan_args(config, "min_pairs"))
    table = tables.validation_table(controlled, config["report"]["confidence"], plan)
    if table.empty:
        reason = "no controlled pairs (report.pair_types)"
        return skipped("validation", reason, out_dir, figure_dir, config, metrics_path)
    display = writers.with_intervals(table, {"correct": ("fraction", "ci_low", "ci_high")})
    per_metric = "one metric's pair types of one dataset, subject and judge"
    every_mcnemar = "all McNemar tests of one dataset, subject and judge"
    caption = (
        "Fraction of controlled summary pairs ranked correctly (ties count as wrong) with "
        f"{config['report']['confidence']:.0%} Wilson intervals (unadjusted); "
        "p_value_vs_chance: exact one-sided binomial test against chance (0.5), "
        f"p_adjusted_vs_chance: {plan_caption(config, per_metric, 'min_pairs', 'pairs')}. "
        "An alternative metric against SelfReflect on the n_common pairs both ranked: "
        "n_selfreflect_only and n_metric_only pairs only one of them ranks correctly, "
        "mcnemar_p_value: exact two-sided McNemar test, "
        f"mcnemar_p_adjusted: {plan_caption(config, every_mcnemar, 'min_pairs', 'pairs')}."
    )
    writers.write_table_files(table, display, out_dir, "validation", caption)
    validation_figure(table, Path(figure_dir) / "validation", **figure_args(config))
    write_metrics(metrics_path, tables.pairs_correct(table), ["pairs_correct"])
