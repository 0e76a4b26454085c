"""The multiple-choice study's table: does SelfReflect order each question's stated
distributions as their true W1 does?"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.stats import per_question_rho, rank_correlation, within_question_test
from selfreflect.verdicts import Plan, with_verdicts

MC_AMBIGUOUS = ["ambiguous_conditioning", "ambiguous_test"]


@dataclass(frozen=True)
class McPlan:
    """The multiple-choice study's part of the analysis plan (config ``report.plan``): the
    statistic that decides the claim and the truth check's criterion."""

    statistic: Literal["within_question", "pooled"]
    truth_tolerance: float
    truth_min_share: float
    two_sided: bool = False  # the within-question test (report.plan.two_sided)


def mc_table(
    mc: pd.DataFrame,
    n_resamples: int,
    confidence: float,
    seed: int,
    plan: Plan,
    mc_plan: McPlan,
) -> pd.DataFrame:
    """Per experiment: does SelfReflect order each question's stated distributions (one per
    temperature) as their true W1 does?

    The primary statistic is within-question: ``median_rho`` is the median over questions of
    the Spearman rho of score and W1 over the question's temperatures, with a percentile
    bootstrap CI over questions (``median_rho_low``, ``median_rho_high``), and ``p_value`` the
    Wilcoxon signed-rank test that the per-question rho lies above 0 (two-sided where
    ``mc_plan`` says: away from 0, "orders against W1" where the median rho is negative)
    (:func:`selfreflect.stats.within_question_test`); ``n_rho`` questions have a rho,
    ``n_rho_skipped`` scored questions have none (one scored summary, or a constant score or
    W1). ``pooled_rho`` and ``pooled_p_value`` (two-sided) are the paper's Spearman rho over
    all scored summaries pooled, kept for comparison: it mixes in the differences between
    questions. ``n_ambiguous_conditioning`` and ``n_ambiguous_test`` count the answers naming
    two or more choices, summed over questions (each question once, not per temperature).

    Each statistic has its verdict by ``plan`` (one test per experiment and statistic, so its
    adjusted p is its p): ``verdict`` ("orders as W1" where ``p_adjusted`` is below the plan's
    level) is the within-question statistic's; ``pooled_verdict`` ("positive" or "negative")
    is the paper's. A verdict needs the plan's minimum of questions (``n_rho``, ``n_questions``).
    ``tracks_w1`` is the claim's verdict ("yes"/"no") by the statistic ``mc_plan`` names
    (``decided_by``).

    The truth check (``mc_plan``): a question's truth agrees with its answers when the total
    variation between it and the shares of the choices its answers name is at most its expected
    sampling error plus ``truth_tolerance``; ``n_truth_agree`` of ``n_truth_checked`` questions
    agree (``truth_agree_share``), and ``truth_check`` is "agrees" when that share reaches
    ``truth_min_share``, else "disagrees".

    ``truth`` says how the subject's distributions were found (``logprobs``: exact;
    ``samples``) and ``truth_error`` is their mean expected sampling error (total variation).
    ``n_excluded`` questions had no summaries (not multiple choice, failed answers, no
    distribution over the choices); ``n_failed`` summaries could not be scored; the reasons
    are in the study table.
    """
    rows = []
    for values, cell in mc.groupby(EXPERIMENT, sort=False, dropna=False):
        made = cell[cell["summary"].notna()]
        ok = made.dropna(subset=["score", "w1"])
        pooled_rho, pooled_p = (np.nan, np.nan)
        if len(ok) >= 2 and ok["score"].nunique() > 1 and ok["w1"].nunique() > 1:
            pooled_rho, pooled_p = rank_correlation(ok["score"], ok["w1"])
        ambiguous = cell.groupby("id")[MC_AMBIGUOUS].max().sum()  # one value per question
        rows.append(
            {
                **dict(zip(EXPERIMENT, values, strict=True)),
                "n_questions": ok["id"].nunique(),
                "n_summaries": len(ok),
                "n_failed": len(made) - len(ok),
                "n_excluded": cell["id"].nunique() - made["id"].nunique(),
                **_within_question(ok, n_resamples, confidence, seed, mc_plan.two_sided),
                "pooled_rho": pooled_rho,
                "pooled_p_value": pooled_p,
                "truth": ",".join(sorted(made["choice_source"].dropna().unique())) or None,
                "truth_error": made.groupby("id")["choice_error"].first().mean(),
                **{f"n_{column}": int(ambiguous[column]) for column in MC_AMBIGUOUS},
                **_truth_check(made, mc_plan),
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    few = "too few questions"
    against = mc_plan.two_sided & (table["median_rho"] < 0)
    ordered = pd.Series(np.where(against, "orders against W1", "orders as W1"), table.index)
    table = with_verdicts(table, "p_value", "n_rho", EXPERIMENT, plan, ordered, few)
    sign = pd.Series(np.where(table["pooled_rho"] > 0, "positive", "negative"), table.index)
    table = with_verdicts(table, "pooled_p_value", "n_questions", EXPERIMENT, plan, sign, few)
    within = mc_plan.statistic == "within_question"
    tracks = table["verdict"] == "orders as W1" if within else table["pooled_verdict"] == "positive"
    return table.assign(decided_by=mc_plan.statistic, tracks_w1=np.where(tracks, "yes", "no"))


def _truth_check(summaries: pd.DataFrame, mc_plan: McPlan) -> dict[str, Any]:
    """:func:`mc_table`'s truth-check columns for one experiment's summaries (one truth per
    question)."""
    per_question = summaries.groupby("id")[["truth_tv", "truth_tv_expected"]].first().dropna()
    allowed = per_question["truth_tv_expected"] + mc_plan.truth_tolerance
    agree = per_question["truth_tv"] <= allowed
    share = float(agree.mean()) if len(agree) else np.nan
    verdict = None
    if len(agree):
        verdict = "agrees" if share >= mc_plan.truth_min_share else "disagrees"
    return {
        "n_truth_checked": len(agree),
        "n_truth_agree": int(agree.sum()),
        "truth_agree_share": share,
        "truth_check": verdict,
    }


def _within_question(
    scored: pd.DataFrame, n_resamples: int, confidence: float, seed: int, two_sided: bool
) -> dict[str, Any]:
    """:func:`mc_table`'s within-question columns for the scored summaries of one experiment
    (NaN statistics when no question has a rho)."""
    result: dict[str, Any] = dict.fromkeys(
        ["median_rho", "median_rho_low", "median_rho_high", "p_value"], np.nan
    )
    result |= {"n_rho": 0, "n_rho_skipped": 0}
    if scored.empty:
        return result
    columns = (scored["id"], scored["score"], scored["w1"])
    rhos, skipped = per_question_rho(*columns)
    if rhos.size == 0:
        return result | {"n_rho_skipped": skipped}
    test = within_question_test(
        *columns, seed=seed, confidence=confidence, n_resamples=n_resamples, two_sided=two_sided
    )
    return {
        "median_rho": test.median.estimate,
        "median_rho_low": test.median.low,
        "median_rho_high": test.median.high,
        "p_value": test.p_value,
        "n_rho": test.n,
        "n_rho_skipped": test.skipped,
    }
