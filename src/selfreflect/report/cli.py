"""``selfreflect report``: the paper's tables and figures, and the judge-scored studies.

The studies (``controlled-scores``, ``mc-scores``, ``convergence-scores``) load the judge and
live in :mod:`selfreflect.report.study_cli`, so editing a table command never reruns a judge
job; ``main-table``, ``validation``, ``mc-study``, ``convergence``, ``cost-table`` and
``human-agreement`` only read artifacts and write ``<name>.csv/.md/.tex`` into ``--out-dir``,
figures ``<name>.png/.pdf`` into ``--figure-dir`` and headline DVC metrics (controlled-pair
accuracy, the multiple-choice study's correlation) to ``--metrics``, from the artifact FILES
they are given (each row says its experiment: dataset, subject, judge, strategy).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click
import pandas as pd

from selfreflect.cli_options import CONFIG
from selfreflect.report import tables
from selfreflect.report.study_cli import STUDIES

FILES = click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
OUT_DIR = click.option("--out-dir", required=True, type=click.Path(), help="Tables folder.")
FIGURE_DIR = click.option("--figure-dir", required=True, type=click.Path(), help="Figures folder.")
METRICS = click.option("--metrics", "metrics_path", type=click.Path(), help="Headline DVC metrics.")
# the main table's DVC metrics of a strategy (per experiment where several)
MAIN_METRICS = ["mean", "ci_low", "ci_high", "n_scored", "n_failed", "n_excluded"]


def _config(path: str) -> dict[str, Any]:
    from selfreflect.config import load_config

    return load_config(path)


def _stats_args(config: dict[str, Any]) -> dict[str, Any]:
    report = config["report"]
    return {
        "n_resamples": report["bootstrap_resamples"],
        "confidence": report["confidence"],
        "seed": config["seed"],
    }


def _figure_args(config: dict[str, Any]) -> dict[str, Any]:
    return {"width": config["report"]["figure_width"], "dpi": config["report"]["figure_dpi"]}


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _write_metrics(path: str | None, frame: pd.DataFrame, fields: list[str]) -> None:
    """Headline DVC metrics: the ``fields`` of each row of a report table, keyed by the parts of
    the experiment that vary in it (``{"dataset": {field: value}}`` for one subject and judge;
    ``{field: value}`` for one experiment), so `dvc metrics show` stays narrow."""
    from selfreflect.fileio import write_json

    if not path:
        return
    if frame.empty:
        return write_json(path, {})
    varying = [key for key in tables.EXPERIMENT if frame[key].nunique() > 1]
    out: dict[str, Any] = {}
    for row in frame.to_dict("records"):
        values = {f: _json_safe(row[f]) for f in fields}
        if varying:
            out.setdefault("/".join(str(row[k]) for k in varying), {}).update(values)
        else:
            out.update(values)
    write_json(path, out)


def _write_strategy_metrics(
    directory: str | None, table: pd.DataFrame, strategies: list[str]
) -> None:
    """The main table's numbers as DVC metrics: ``<strategy>.json`` per strategy (empty for a
    strategy with no row), so `dvc metrics show` gives one row per strategy."""
    if not directory:
        return
    for strategy in strategies:
        rows = table[table["strategy"] == strategy] if "strategy" in table else table
        _write_metrics(str(Path(directory) / f"{strategy}.json"), rows, MAIN_METRICS)


def _skipped(
    name: str,
    reason: str,
    out_dir: str,
    figure_dir: str | None = None,
    config: dict[str, Any] | None = None,
    metrics_path: str | None = None,
) -> None:
    """Write table ``name`` (and its figure, empty metrics) saying why it has nothing to show."""
    from selfreflect.fileio import write_json
    from selfreflect.report.figures import skipped_figure

    tables.write_skipped(out_dir, name, reason)
    if figure_dir and config:
        skipped_figure(Path(figure_dir) / name, reason, **_figure_args(config))
    if metrics_path:
        write_json(metrics_path, {})
    click.echo(f"{name}: skipped ({reason})", err=True)


@click.group()
def report() -> None:
    """The paper's tables and figures, and the judge-scored studies behind them."""


for study in STUDIES:
    report.add_command(study)


# --- tables and figures -----------------------------------------------------------------------


@report.command("main-table")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@click.option(
    "--metrics-dir", type=click.Path(file_okay=False), help="DVC metrics, one file per strategy."
)
@FILES
def main_table(config_path: str, out_dir: str, figure_dir: str, metrics_dir, files) -> None:
    """Table 2: SelfReflect per strategy and experiment from the scores FILES; its DVC metrics
    (``--metrics-dir``: ``<strategy>.json``) are the table's own numbers."""
    from selfreflect.config import teachers
    from selfreflect.report.figures import main_figure

    config = _config(config_path)
    scores = tables.read_tables("scores", files)
    table = tables.main_table(
        scores, config["report"]["baseline"], **_stats_args(config), teachers=teachers(config)
    )
    if table.empty:
        _skipped("main", "no summary scores", out_dir, figure_dir, config)
        return _write_strategy_metrics(metrics_dir, table, config["summaries"]["strategies"])
    intervals = {
        "score": ("mean", "ci_low", "ci_high"),
        "vs_baseline": ("diff", "diff_low", "diff_high"),
    }
    caption = (
        f"SelfReflect score (lower is better): mean over the questions every strategy scored "
        f"(n_excluded: scored, but failed by another strategy), with "
        f"{config['report']['confidence']:.0%} bootstrap CI; vs_baseline is the paired "
        f"difference to {config['report']['baseline']} with its CI and Wilcoxon p-value."
    )
    if "teacher" in table:
        intervals["vs_teacher"] = ("teacher_diff", "teacher_diff_low", "teacher_diff_high")
        caption += " vs_teacher: the same for a finetuned strategy and its teacher."
    display = tables.with_intervals(table, intervals)
    tables.write_table_files(table, display, out_dir, "main", caption)
    main_figure(table, Path(figure_dir) / "main", **_figure_args(config))
    _write_strategy_metrics(metrics_dir, table, config["summaries"]["strategies"])


@report.command("validation")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@METRICS
@FILES
def validation(config_path: str, out_dir: str, figure_dir: str, metrics_path, files) -> None:
    """Table 1: fraction of controlled pairs each metric ranks correctly (FILES: studies)."""
    from selfreflect.report.figures import validation_figure

    config = _config(config_path)
    controlled = tables.read_tables("controlled_scores", files)
    table = tables.validation_table(controlled, config["report"]["confidence"])
    if table.empty:
        reason = "no controlled pairs (report.pair_types)"
        return _skipped("validation", reason, out_dir, figure_dir, config, metrics_path)
    display = tables.with_intervals(table, {"correct": ("fraction", "ci_low", "ci_high")})
    caption = (
        "Fraction of controlled summary pairs ranked correctly (ties count as wrong) with "
        f"{config['report']['confidence']:.0%} Wilson intervals."
    )
    tables.write_table_files(table, display, out_dir, "validation", caption)
    validation_figure(table, Path(figure_dir) / "validation", **_figure_args(config))
    _write_metrics(metrics_path, tables.pairs_correct(table), ["pairs_correct"])


@report.command("mc-study")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@METRICS
@FILES
def mc_study(config_path: str, out_dir: str, figure_dir: str, metrics_path, files) -> None:
    """Rank correlation of SelfReflect with the true W1 on multiple-choice questions."""
    from selfreflect.report.figures import mc_figure

    config = _config(config_path)
    mc = tables.read_tables("mc_scores", files)
    if mc.empty or mc["score"].isna().all():
        reason = "no multiple-choice (source: mmlu) summary was scored"
        return _skipped("mc_study", reason, out_dir, figure_dir, config, metrics_path)
    table = tables.mc_table(mc)
    caption = "Spearman correlation of SelfReflect with the true 1-Wasserstein distance."
    tables.write_table_files(table, table, out_dir, "mc_study", caption)
    mc_figure(mc, table, Path(figure_dir) / "mc_study", **_figure_args(config))
    _write_metrics(metrics_path, table, ["spearman_rho"])


@report.command("convergence")
@CONFIG
@OUT_DIR
@FIGURE_DIR
@FILES
def convergence(config_path: str, out_dir: str, figure_dir: str, files) -> None:
    """Score vs number of conditioning / masked-out answers (FILES: convergence studies)."""
    from selfreflect.report.figures import convergence_figure

    config = _config(config_path)
    scores = tables.read_tables("convergence_scores", files)
    table = tables.convergence_table(scores, **_stats_args(config))
    if table.empty:
        return _skipped("convergence", "no convergence scores", out_dir, figure_dir, config)
    display = tables.with_intervals(table, {"score": ("mean", "ci_low", "ci_high")})
    caption = "SelfReflect score with subsampled answer sets (mean and bootstrap CI)."
    tables.write_table_files(table, display, out_dir, "convergence", caption)
    convergence_figure(table, Path(figure_dir) / "convergence", **_figure_args(config))


@report.command("cost-table")
@CONFIG
@OUT_DIR
@FILES
def cost_table(config_path: str, out_dir: str, files) -> None:
    """Tokens, seconds and summary lengths per strategy (FILES: summaries tables)."""
    config = _config(config_path)
    summaries = tables.read_tables("summaries", files)
    thinking = {name: spec["thinking"] for name, spec in config["models"].items()}
    table = tables.cost_table(summaries, thinking)
    if table.empty:
        return _skipped("cost", "no summaries", out_dir)
    caption = (
        "Mean cost per summary: prompt and completion tokens (thinking summarisers' include "
        "the reasoning), seconds, and the summary's length in words."
    )
    tables.write_table_files(table, table, out_dir, "cost", caption)


@report.command("human-agreement")
@CONFIG
@click.option(
    "--ratings",
    "ratings_path",
    type=click.Path(dir_okay=False),
    help="Ratings CSV (default: the config's report.human_ratings; none: an empty table).",
)
@OUT_DIR
@FILES
def human_agreement(config_path: str, ratings_path: str | None, out_dir: str, files) -> None:
    """Krippendorff's alpha among raters and with SelfReflect (FILES: scores tables)."""
    config = _config(config_path)
    ratings_path = ratings_path or config["report"]["human_ratings"]
    if ratings_path is None:
        reason = "no human ratings configured (report.human_ratings is null)"
        return _skipped("human_agreement", reason, out_dir)
    scores = tables.read_tables("scores", files)
    table = tables.human_agreement_table(tables.read_ratings(ratings_path), scores)
    if table.empty or table["n_units"].eq(0).all():
        reason = f"the ratings in {ratings_path} rate no question and strategy this run scored"
        return _skipped("human_agreement", reason, out_dir)
    caption = f"Krippendorff's alpha of the ratings in {ratings_path} and SelfReflect."
    tables.write_table_files(table, table, out_dir, "human_agreement", caption)
