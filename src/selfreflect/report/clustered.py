"""The science tables' tests again, with questions clustered (by template): pure pandas.

Questions written from one template (or, multiple-choice, of one subject) are not independent
draws, and the tables' tests assume they are. Here each test becomes the mean of a per-question
value (a pair ranked right: 1 or 0; a strategy's score minus the other's; a question's rho over
its temperatures) with a cluster-robust interval and two-sided t test
(:func:`selfreflect.stats.cluster_robust_mean`), corrected within the same families as the
tables', beside the design effect: how much the clustering widens the mean's variance. It tests
the mean, where the tables' Wilcoxon tests test a location of the differences: a sensitivity
analysis beside the plan's verdicts, which stay the tables'.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.report.tables import ranked_correctly
from selfreflect.stats import cluster_robust_mean, per_question_rho
from selfreflect.verdicts import Plan, with_verdicts

OUTCOMES = [*EXPERIMENT, "family", "test", "id", "value", "null"]
# each family's finding where its mean lies above its null, and below
FINDINGS = {
    "pairs": ("above chance", "below chance"),
    "strategies": ("worse", "better"),  # a difference in score: lower is better
    "versus": ("worse", "better"),
    "mc": ("orders as W1", "orders against W1"),
}


def pair_outcomes(controlled: pd.DataFrame) -> pd.DataFrame:
    """Per question and pair type of the ``controlled`` rows (the validation table's): 1 where
    SelfReflect ranks the pair right, else 0, against chance (0.5)."""
    frames = []
    for keys, cell in controlled.groupby([*EXPERIMENT, "pair_type"], sort=False, dropna=False):
        made = cell[cell["has_summary"]]
        wide = made.pivot_table(index="id", columns="side", values=["selfreflect"])
        right = ranked_correctly(wide, "selfreflect")
        labels = dict(zip([*EXPERIMENT, "test"], keys, strict=True))
        frames.append(_outcomes(labels, "pairs", right.astype(float), 0.5))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=OUTCOMES)


def strategy_outcomes(
    scores: pd.DataFrame,
    baseline: str,
    references: list[str],
    versus: Mapping[str, str],
) -> pd.DataFrame:
    """Per question, on the questions every strategy scored (as the main table): each
    strategy's score minus ``baseline``'s (family ``strategies``, a reference its own) and,
    for each pair of ``versus``, the strategy's minus the one it is compared with."""
    frames = []
    for keys, cell in scores.groupby(EXPERIMENT, sort=False, dropna=False):
        common = cell.pivot_table(index="id", columns="strategy", values="score").dropna()
        labels = dict(zip(EXPERIMENT, keys, strict=True))
        compared = [(s, baseline, s if s in references else "strategies") for s in common]
        compared += [(s, other, "versus") for s, other in versus.items()]
        for strategy, other, family in compared:
            if strategy != other and {strategy, other} <= set(common):
                test = f"{strategy} - {other}"
                difference = common[strategy] - common[other]
                frames.append(_outcomes({**labels, "test": test}, family, difference, 0.0))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=OUTCOMES)


def mc_outcomes(mc: pd.DataFrame) -> pd.DataFrame:
    """Per multiple-choice question with a rho (the MC table's rows): its Spearman rho of
    score and W1 over its temperatures, against 0."""
    frames = []
    for keys, cell in mc.groupby(EXPERIMENT, sort=False, dropna=False):
        ok = cell[cell["summary"].notna()].dropna(subset=["score", "w1"])
        if ok.empty:
            continue
        rho, _ = per_question_rho(ok["id"], ok["score"], ok["w1"])
        labels = {**dict(zip(EXPERIMENT, keys, strict=True)), "test": "rho of score and W1"}
        frames.append(_outcomes(labels, "mc", rho, 0.0))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=OUTCOMES)


def _outcomes(labels: dict[str, str], family: str, values: pd.Series, null: float) -> pd.DataFrame:
    """``values`` (indexed by question id) as outcome rows of one test."""
    frame = pd.DataFrame({"id": values.index, "value": values.to_numpy(dtype=float)})
    return frame.assign(**labels, family=family, null=null)[OUTCOMES]


def clustered_table(
    outcomes: pd.DataFrame,
    clusters: pd.Series,
    confidence: float,
    plan: Plan,
    pair_plan: Plan,
) -> pd.DataFrame:
    """Per test of ``outcomes``: its questions, their clusters (``clusters``: question id ->
    label; a question without one is a cluster of its own), the mean value with its
    cluster-robust interval, the two-sided p-value against the null, and the design effect;
    p-values adjusted within each experiment's family (by ``plan``, the pairs' by
    ``pair_plan``: their minimum counts pairs), with the family's finding (:data:`FINDINGS`)
    as the verdict (:func:`_with_verdicts`)."""
    rows = []
    for keys, test in outcomes.groupby([*EXPERIMENT, "family", "test"], sort=False, dropna=False):
        labels = test["id"].map(clusters).fillna(test["id"])
        result = cluster_robust_mean(test["value"], labels, test["null"].iloc[0], confidence)
        rows.append(
            {
                **dict(zip([*EXPERIMENT, "family", "test"], keys, strict=True)),
                "n_questions": result.n,
                "n_clusters": result.clusters,
                "null": test["null"].iloc[0],
                "mean": result.mean.estimate,
                "ci_low": result.mean.low,
                "ci_high": result.mean.high,
                "p_value": result.p_value,
                "design_effect": result.design_effect,
            }
        )
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    pairs, above = table["family"] == "pairs", table["mean"] > table["null"]
    findings = table["family"].map(lambda family: FINDINGS.get(family, FINDINGS["strategies"]))
    finding = pd.Series(np.where(above, findings.str[0], findings.str[1]), table.index)
    parts = [
        _with_verdicts(part, rule, finding[part.index])
        for rule, part in ((pair_plan, table[pairs]), (plan, table[~pairs]))
        if len(part)
    ]
    return pd.concat(parts).sort_index()


def _with_verdicts(table: pd.DataFrame, plan: Plan, finding: pd.Series) -> pd.DataFrame:
    """``table``'s p-values adjusted within each experiment's family, with verdicts; a test
    without a p-value is "too few" (questions, or clusters) or "no spread" (every question's
    value the same: its variance, and so its test, is undefined)."""
    family = [*EXPERIMENT, "family"]
    out = with_verdicts(table, "p_value", "n_questions", family, plan, finding, "too few")
    few = (out["n_questions"] < plan.minimum) | (out["n_clusters"] < 2)
    return out.assign(verdict=out["verdict"].fillna(few.map({True: "too few", False: "no spread"})))
