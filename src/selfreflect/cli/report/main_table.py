"""``selfreflect report main-table``: Table 2, SelfReflect per strategy, and its DVC metrics."""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    FIGURE_SETTINGS,
    OUT_DIR,
    PLAN_SETTINGS,
    STATS_SETTINGS,
    claims,
    figure_args,
    plan_args,
    plan_caption,
    read_config,
    skipped,
    stats_args,
    write_metrics,
)
from selfreflect.report import readers, tables, writers
from selfreflect.verdicts import Plan

MAIN_METRICS = ["mean", "ci_low", "ci_high", "n_scored", "n_failed", "n_excluded", "p_adjusted"]


def write_strategy_metrics(
    directory: str | None, table: pd.DataFrame, strategies: list[str]
) -> None:
    """The main table's numbers as DVC metrics: ``<strategy>.json`` per strategy (empty for a
    strategy with no row), so `dvc metrics show` gives one row per strategy."""
    if not directory:
        return
    for strategy in strategies:
        rows = table[table["strategy"] == strategy] if "strategy" in table else table
        write_metrics(str(Path(directory) / f"{strategy}.json"), rows, MAIN_METRICS)


@reads(
    "seed",
    *STATS_SETTINGS,
    *PLAN_SETTINGS,
    "report.plan.min_questions",
    "report.plan.references",
    "report.baseline",
    "finetune.teacher",
    *FIGURE_SETTINGS,
)
@click.command("main-table")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@click.option(
    "--metrics-dir", type=click.Path(file_okay=False), help="DVC metrics, one file per strategy."
)
@FILES
@claims("main")
def main_table(config_path: str, out_dir: str, figure_dir: str, metrics_dir, files) -> None:
    """Table 2: SelfReflect per strategy and experiment from the scores FILES; its DVC metrics
    (``--metrics-dir``: ``<strategy>.json``) are the table's own numbers."""
    from selfreflect.config import teachers
    from selfreflect.report.figures import main_figure

    config = read_config(config_path)
    scores = readers.read_tables("scores", files)
    baseline = config["report"]["baseline"]
    plan = Plan(**plan_args(config, "min_questions"))
    strategies = config["summaries"]["strategies"]
    references = [name for name in config["report"]["plan"]["references"] if name in strategies]
    table = tables.main_table(
        scores,
        baseline,
        **stats_args(config),
        plan=plan,
        teachers=teachers(config),
        references=references,
    )
    if table.empty:
        skipped("main", "no summary scores", out_dir, figure_dir, config)
        return write_strategy_metrics(metrics_dir, table, config["summaries"]["strategies"])
    intervals = {
        "score": ("mean", "ci_low", "ci_high"),
        "vs_baseline": ("diff", "diff_low", "diff_high"),
    }
    family = f"the comparisons with {baseline} of one dataset, subject and judge"
    if references:
        family += f" ({', '.join(references)} shown apart, each a family of its own)"
    caption = (
        f"SelfReflect score (lower is better): mean over the questions every strategy scored "
        f"(n_excluded: scored, but failed by another strategy), with "
        f"{config['report']['confidence']:.0%} bootstrap CI; vs_baseline is the paired "
        f"difference to {baseline} with its (unadjusted) CI and two-sided Wilcoxon p-value; "
        f"p_adjusted: {plan_caption(config, family, 'min_questions', 'questions')}."
    )
    if "teacher" in table:
        intervals["vs_teacher"] = ("teacher_diff", "teacher_diff_low", "teacher_diff_high")
        caption += (
            " vs_teacher: the same for a finetuned strategy and its teacher, its comparisons "
            "with their teachers a family of their own."
        )
    display = writers.with_intervals(table, intervals)
    writers.write_table_files(table, display, out_dir, "main", caption)
    main_figure(table, Path(figure_dir) / "main", **figure_args(config))
    write_strategy_metrics(metrics_dir, table, config["summaries"]["strategies"])
