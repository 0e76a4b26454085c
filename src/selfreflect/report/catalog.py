"""The run's tables, declared: one :class:`Report` per table of the whole run (every dataset,
subject and judge), which :func:`selfreflect.report.runner.run_report` makes and
``selfreflect report NAME`` runs (the command line makes its command from the entry).

An entry names what the table reads (the artifact kind of its FILES), the function of
:mod:`selfreflect.report` (or :mod:`selfreflect.mc_study`) that builds it and the arguments that
function takes from the config, its figure and its DVC metrics. Its caption is the jinja2
template ``data/captions/<table>.j2``, linked beside the Snakemake report's caption of the same
table (``workflow/report/<table>.rst`` and ``<table>.j2``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.config import rival_arms, teachers
from selfreflect.errors import InputError
from selfreflect.mc_study.figure import mc_figure
from selfreflect.mc_study.table import McPlan, mc_table
from selfreflect.report import figures, readers, tables
from selfreflect.verdicts import Plan

Config = dict[str, Any]
STATS_SETTINGS = ("seed", "report.bootstrap_resamples", "report.confidence")  # stats_args'
PLAN_SETTINGS = ("report.plan.level", "report.plan.correction")  # plan_args'
FIGURE_SETTINGS = ("report.figure_width", "report.figure_dpi")  # what every figure reads


class Skip(Exception):
    """The table has nothing to show, for the reason given: it says so instead."""


@dataclass(frozen=True)
class Metrics:
    """A table's headline DVC metrics: the ``fields`` of each of its ``rows`` (default: the
    table's own), keyed by the parts of the experiment that vary and by the columns ``by``;
    ``per_strategy``: a file per strategy of the config in ``--metrics-dir``, else one file,
    ``--metrics``."""

    fields: tuple[str, ...]
    by: tuple[str, ...] = ()
    rows: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    per_strategy: bool = False


@dataclass(frozen=True)
class Report:
    """A table of the run: ``selfreflect report NAME`` writes ``<table>.csv/.md/.tex``."""

    name: str  # its command
    table: str  # its files' (and its figure's, its caption template's) name
    title: str  # its section of the Snakemake report
    reads: str  # the artifact kind of its FILES
    build: Callable[..., pd.DataFrame]  # (the FILES' rows, **arguments) -> the table
    arguments: Callable[..., dict[str, Any]]  # (config, **optional inputs) -> build's others
    settings: tuple[str | Callable[..., Any], ...]  # what arguments reads of the config (keys,
    # or functions of the job and config giving key paths: its rule's params)
    help: str  # the command's
    empty: str  # why a table without rows is empty: a template over the arguments
    intervals: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)  # shown as one
    scientific: tuple[str, ...] = ()  # columns shown in scientific notation
    figure: Callable[..., Any] | None = None  # (table, stem, width, dpi)
    figure_rows: bool = False  # the figure draws the FILES' rows, before the table
    metrics: Metrics | None = None
    optional_inputs: Mapping[str, str] = field(default_factory=dict)  # --NAME: its help
    columns: tuple[str, ...] | None = None  # what build reads of FILES; default all but tasks
    present: tuple[str, ...] = ()  # FILES' columns build sees only as has_<name> (held or null)

    def read(self, files: Iterable[str | Path]) -> pd.DataFrame:
        """The rows of FILES that :attr:`build` takes (:func:`readers.read_tables`)."""
        return readers.read_tables(self.reads, files, self.columns, self.present)

    @property
    def config_keys(self) -> tuple[str | Callable[..., Any], ...]:
        """What making the table reads of the config: its settings, its figure's."""
        return (*self.settings, *(FIGURE_SETTINGS if self.figure else ()))


def _thinking_keys(job: Mapping[str, str], config: Config) -> list[tuple[str, ...]]:
    """Each model's thinking mode, what the cost table reads of the models."""
    return [("models", name, "thinking") for name in config["models"]]


def stats_args(config: Config) -> dict[str, Any]:
    """The bootstrap's settings (:data:`STATS_SETTINGS`)."""
    report = config["report"]
    return {
        "n_resamples": report["bootstrap_resamples"],
        "confidence": report["confidence"],
        "seed": config["seed"],
    }


def plan_args(config: Config, minimum: str) -> Plan:
    """The analysis plan of a table's verdicts (``report.plan``), its ``minimum`` the setting
    named so (``min_pairs``, ``min_questions``)."""
    plan = config["report"]["plan"]
    return Plan(level=plan["level"], correction=plan["correction"], minimum=plan[minimum])


def mc_plan_args(config: Config) -> McPlan:
    """The multiple-choice study's part of the analysis plan (``report.plan``)."""
    plan = config["report"]["plan"]
    return McPlan(
        plan["mc_statistic"],
        plan["truth_tolerance"],
        plan["truth_min_share"],
        plan.get("two_sided", False),
    )


def _main_arguments(config: Config) -> dict[str, Any]:
    strategies = config["summaries"]["strategies"]
    references = config["report"]["plan"]["references"]
    return {
        "baseline": config["report"]["baseline"],
        **stats_args(config),
        "plan": plan_args(config, "min_questions"),
        "teachers": teachers(config),
        "references": [name for name in references if name in strategies],
        "versus": _claim_versus(config["report"]["plan"].get("versus"), strategies),
        "arms": rival_arms(config),
    }


def _claim_versus(versus: dict[str, Any] | None, strategies: list[str]) -> dict[str, str]:
    """``report.plan.versus`` as other strategy -> the strategy it is compared with, for the
    strategies this run lists (none where it lists the compared strategy not)."""
    if not versus or versus["strategy"] not in strategies:
        return {}
    return {other: versus["strategy"] for other in versus["others"] if other in strategies}


def _mc_study(mc: pd.DataFrame, **arguments: Any) -> pd.DataFrame:
    """The multiple-choice study's table; none where no summary was scored."""
    if mc.empty or mc["score"].isna().all():
        return pd.DataFrame()
    return mc_table(mc, **arguments)


def _human_ratings(config: Config, ratings: str | None) -> dict[str, Any]:
    """The ratings CSV: ``--ratings``, else the config's (none: nothing to show)."""
    ratings_path = ratings or config["report"]["human_ratings"]
    if ratings_path is None:
        raise Skip("no human ratings configured (report.human_ratings is null)")
    return {"ratings_path": ratings_path}


def human_agreement(scores: pd.DataFrame, ratings_path: str) -> pd.DataFrame:
    """Agreement with the ratings CSV ``ratings_path``; none where they rate nothing scored.
    Ratings of a run of several subjects say whose summaries they rate (a ``subject`` column):
    one subject's ratings would be compared with every subject's summaries."""
    ratings = readers.read_ratings(ratings_path)
    subjects = list(dict.fromkeys(scores["subject"]))
    if "subject" not in ratings and len(subjects) > 1:
        raise InputError(
            f"{ratings_path}: no subject column, and the scores are of several subjects'"
            f" summaries ({', '.join(subjects)}); name the subject each rating's summary is of"
        )
    table = tables.human_agreement_table(ratings, scores)
    return table.iloc[:0] if table["n_units"].eq(0).all() else table


MAIN_METRICS = ("mean", "ci_low", "ci_high", "n_scored", "n_failed", "n_excluded", "p_adjusted")
REPORTS = (
    Report(
        "main-table",
        "main",
        "Main table",
        reads="scores",
        build=tables.main_table,
        arguments=_main_arguments,
        settings=(
            *STATS_SETTINGS,
            *PLAN_SETTINGS,
            "report.plan.min_questions",
            "report.plan.references",
            "report.plan.versus",
            "report.baseline",
            "finetune.teacher",
        ),
        help="Table 2: SelfReflect per strategy and experiment from the scores FILES; its DVC "
        "metrics (``--metrics-dir``: ``<strategy>.json``) are the table's own numbers.",
        empty="no summary scores",
        intervals={
            "score": ("mean", "ci_low", "ci_high"),
            "vs_baseline": ("diff", "diff_low", "diff_high"),
            "vs_teacher": ("teacher_diff", "teacher_diff_low", "teacher_diff_high"),
            "vs_claim": ("versus_diff", "versus_diff_low", "versus_diff_high"),
            "vs_sft_adapter": ("vs_sft_diff", "vs_sft_diff_low", "vs_sft_diff_high"),
            "vs_dpo_adapter": ("vs_dpo_diff", "vs_dpo_diff_low", "vs_dpo_diff_high"),
        },
        figure=figures.main_figure,
        metrics=Metrics(MAIN_METRICS, per_strategy=True),
    ),
    Report(
        "validation",
        "validation",
        "Metric validation",
        reads="controlled_scores",
        build=tables.validation_table,
        arguments=lambda config: {
            "confidence": config["report"]["confidence"],
            "plan": plan_args(config, "min_pairs"),
            "two_sided": config["report"]["plan"].get("two_sided", False),
        },
        settings=(
            "report.confidence",
            *PLAN_SETTINGS,
            "report.plan.min_pairs",
            "report.plan.two_sided",
        ),
        help="Table 1: fraction of controlled pairs each metric ranks correctly (FILES: studies).",
        columns=tables.VALIDATION_COLUMNS,
        present=("summary",),
        empty="no controlled pairs (report.pair_types)",
        intervals={"correct": ("fraction", "ci_low", "ci_high")},
        figure=figures.validation_figure,
        metrics=Metrics(("pairs_correct",), rows=tables.pairs_correct),
    ),
    Report(
        "mc-study",
        "mc_study",
        "Multiple-choice study",
        reads="mc_scores",
        build=_mc_study,
        arguments=lambda config: {
            **stats_args(config),
            "plan": plan_args(config, "min_questions"),
            "mc_plan": mc_plan_args(config),
        },
        settings=(
            *STATS_SETTINGS,
            *PLAN_SETTINGS,
            "report.plan.min_questions",
            "report.plan.mc_statistic",
            "report.plan.truth_tolerance",
            "report.plan.truth_min_share",
            "report.plan.two_sided",
        ),
        help="Rank correlation of SelfReflect with the true W1 on multiple-choice questions, "
        "within each question over its temperatures (the pooled one too).",
        empty="no multiple-choice (source: mmlu) summary was scored",
        intervals={"median_rho": ("median_rho", "median_rho_low", "median_rho_high")},
        figure=mc_figure,
        figure_rows=True,
        metrics=Metrics(("median_rho", "p_value", "pooled_rho")),
    ),
    Report(
        "convergence",
        "convergence",
        "Convergence",
        reads="convergence_scores",
        build=tables.convergence_table,
        arguments=stats_args,
        settings=STATS_SETTINGS,
        help="Score vs number of conditioning / masked-out answers (FILES: convergence studies).",
        empty="no convergence scores",
        intervals={"score": ("mean", "ci_low", "ci_high")},
        figure=figures.convergence_figure,
    ),
    Report(
        "cost-table",
        "cost",
        "Cost",
        reads="summaries",
        build=tables.cost_table,
        arguments=lambda config: {
            "thinking": {name: spec["thinking"] for name, spec in config["models"].items()}
        },
        settings=(_thinking_keys,),
        help="Tokens, seconds and summary lengths per strategy (FILES: summaries tables).",
        empty="no summaries",
        columns=tables.COST_COLUMNS,
    ),
    Report(
        "human-agreement",
        "human_agreement",
        "Human agreement",
        reads="scores",
        build=human_agreement,
        arguments=_human_ratings,
        settings=("report.human_ratings",),
        help="Krippendorff's alpha among raters and with SelfReflect (FILES: scores tables).",
        empty="the ratings in {{ ratings_path }} rate no question and strategy this run scored",
        optional_inputs={
            "ratings": "Ratings CSV (default: the config's report.human_ratings; none: an empty "
            "table)."
        },
    ),
    Report(
        "backend-agreement",
        "backend_agreement",
        "Backend agreement",
        reads="agreement_scores",
        build=tables.backend_agreement_table,
        arguments=lambda config: {"baseline": config["scoring"]["backend"]},
        settings=("scoring.backend", "report.agreement_questions"),
        help="Per experiment and judge backend: the largest and mean absolute difference of its "
        "scores to scoring.backend's on the same summaries (FILES: report agreement-scores "
        "tables).",
        empty="no judge backend besides scoring.backend ({{ baseline }}) scored the summaries",
        scientific=("max_abs_diff", "mean_abs_diff"),
        metrics=Metrics(("max_abs_diff", "mean_abs_diff", "n_summaries"), by=("backend",)),
    ),
)


def report_for(table: str) -> Report:
    """The report that makes ``table`` (``main``, ``validation``, ...)."""
    return next(report for report in REPORTS if report.table == table)
