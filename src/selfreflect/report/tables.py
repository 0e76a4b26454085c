"""The paper's tables from artifact tables: pure pandas, statistics from :mod:`selfreflect.stats`.

Every table is long-format with one row per experiment cell (dataset, subject, judge, ...). The
artifacts are read by :mod:`selfreflect.report.readers`, the tables written by
:mod:`selfreflect.report.writers`; the run's own cost is in :mod:`selfreflect.report.performance`
(the multiple-choice study's table: :mod:`selfreflect.mc_study.table`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from selfreflect.artifacts import EXPERIMENT, HIGHER_IS_BETTER
from selfreflect.failures import ANSWERS_FAILED
from selfreflect.scoring.table import SIZE_ABOVE_ANSWERS
from selfreflect.stats import (
    binomial_p_value,
    bootstrap_ci,
    krippendorff_alpha,
    mcnemar_p_value,
    paired_test,
    proportion_ci,
)
from selfreflect.verdicts import Plan, with_verdicts

# --- main table (paper Table 2) ------------------------------------------------------------------


def _interval(values: np.ndarray, n_resamples: int, confidence: float, seed: int) -> list[float]:
    if values.size == 0:
        return [np.nan] * 3
    ci = bootstrap_ci(values, confidence=confidence, n_resamples=n_resamples, seed=seed)
    return [ci.estimate, ci.low, ci.high]


def main_table(
    scores: pd.DataFrame,
    baseline: str,
    n_resamples: int,
    confidence: float,
    seed: int,
    plan: Plan,
    teachers: Mapping[str, str] | None = None,
    references: Collection[str] = (),
    versus: Mapping[str, str] | None = None,
    arms: Mapping[str, Mapping[str, str]] | None = None,
) -> pd.DataFrame:
    """Per experiment and strategy: mean score with bootstrap CI and the paired difference to
    ``baseline`` (Wilcoxon p), all on the questions every strategy of the experiment scored,
    as the authors' tool compares them. ``n_failed`` counts the strategy's own failures,
    ``n_excluded`` the questions it scored that are left out because another strategy failed.
    ``p_adjusted`` is the p-value corrected (``plan``) over the experiment's comparisons with
    ``baseline`` (its ``family``: "strategies", or for each of the ``references`` its own
    name: a family of one, outside the strategies'), ``verdict`` says whether the strategy
    scores better or worse by it.
    With ``teachers`` (strategy -> the strategy it learnt from), the ``teacher_*`` columns hold
    the same paired comparison of each such strategy with its teacher (its own family); with
    ``versus`` (strategy -> the strategy a claim compares it with, ``report.plan.versus``), the
    ``versus_*`` columns hold that comparison (a family of its own); with ``arms`` (method ->
    strategy -> the strategy running that method's adapter of the same seed), the
    ``vs_<method>_*`` columns hold that comparison (a family per method)."""
    compared = {"teacher": teachers, "versus": versus}
    compared |= {f"vs_{method}": others for method, others in (arms or {}).items()}
    compared = {prefix: others for prefix, others in compared.items() if others}
    rows = []
    for keys, cell in scores.groupby(EXPERIMENT, sort=False, dropna=False):
        by_strategy = cell.pivot_table(index="id", columns="strategy", values="score", dropna=False)
        common = by_strategy.dropna()
        for strategy, group in cell.groupby("strategy", sort=False):
            scored = common[strategy].to_numpy(dtype=float)
            own = int(group["score"].notna().sum())
            interval = _interval(scored, n_resamples, confidence, seed)
            row = dict(zip(EXPERIMENT, keys, strict=True))
            family = strategy if strategy in references else "strategies"
            row |= {"strategy": strategy, "family": family, "n_scored": scored.size}
            row |= {"n_failed": len(group) - own, "n_excluded": own - scored.size}
            row |= dict(zip(["mean", "ci_low", "ci_high"], interval, strict=True))
            row |= _versus(common, strategy, baseline, n_resamples, confidence, seed)
            for prefix, others in compared.items():
                other = others.get(strategy)
                result = _versus(common, strategy, other, n_resamples, confidence, seed)
                row |= {prefix: other} | {f"{prefix}_{k}": v for k, v in result.items()}
            rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = _main_verdicts(table, "", plan)
    for prefix in compared:
        table = _main_verdicts(table, f"{prefix}_", plan, by_family=prefix != "versus")
    return table


def _main_verdicts(
    table: pd.DataFrame, prefix: str, plan: Plan, by_family: bool = True
) -> pd.DataFrame:
    """The comparisons ``{prefix}p_value`` corrected within each experiment's families (or,
    not ``by_family``, within each experiment: one family), with verdicts."""
    better = pd.Series(np.where(table[f"{prefix}diff"] < 0, "better", "worse"), table.index)
    p_value, n = f"{prefix}p_value", f"{prefix}n_paired"
    family = [*EXPERIMENT, "family"] if by_family else list(EXPERIMENT)
    return with_verdicts(table, p_value, n, family, plan, better, "too few questions")


def _versus(
    wide: pd.DataFrame,
    strategy: str,
    baseline: str | None,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Any]:
    """Paired comparison of ``strategy`` with ``baseline`` (NaN when not applicable)."""
    empty = {"diff": np.nan, "diff_low": np.nan, "diff_high": np.nan, "p_value": np.nan}
    if baseline is None or strategy == baseline or baseline not in wide:
        return {**empty, "n_paired": 0}
    both = wide[[strategy, baseline]].dropna()
    if both.empty:
        return {**empty, "n_paired": 0}
    result = paired_test(
        both[strategy], both[baseline], seed=seed, confidence=confidence, n_resamples=n_resamples
    )
    return {
        "diff": result.diff.estimate,
        "diff_low": result.diff.low,
        "diff_high": result.diff.high,
        "p_value": result.p_value,
        "n_paired": result.n,
    }


# --- cost table ----------------------------------------------------------------------------------


COST_COLUMNS = ("id", "dataset", "subject", "strategy", "summarizer", "summary", "error")
COST_COLUMNS += ("prompt_tokens", "completion_tokens", "seconds")  # what cost_table reads


def cost_table(summaries: pd.DataFrame, thinking: dict[str, bool]) -> pd.DataFrame:
    """Per dataset, subject and strategy: mean tokens, seconds and summary length in words.

    ``thinking`` says which summariser models think (their completion tokens include the
    reasoning block; ``summary_words`` counts only the summary).
    """
    frame = summaries.assign(
        ok=summaries["error"].isna(),
        summary_words=summaries["summary"].fillna("").str.count(r"\S+"),
        thinking=summaries["summarizer"].map(lambda name: bool(thinking.get(name, False))),
    )
    keys = ["dataset", "subject", "strategy", "summarizer", "thinking"]
    rows = []
    for values, group in frame.groupby(keys, sort=False, dropna=False):
        ok = group[group["ok"]]
        row = dict(zip(keys, values, strict=True))
        row |= {"n_summaries": len(ok), "n_failed": len(group) - len(ok)}
        for column in ["prompt_tokens", "completion_tokens", "seconds", "summary_words"]:
            row[column] = float(ok[column].mean()) if len(ok) else np.nan
        row["total_seconds"] = float(group["seconds"].sum())
        rows.append(row)
    return pd.DataFrame(rows)


# --- metric validation (paper Table 1) -----------------------------------------------------------


VALIDATION_COLUMNS = ("id", *EXPERIMENT, "pair_type", "side", *HIGHER_IS_BETTER, "error")


def validation_table(
    controlled: pd.DataFrame, confidence: float, plan: Plan, two_sided: bool = False
) -> pd.DataFrame:
    """Per experiment, pair type and metric of the ``controlled`` rows (:data:`VALIDATION_COLUMNS`
    and ``has_summary``: whether the pair was made): the fraction of pairs ranked correctly (ties
    count as wrong) with its Wilson interval and the exact binomial p-value against chance
    (0.5), ``p_value_vs_chance`` (one-sided, above chance, unless ``two_sided``), corrected
    (``plan``) over the pair types of the metric in the experiment, with its verdict ("above
    chance", or two-sided "below chance" where fewer than half are right). ``n_failed``:
    questions whose answers failed (no pair could be made) and pairs that lack the metric on a
    side; ``n_excluded`` questions had no such pair (the reasons are in the study table). An
    alternative metric's
    row also compares it with SelfReflect on the ``n_common`` pairs both scored: the pairs only
    SelfReflect ranks correctly and only the metric does, and the exact McNemar p-value,
    corrected over all McNemar tests of the experiment, with its verdict."""
    rows = []
    keys = [*EXPERIMENT, "pair_type"]
    for values, cell in controlled.groupby(keys, sort=False, dropna=False):
        made = cell[cell["has_summary"]]
        n_made = made["id"].nunique()
        failed = cell[cell["error"].str.startswith(ANSWERS_FAILED, na=False)]["id"].nunique()
        wide = made.pivot_table(index="id", columns="side", values=list(HIGHER_IS_BETTER))
        reference = ranked_correctly(wide, "selfreflect")
        for metric in HIGHER_IS_BETTER:
            correct = ranked_correctly(wide, metric)
            n, n_correct = len(correct), int(correct.sum())
            ci = proportion_ci(n_correct, n, confidence) if n else None
            rows.append(
                {
                    **dict(zip(keys, values, strict=True)),
                    "metric": metric,
                    "n_pairs": n,
                    "n_failed": failed + n_made - n,
                    "n_excluded": cell["id"].nunique() - n_made - failed,
                    "n_correct": n_correct,
                    "fraction": ci.estimate if ci else np.nan,
                    "ci_low": ci.low if ci else np.nan,
                    "ci_high": ci.high if ci else np.nan,
                    "p_value_vs_chance": binomial_p_value(n_correct, n, two_sided=two_sided)
                    if n
                    else np.nan,
                    **_versus_selfreflect(reference, correct, metric),
                }
            )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    below = two_sided & (table["fraction"] < 0.5)
    above = pd.Series(np.where(below, "below chance", "above chance"), table.index)
    table = with_verdicts(
        table,
        "p_value_vs_chance",
        "n_pairs",
        [*EXPERIMENT, "metric"],
        plan,
        above,
        "too few pairs",
    )
    ahead = table["n_selfreflect_only"] > table["n_metric_only"]
    selfreflect = pd.Series(np.where(ahead, "SelfReflect better", "SelfReflect worse"), table.index)
    return with_verdicts(
        table,
        "mcnemar_p_value",
        "n_common",
        EXPERIMENT,
        plan,
        selfreflect,
        "too few pairs",
    )


def ranked_correctly(wide: pd.DataFrame, metric: str) -> pd.Series:
    """Per question (index: id) whose pair ``metric`` scored on both sides: whether it prefers
    the good summary (ties count as wrong)."""
    if metric not in wide:
        return pd.Series(dtype=bool)
    pairs = wide[metric].reindex(columns=["good", "bad"]).dropna()
    if HIGHER_IS_BETTER[metric]:
        return pairs["good"] > pairs["bad"]
    return pairs["good"] < pairs["bad"]


def _versus_selfreflect(selfreflect: pd.Series, other: pd.Series, metric: str) -> dict[str, Any]:
    """McNemar's exact test of ``metric`` against SelfReflect on the pairs both ranked
    (``selfreflect`` and ``other``: per question id, ranked correctly); none for SelfReflect."""
    if metric == "selfreflect":
        counts = {"n_common": 0, "n_selfreflect_only": 0, "n_metric_only": 0}
        return {**counts, "mcnemar_p_value": np.nan}
    both = pd.concat({"sr": selfreflect, "other": other}, axis=1, join="inner").astype(bool)
    only_selfreflect = int((both["sr"] & ~both["other"]).sum())
    only_other = int((~both["sr"] & both["other"]).sum())
    return {
        "n_common": len(both),
        "n_selfreflect_only": only_selfreflect,
        "n_metric_only": only_other,
        "mcnemar_p_value": mcnemar_p_value(only_selfreflect, only_other) if len(both) else np.nan,
    }


def pairs_correct(validation: pd.DataFrame) -> pd.DataFrame:
    """Per experiment: the share of all controlled pairs SelfReflect ranks correctly."""
    selfreflect = validation[validation["metric"] == "selfreflect"]
    counts = selfreflect.groupby(EXPERIMENT, sort=False, dropna=False)[
        ["n_correct", "n_pairs"]
    ].sum()
    share = counts["n_correct"] / counts["n_pairs"].where(counts["n_pairs"] > 0)
    return share.rename("pairs_correct").reset_index()


# --- convergence ---------------------------------------------------------------------------------


def convergence_table(
    convergence: pd.DataFrame, n_resamples: int, confidence: float, seed: int
) -> pd.DataFrame:
    """Per experiment, strategy, subsampled answer set and size: mean score with bootstrap CI;
    ``n_excluded`` questions have fewer answers than the size, ``n_failed`` others could not be
    scored (reasons in the study table)."""
    keys = [*EXPERIMENT, "strategy", "axis", "size"]
    rows = []
    for values, group in convergence.groupby(keys, sort=False, dropna=False):
        scored = group["score"].dropna().to_numpy(dtype=float)
        interval = _interval(scored, n_resamples, confidence, seed)
        excluded = int(group["error"].str.startswith(SIZE_ABOVE_ANSWERS, na=False).sum())
        rows.append(
            {
                **dict(zip(keys, values, strict=True)),
                "n_scored": scored.size,
                "n_failed": len(group) - scored.size - excluded,
                "n_excluded": excluded,
                **dict(zip(["mean", "ci_low", "ci_high"], interval, strict=True)),
            }
        )
    return pd.DataFrame(rows)


# --- judge backend agreement ---------------------------------------------------------------------


def backend_agreement_table(agreement: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """Per experiment and judge backend other than ``baseline`` (scoring.backend): how far its
    scores of the summaries are from ``baseline``'s. ``n_summaries`` (question, strategy) pairs
    both scored are compared: the largest and the mean absolute score difference (NaN where none
    is); ``n_scored_by_one`` pairs only one of the two scored (the other recorded a failure)."""
    columns = [*EXPERIMENT, "backend", "n_summaries", "n_scored_by_one"]
    columns += ["max_abs_diff", "mean_abs_diff"]
    rows = []
    for values, cell in agreement.groupby(EXPERIMENT, sort=False, dropna=False):
        scores = cell.set_index(["id", "strategy", "backend"])["score"].unstack("backend")
        scores = scores.reindex(columns=list(dict.fromkeys([baseline, *cell["backend"]])))
        reference = scores[baseline]
        for backend in scores.columns.drop(baseline):
            both = scores[backend].notna() & reference.notna()
            one = scores[backend].notna() ^ reference.notna()
            diff = (scores.loc[both, backend] - reference[both]).abs()
            rows.append(
                {
                    **dict(zip(EXPERIMENT, values, strict=True)),
                    "backend": backend,
                    "n_summaries": int(both.sum()),
                    "n_scored_by_one": int(one.sum()),
                    "max_abs_diff": diff.max() if len(diff) else np.nan,
                    "mean_abs_diff": diff.mean() if len(diff) else np.nan,
                }
            )
    return pd.DataFrame(rows, columns=columns)


# --- human agreement -----------------------------------------------------------------------------


def _ranks(values: pd.DataFrame, ascending: bool) -> pd.DataFrame:
    """Within-question ranks (1 = best, ties averaged) of a (question, strategy) table."""
    return values.rank(axis=1, ascending=ascending, method="average")


def human_agreement_table(ratings: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Krippendorff's alpha among raters and between raters and SelfReflect, per experiment.

    Units are (question, strategy) pairs rated by someone and scored by SelfReflect; ratings
    with a ``subject`` rate that subject's summaries alone, without one every experiment's. Raw
    ratings are compared at the interval level; SelfReflect (a distance) and the ratings are
    put on one scale as within-question ranks of the strategies (ordinal level).
    ``n_excluded`` rated units of the experiment have no score (reasons in the scores table).
    """
    rows = []
    for values, cell in scores.groupby(EXPERIMENT, sort=False, dropna=False):
        base = dict(zip(EXPERIMENT, values, strict=True))
        own = ratings  # the ratings of this experiment's summaries
        if "subject" in ratings:
            own = ratings[ratings["subject"] == base["subject"]]
        rated_units = own[["question_id", "strategy"]].drop_duplicates()
        rated_units = pd.MultiIndex.from_frame(rated_units, names=["id", "strategy"])
        unscored = cell[cell["score"].isna()].set_index(["id", "strategy"]).index
        score = cell.dropna(subset=["score"]).pivot_table(
            index="id", columns="strategy", values="score"
        )
        rated = own[
            ratings["question_id"].isin(score.index) & ratings["strategy"].isin(score.columns)
        ]
        by_rater = {
            rater: group.pivot_table(
                index="question_id", columns="strategy", values="rating"
            ).reindex(index=score.index, columns=score.columns)
            for rater, group in rated.groupby("rater")
        }
        units = sum(1 for _ in rated.groupby(["question_id", "strategy"]))
        base |= {"n_raters": len(by_rater), "n_units": units}
        base |= {"n_excluded": int(unscored.isin(rated_units).sum())}
        for name, alpha in _alphas(by_rater, score).items():
            rows.append({**base, "comparison": name, "alpha": alpha})
    return pd.DataFrame(rows)


def _alphas(by_rater: dict[str, pd.DataFrame], score: pd.DataFrame) -> dict[str, float]:
    def flat(frames: Sequence[pd.DataFrame]) -> np.ndarray:
        return np.stack([f.to_numpy(dtype=float).ravel() for f in frames])

    def alpha(frames: Sequence[pd.DataFrame], level: str) -> float:
        try:
            return krippendorff_alpha(flat(frames), level)  # type: ignore[arg-type]
        except ValueError:  # no unit with two ratings
            return np.nan

    raters = list(by_rater.values())
    rated = np.zeros(score.shape, dtype=bool)
    for r in raters:
        rated |= r.notna().to_numpy()
    rater_ranks = [_ranks(r, ascending=False) for r in raters]
    selfreflect = _ranks(score.where(rated), ascending=True)
    mean_rank = pd.concat(rater_ranks).groupby(level=0).mean() if raters else score * np.nan
    mean_rank = mean_rank.reindex(index=score.index, columns=score.columns)
    return {
        "raters (ratings, interval)": alpha(raters, "interval"),
        "raters (within-question ranks, ordinal)": alpha(rater_ranks, "ordinal"),
        "raters + SelfReflect (ranks, ordinal)": alpha([*rater_ranks, selfreflect], "ordinal"),
        "mean rater vs SelfReflect (ranks, ordinal)": alpha([mean_rank, selfreflect], "ordinal"),
    }
