"""The science tables' tests with questions clustered (selfreflect.report.clustered): what each
test's per-question value is, and its verdict within its family."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from selfreflect.report.clustered import (
    clustered_table,
    mc_outcomes,
    pair_outcomes,
    strategy_outcomes,
)
from selfreflect.stats import cluster_robust_mean
from selfreflect.verdicts import Plan

CELL = {"dataset": "real", "subject": "qwen", "judge": "smollm2"}
PLAN = Plan(level=0.05, correction="holm", minimum=5)


def scores(table: dict[str, list[float | None]]) -> pd.DataFrame:
    """Score rows of one experiment: strategy -> its score per question q0, q1, ..."""
    rows = [
        {**CELL, "id": f"q{i}", "strategy": strategy, "score": score}
        for strategy, values in table.items()
        for i, score in enumerate(values)
    ]
    return pd.DataFrame(rows)


def test_a_strategys_value_is_its_score_minus_the_others_on_questions_all_scored():
    frame = scores(
        {
            "greedy": [0.5, 0.4, 0.3, 0.2],
            "basic": [0.4, 0.4, 0.1, None],  # q3 failed: no strategy's test counts it
            "sample_and_summarize": [0.3, 0.1, 0.3, 0.1],
            "concatenated_answers": [0.1, 0.1, 0.1, 0.1],
        }
    )
    versus = {"basic": "sample_and_summarize"}
    outcomes = strategy_outcomes(frame, "greedy", ["concatenated_answers"], versus)
    by_test = {test: rows for test, rows in outcomes.groupby("test")}
    assert set(by_test) == {
        "basic - greedy",
        "sample_and_summarize - greedy",
        "concatenated_answers - greedy",
        "basic - sample_and_summarize",
    }
    assert by_test["basic - greedy"]["value"].tolist() == pytest.approx([-0.1, 0.0, -0.2])
    assert by_test["basic - sample_and_summarize"]["value"].tolist() == pytest.approx(
        [0.1, 0.3, -0.2]
    )
    families = outcomes.groupby("test")["family"].first()
    assert families["concatenated_answers - greedy"] == "concatenated_answers"
    assert families["basic - sample_and_summarize"] == "versus"
    assert families["basic - greedy"] == "strategies"
    assert (outcomes["null"] == 0.0).all()


def test_a_pairs_value_is_whether_selfreflect_ranks_it_right():
    """A pair is right when the good side scores lower (ties are wrong); a pair without its
    summary is no question of the test."""
    rows = []
    for question, (good, bad, made) in enumerate(
        [(0.1, 0.3, True), (0.3, 0.3, True), (0.4, 0.2, True), (0.1, 0.5, False)]
    ):
        for side, score in (("good", good), ("bad", bad)):
            rows.append(
                {
                    **CELL,
                    "id": f"q{question}",
                    "pair_type": "idk",
                    "side": side,
                    "selfreflect": score,
                    "has_summary": made,
                }
            )
    outcomes = pair_outcomes(pd.DataFrame(rows))
    assert outcomes.set_index("id")["value"].to_dict() == {"q0": 1.0, "q1": 0.0, "q2": 0.0}
    assert set(outcomes["test"]) == {"idk"} and (outcomes["null"] == 0.5).all()


def test_an_mc_questions_value_is_its_rho_over_its_temperatures():
    rows = [
        {**CELL, "id": question, "temperature": t, "summary": "s", "score": score, "w1": w1}
        for question, t, score, w1 in [
            ("a", 0.5, 0.1, 0.1),
            ("a", 1.0, 0.2, 0.2),
            ("a", 2.0, 0.3, 0.3),
            ("b", 0.5, 0.3, 0.1),
            ("b", 1.0, 0.2, 0.2),
            ("b", 2.0, 0.1, 0.3),
            ("c", 0.5, 0.2, 0.1),
            ("c", 1.0, 0.2, 0.2),  # a constant score: no rho
        ]
    ]
    outcomes = mc_outcomes(pd.DataFrame(rows))
    assert outcomes.set_index("id")["value"].to_dict() == {"a": 1.0, "b": -1.0}
    unscored = pd.DataFrame(rows).assign(score=np.nan)  # an experiment no summary was scored in
    assert mc_outcomes(unscored).empty


def test_the_clustered_table_tests_each_mean_by_cluster_within_its_family():
    """Each test's row is cluster_robust_mean of its values under the clusters given (a
    question without one alone) against its null, at the confidence given; Holm within the
    family (a claim's ``versus`` comparison is a family of its own); the pairs by their own
    plan; the family's finding as verdict."""
    rng = np.random.default_rng(0)
    templates = np.repeat(np.arange(10), 4)
    clusters = pd.Series({f"q{i}": f"t{t}" for i, t in enumerate(templates[:36])})
    strong = rng.normal(-1.0, 0.3, 10)[templates] + rng.normal(0, 0.1, 40)  # better, clustered
    null = rng.normal(0.0, 1.0, 40)
    ranked = rng.binomial(1, 0.7, 40).astype(float)  # a pair type ranked right, against chance
    tests = [
        ("strategies", "cot - greedy", strong, 0.0),
        ("strategies", "basic - greedy", null, 0.0),
        ("versus", "cot - sampled", strong + 0.5, 0.0),
        ("pairs", "idk", ranked, 0.5),
    ]
    outcomes = pd.concat(
        [
            pd.DataFrame(
                {
                    **CELL,
                    "family": family,
                    "test": test,
                    "id": [f"q{i}" for i in range(40)],
                    "value": values,
                    "null": null_value,
                }
            )
            for family, test, values, null_value in tests
        ],
        ignore_index=True,
    )
    pair_plan = Plan(level=0.05, correction="holm", minimum=41)  # more pairs than there are
    table = clustered_table(outcomes, clusters, 0.9, PLAN, pair_plan).set_index("test")
    labels = pd.Series([f"t{t}" for t in templates[:36]] + ["q36", "q37", "q38", "q39"])
    expected = cluster_robust_mean(strong, labels, confidence=0.9)
    row = table.loc["cot - greedy"]
    assert row["p_value"] == pytest.approx(expected.p_value, rel=1e-12)
    assert row["design_effect"] == pytest.approx(expected.design_effect, rel=1e-12)
    assert [row["ci_low"], row["ci_high"]] == pytest.approx([expected.mean.low, expected.mean.high])
    assert (row["n_questions"], row["n_clusters"]) == (40, 13)
    assert row["verdict"] == "better"
    strategies = table[table["family"] == "strategies"]
    holm = min(1.0, 2 * min(strategies["p_value"]))
    assert min(strategies["p_adjusted"]) == pytest.approx(holm)
    assert table.loc["basic - greedy", "verdict"] == "not significant"
    versus = table.loc["cot - sampled"]
    assert versus["p_adjusted"] == pytest.approx(versus["p_value"])  # alone in its family
    pair = table.loc["idk"]
    assert pair["p_value"] == pytest.approx(cluster_robust_mean(ranked, labels, 0.5).p_value)
    assert pair["verdict"] == "too few"  # the pairs' plan


def test_a_test_without_a_p_value_says_why():
    """Every question the same: no spread; fewer questions than the plan's minimum, or a
    single cluster: too few."""
    ids = [f"q{i}" for i in range(6)]
    outcomes = pd.concat(
        [
            pd.DataFrame(
                {
                    **CELL,
                    "family": "pairs",
                    "test": test,
                    "id": ids[:n],
                    "value": values[:n],
                    "null": 0.5,
                }
            )
            for test, n, values in (("idk", 6, [1.0] * 6), ("extra_option", 3, [1.0, 0.0, 1.0]))
        ],
        ignore_index=True,
    )
    table = clustered_table(outcomes, pd.Series(dtype=object), 0.95, PLAN, PLAN)
    assert table.set_index("test")["verdict"].to_dict() == {
        "idk": "no spread",
        "extra_option": "too few",
    }
    one = outcomes.assign(family="pairs")
    assert set(clustered_table(one, pd.Series("t", index=ids), 0.95, PLAN, PLAN)["verdict"]) == {
        "too few"
    }
