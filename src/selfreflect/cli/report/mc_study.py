"""``selfreflect report mc-study``: the multiple-choice study's within-question rank
correlation."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    FIGURE_DIR,
    FIGURE_SETTINGS,
    METRICS,
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
from selfreflect.report import readers, writers
from selfreflect.verdicts import Plan

if TYPE_CHECKING:
    from selfreflect.mc_study.table import McPlan

ONE_TEST = "its one test per dataset, subject and judge"  # the family of each MC statistic


def mc_plan_args(config: dict[str, Any]) -> McPlan:
    """The multiple-choice study's part of the analysis plan (``report.plan``)."""
    from selfreflect.mc_study.table import McPlan

    plan = config["report"]["plan"]
    return McPlan(plan["mc_statistic"], plan["truth_tolerance"], plan["truth_min_share"])


@reads(
    "seed",
    *STATS_SETTINGS,
    *PLAN_SETTINGS,
    "report.plan.min_questions",
    "report.plan.mc_statistic",
    "report.plan.truth_tolerance",
    "report.plan.truth_min_share",
    *FIGURE_SETTINGS,
)
@click.command("mc-study")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@METRICS
@FILES
@claims("mc_study")
def mc_study(config_path: str, out_dir: str, figure_dir: str, metrics_path, files) -> None:
    """Rank correlation of SelfReflect with the true W1 on multiple-choice questions, within
    each question over its temperatures (the pooled one too)."""
    from selfreflect.mc_study.figure import mc_figure
    from selfreflect.mc_study.table import mc_table

    config = read_config(config_path)
    mc = readers.read_tables("mc_scores", files)
    if mc.empty or mc["score"].isna().all():
        reason = "no multiple-choice (source: mmlu) summary was scored"
        return skipped("mc_study", reason, out_dir, figure_dir, config, metrics_path)
    plan = config["report"]["plan"]
    table = mc_table(
        mc,
        **stats_args(config),
        plan=Plan(**plan_args(config, "min_questions")),
        mc_plan=mc_plan_args(config),
    )
    display = writers.with_intervals(
        table, {"median_rho": ("median_rho", "median_rho_low", "median_rho_high")}
    )
    caption = (
        "Does SelfReflect order each multiple-choice question's stated distributions as their "
        "true 1-Wasserstein distance does? median_rho: the median over questions of the Spearman "
        "rho over the question's temperatures, with "
        f"{config['report']['confidence']:.0%} bootstrap CI over questions; p_value: one-sided "
        "Wilcoxon signed-rank test that the per-question rho is above 0; n_rho questions have a "
        "rho, n_rho_skipped none (under two scored summaries, or a constant score or distance). "
        "pooled_rho and pooled_p_value: "
        "the Spearman rho over all summaries pooled (the paper's figure; it mixes in the "
        "differences between questions), with its two-sided p. Each statistic's p_adjusted: "
        f"{plan_caption(config, ONE_TEST, 'min_questions', 'questions')}"
        " (verdict: the within-question test; pooled_verdict: the paper's); tracks_w1: the "
        f"verdict of the statistic the plan names to decide ({plan['mc_statistic']}). "
        "n_ambiguous_*: answers naming two or more choices. Truth check: a question's truth "
        "agrees with its sampled answers when their total variation is at most its expected "
        f"sampling error + {plan['truth_tolerance']:g}; truth_check: 'agrees' when at least "
        f"{plan['truth_min_share']:.0%} of the n_truth_checked questions do (n_truth_agree)."
    )
    writers.write_table_files(table, display, out_dir, "mc_study", caption)
    mc_figure(mc, table, Path(figure_dir) / "mc_study", **figure_args(config))
    write_metrics(metrics_path, table, ["median_rho", "p_value", "pooled_rho"])
