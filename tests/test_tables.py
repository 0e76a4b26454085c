"""Report tables from synthetic artifact tables with known answers."""

import json
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

from selfreflect.artifacts import HIGHER_IS_BETTER, ROW_KEYS
from selfreflect.config import rival_arms, teachers
from selfreflect.errors import InputError
from selfreflect.failures import ANSWERS_FAILED
from selfreflect.mc_study.table import mc_table
from selfreflect.report.catalog import human_agreement
from selfreflect.report.readers import read_ratings, read_tables
from selfreflect.report.runner import caption
from selfreflect.report.tables import (
    backend_agreement_table,
    convergence_table,
    cost_table,
    human_agreement_table,
    main_table,
    pairs_correct,
    validation_table,
)
from selfreflect.report.writers import latex_text, with_intervals, write_table_files
from selfreflect.scoring.table import SIZE_ABOVE_ANSWERS
from selfreflect.stats import bootstrap_ci, krippendorff_alpha, within_question_test
from tests.conftest import MINIMAL_CONFIG, REPO, mc_plan, report_plan

KEYS = {"dataset": "d", "subject": "s", "judge": "j"}
MAIN_PLAN = report_plan("min_questions")
PAIRS_PLAN = report_plan("min_pairs")


def scores_frame(values: dict[str, list[float | None]]) -> pd.DataFrame:
    rows = [
        {
            "id": f"q{i}",
            "strategy": strategy,
            "score": v,
            "num_tasks": 1,
            **KEYS,
            "error": None if v is not None else "failed",
        }
        for strategy, vs in values.items()
        for i, v in enumerate(vs)
    ]
    return pd.DataFrame(rows)


def test_tables_take_the_experiment_from_the_rows_whatever_the_file_name(tmp_path):
    """A scores table says what it is: renamed or moved, it lands in its own experiment's row;
    one that names no dataset (reference-format summaries) is counted, not dropped."""
    from selfreflect.artifacts import write_table

    named = scores_frame({"greedy": [0.2, 0.4]}).assign(dataset="nq", tasks=None)
    unnamed = scores_frame({"greedy": [0.3, None]}).assign(dataset=None, tasks=None)
    write_table("scores", named, tmp_path / "renamed.parquet")
    write_table("scores", unnamed, tmp_path / "moved" / "x.parquet")
    files = [tmp_path / "renamed.parquet", tmp_path / "moved" / "x.parquet"]
    table = main_table(read_tables("scores", files), "greedy", 100, 0.95, 0, MAIN_PLAN)
    assert table["dataset"].iloc[0] == "nq" and pd.isna(table["dataset"].iloc[1])
    assert table["n_scored"].tolist() == [2, 1] and table["n_failed"].tolist() == [0, 1]


def test_main_table_means_counts_and_paired_test():
    """Every strategy's mean and test cover the questions all strategies scored (issue 10
    point 11): the fourth question, failed by greedy, is excluded from the others too."""
    greedy = [0.5, 0.6, 0.7, None]
    table = main_table(
        scores_frame({"greedy": greedy, "same": greedy, "better": [0.1, 0.2, 0.3, 0.4]}),
        "greedy",
        500,
        0.95,
        0,
        MAIN_PLAN,
    ).set_index("strategy")
    assert table.loc["greedy", "mean"] == pytest.approx(0.6)
    assert table.loc["greedy", ["n_scored", "n_failed", "n_excluded"]].tolist() == [3, 1, 0]
    assert table.loc["better", ["n_scored", "n_failed", "n_excluded"]].tolist() == [3, 0, 1]
    assert table.loc["better", "mean"] == pytest.approx(0.2)
    assert table.loc["greedy", "ci_low"] <= 0.6 <= table.loc["greedy", "ci_high"]
    assert np.isnan(table.loc["greedy", "p_value"])  # the baseline is not tested against itself
    # identical inputs: zero difference, p = 1
    assert table.loc["same", ["diff", "diff_low", "diff_high", "p_value"]].tolist() == [0, 0, 0, 1]
    # paired on the 3 questions both scored: differences -0.4 each
    assert table.loc["better", "n_paired"] == 3
    assert table.loc["better", "diff"] == pytest.approx(-0.4)
    # the configured confidence: the greedy interval is the bootstrap's at 50 %
    half = main_table(scores_frame({"greedy": greedy}), "greedy", 500, 0.5, 0, MAIN_PLAN)
    ci = bootstrap_ci(np.array(greedy[:3]), confidence=0.5, n_resamples=500, seed=0)
    assert half[["ci_low", "ci_high"]].iloc[0].tolist() == pytest.approx([ci.low, ci.high])


def test_main_table_without_baseline_leaves_comparison_empty():
    table = main_table(scores_frame({"basic": [0.2, 0.4]}), "greedy", 100, 0.95, 0, MAIN_PLAN)
    assert table["n_paired"].tolist() == [0] and table["p_value"].isna().all()


def test_main_table_compares_finetuned_strategies_with_their_teacher():
    """A finetuned strategy is tested against greedy (the baseline) and its teacher; the other
    strategies have no teacher comparison."""
    scores = scores_frame(
        {"greedy": [0.5, 0.6, 0.7], "teacher": [0.2, 0.3, 0.4], "tuned": [0.3, 0.4, 0.5]}
    )
    table = main_table(scores, "greedy", 500, 0.95, 0, MAIN_PLAN, teachers={"tuned": "teacher"})
    table = table.set_index("strategy")
    assert table.loc["tuned", ["diff", "teacher"]].tolist() == [pytest.approx(-0.2), "teacher"]
    assert table.loc["tuned", "teacher_diff"] == pytest.approx(0.1)
    assert table.loc["tuned", "teacher_n_paired"] == 3
    assert 0 < table.loc["tuned", "teacher_p_value"] <= 1
    assert table.loc[["greedy", "teacher"], "teacher_n_paired"].tolist() == [0, 0]
    assert table.loc[["greedy", "teacher"], "teacher_p_value"].isna().all()
    assert "teacher" not in main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN)


def test_main_table_tests_a_claims_family_of_comparisons():
    """``versus`` (report.plan.versus, as other -> the strategy it is compared with) adds each
    other's paired comparison with the claim's strategy, Holm within the claim's family across
    the others (and only them): here 2 / 2^n and 4 / 2^n, times 2 and 1."""
    n = MAIN_PLAN.minimum + 2
    step = 0.01 * np.arange(1, n + 1)
    close = 0.5 + step
    close[0] = 0.5 - 0.001  # the smallest difference negative: W- = 1
    values = {"greedy": [0.6] * n, "sampled": [0.5] * n, "cot": 0.5 + step, "basic": close}
    scores = scores_frame({k: list(v) for k, v in values.items()})
    versus = {"cot": "sampled", "basic": "sampled"}
    table = main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN, versus=versus)
    table = table.set_index("strategy")
    assert table.loc["cot", "versus"] == "sampled" and table.loc["cot", "versus_n_paired"] == n
    assert table.loc["cot", "versus_diff"] == pytest.approx(step.mean())
    assert table.loc[["cot", "basic"], "versus_p_value"].tolist() == pytest.approx(
        [2 / 2**n, 4 / 2**n]
    )
    assert table.loc[["cot", "basic"], "versus_p_adjusted"].tolist() == pytest.approx(
        [4 / 2**n, 4 / 2**n]
    )
    assert table.loc[["cot", "basic"], "versus_verdict"].tolist() == ["worse", "worse"]
    assert table.loc[["greedy", "sampled"], "versus_p_value"].isna().all()
    assert "versus" not in main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN)
    # a reference strategy (a family of its own against the baseline) stays in the claim's
    referenced = main_table(
        scores, "greedy", 100, 0.95, 0, MAIN_PLAN, references=["basic"], versus=versus
    )
    adjusted = referenced.set_index("strategy").loc[["cot", "basic"], "versus_p_adjusted"]
    assert adjusted.tolist() == pytest.approx([4 / 2**n, 4 / 2**n])


def test_main_table_compares_each_grpo_adapter_with_the_other_methods_of_its_seed():
    """``arms`` (method -> GRPO strategy -> that method's strategy of the same seed) adds the
    ``vs_<method>`` comparisons, Holm within each method's family (here: 2 / 2^n and 4 / 2^n
    times 2 and 1); the strategies a method does not compare stay empty."""
    n = MAIN_PLAN.minimum + 2
    step = 0.01 * np.arange(1, n + 1)
    close = 0.4 - step
    close[0] = 0.4 + 0.001  # the smallest difference positive: W+ = 1
    values = {"greedy": [0.6] * n, "g0": [0.4] * n, "g1": [0.4] * n}
    values |= {"s0": 0.4 + step, "s1": 0.4 + step, "d0": 0.4 - step, "d1": close}
    scores = scores_frame({k: list(v) for k, v in values.items()})
    arms = {"sft": {"g0": "s0", "g1": "s1"}, "dpo": {"g0": "d0", "g1": "d1"}}
    table = main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN, arms=arms)
    table = table.set_index("strategy")
    assert table.loc[["g0", "g1"], "vs_sft"].tolist() == ["s0", "s1"]
    assert table.loc["g0", "vs_sft_diff"] == pytest.approx(-step.mean())
    assert table.loc[["g0", "g1"], "vs_sft_p_adjusted"].tolist() == pytest.approx([4 / 2**n] * 2)
    assert table.loc[["g0", "g1"], "vs_sft_verdict"].tolist() == ["better", "better"]
    assert table.loc[["g0", "g1"], "vs_dpo_p_value"].tolist() == pytest.approx([2 / 2**n, 4 / 2**n])
    assert table.loc[["g0", "g1"], "vs_dpo_p_adjusted"].tolist() == pytest.approx(
        [4 / 2**n, 4 / 2**n]
    )
    assert table.loc[["g0", "g1"], "vs_dpo_verdict"].tolist() == ["worse", "worse"]
    assert table.loc[["greedy", "s0", "d1"], "vs_sft_p_value"].isna().all()
    assert "vs_sft" not in main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN)
    text = caption(
        "main", table=table, baseline="greedy", confidence=0.95, plan=MAIN_PLAN, references=[]
    )
    for method in ["sft", "dpo"]:
        said = f"vs_{method}_adapter: the same for a GRPO adapter and the {method.upper()} adapter"
        assert f"{said} of its seed (vs_{method})" in text
    # as the Markdown shows it: each comparison's interval beside the adapter it compares with
    from selfreflect.report.catalog import REPORTS
    from selfreflect.report.runner import _display

    (report,) = [report for report in REPORTS if report.table == "main"]
    shown = _display(report, table.reset_index()).set_index("strategy")
    assert shown.loc["g0", "vs_sft"] == "s0"
    assert shown.loc["g0", "vs_sft_adapter"].startswith(f"{-step.mean():.3f} [")


def test_grpo_strategies_have_no_teacher_and_meet_the_other_methods_of_their_seed():
    config = {"finetune": {"teacher": "sample_and_summarize", "training": {"seed": 0}}}
    taught = ["finetuned_sft", "finetuned_sft-seed1", "finetuned_dpo-seed1"]
    grpo = ["finetuned_grpo", "finetuned_grpo-seed1", "finetuned_grpo-seed2"]
    config["summaries"] = {"strategies": ["greedy", *taught, *grpo]}
    assert list(teachers(config)) == taught
    assert rival_arms(config) == {
        "sft": {"finetuned_grpo": "finetuned_sft", "finetuned_grpo-seed1": "finetuned_sft-seed1"},
        "dpo": {"finetuned_grpo-seed1": "finetuned_dpo-seed1"},
    }


def test_main_table_corrects_the_comparisons_with_the_baseline_per_experiment():
    """Wilcoxon's exact p on n questions without ties: 2 / 2^n when every difference has one
    sign, 4 / 2^n when only the smallest differs; Holm over the three strategies tested against
    greedy multiplies the sorted p-values by 3, 2, 1. An experiment with fewer questions than
    the plan's minimum has no verdict and stays out of its family."""
    n = MAIN_PLAN.minimum + 2
    step = 0.01 * np.arange(1, n + 1)
    worse = 0.5 + step
    worse[0] = 0.5 - 0.001  # the smallest difference negative: W- = 1
    values = {"greedy": [0.5] * n, "better": 0.5 - step, "worse": worse, "same": [0.5] * n}
    enough = scores_frame({k: list(v) for k, v in values.items()})
    few = scores_frame({k: list(v[: MAIN_PLAN.minimum - 1]) for k, v in values.items()})
    scores = pd.concat([enough, few.assign(dataset="d2")], ignore_index=True)
    table = main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN).set_index(["dataset", "strategy"])
    d = table.loc["d"]
    raw = [2 / 2**n, 4 / 2**n, 1.0]
    assert d.loc[["better", "worse", "same"], "p_value"].tolist() == pytest.approx(raw)
    holm = [6 / 2**n, 8 / 2**n, 1.0]  # 3 * 2/2^n, 2 * 4/2^n, 1
    assert d.loc[["better", "worse", "same"], "p_adjusted"].tolist() == pytest.approx(holm)
    assert np.isnan(d.loc["greedy", "p_adjusted"]) and pd.isna(d.loc["greedy", "verdict"])
    for strategy, p in zip(["better", "worse", "same"], holm, strict=True):
        found = strategy if p < MAIN_PLAN.level else "not significant"
        assert d.loc[strategy, "verdict"] == found, strategy
    d2 = table.loc["d2"].drop("greedy")
    assert d2["p_value"].notna().all() and d2["p_adjusted"].isna().all()
    assert (d2["verdict"] == "too few questions").all()
    apart = main_table(scores, "greedy", 100, 0.95, 0, MAIN_PLAN, references=["better"])
    apart = apart.set_index(["dataset", "strategy"]).loc["d"]
    # a reference is a family of its own (adjusted p = p); Holm over the other two: 2, 1
    assert (
        apart.loc["better", "family"] == "better" and apart.loc["worse", "family"] == "strategies"
    )
    assert apart.loc[["better", "worse", "same"], "p_adjusted"].tolist() == pytest.approx(
        [2 / 2**n, 8 / 2**n, 1.0]
    )
    bonferroni = main_table(
        scores, "greedy", 100, 0.95, 0, replace(MAIN_PLAN, correction="bonferroni")
    )
    bonferroni = bonferroni.set_index(["dataset", "strategy"]).loc["d"]
    expected = [6 / 2**n, 12 / 2**n, 1.0]
    assert bonferroni.loc[["better", "worse", "same"], "p_adjusted"].tolist() == pytest.approx(
        expected
    )


def test_validation_table_counts_correct_rankings_per_direction():
    rows = []
    for i in range(4):
        # selfreflect: lower is better; correct for 3 of 4 pairs; ties count as wrong
        good_sr, bad_sr = (0.1, 0.5) if i < 3 else (0.5, 0.5)
        for side, sr, emb in (("good", good_sr, 0.9), ("bad", bad_sr, 0.1)):
            rows.append(
                {
                    "id": f"q{i}",
                    "pair_type": "idk",
                    "side": side,
                    "has_summary": True,
                    "selfreflect": sr,
                    "llm_rating": 3.0,
                    "embedding": emb,
                    "p_true": np.nan,
                    "error": None,
                    **KEYS,
                }
            )
    # a question without an idk pair, and one whose answers failed
    for qid, error in (("q4", "no idk pair: …"), ("q5", f"{ANSWERS_FAILED}: prompt too long")):
        for side in ("good", "bad"):
            row = {"id": qid, "pair_type": "idk", "side": side, "has_summary": False}
            rows.append({**row, "error": error, **KEYS})
    table = validation_table(pd.DataFrame(rows), 0.95, PAIRS_PLAN).set_index("metric")
    assert table.loc["selfreflect", ["n_pairs", "n_correct"]].tolist() == [4, 3]
    assert pairs_correct(table.reset_index())["pairs_correct"].tolist() == [0.75]  # SelfReflect's
    assert table.loc["selfreflect", ["n_failed", "n_excluded"]].tolist() == [1, 1]
    assert table.loc["p_true", ["n_failed", "n_excluded"]].tolist() == [5, 1]
    assert table.loc["embedding", "fraction"] == 1.0
    assert table.loc["llm_rating", "n_correct"] == 0  # all ties
    assert table.loc["p_true", "n_pairs"] == 0 and np.isnan(table.loc["p_true", "fraction"])
    low, high = table.loc["selfreflect", ["ci_low", "ci_high"]]
    assert low < 0.75 < high
    # the exact one-sided binomial test against chance: P(X >= k), X ~ B(n, 1/2)
    expected = {"selfreflect": (3, 4), "embedding": (4, 4), "llm_rating": (0, 4)}
    for metric, (k, n) in expected.items():
        scipy_p = stats.binomtest(k, n, 0.5, alternative="greater").pvalue
        assert table.loc[metric, "p_value_vs_chance"] == pytest.approx(scipy_p), metric
    assert table.loc["selfreflect", "p_value_vs_chance"] == pytest.approx(5 / 16)
    assert np.isnan(table.loc["p_true", "p_value_vs_chance"])  # no pairs: no test


def controlled_pairs(pair_type: str, correct: dict[str, list[bool]]) -> list[dict]:
    """Rows of one pair type, a good and a bad summary per question: each metric of ``correct``
    prefers the good one where it says so and ties otherwise; the others are missing."""
    rows = []
    for i in range(len(correct["selfreflect"])):
        for side in ("good", "bad"):
            row = {"id": f"q{i}", "pair_type": pair_type, "side": side, "has_summary": True}
            row |= {"error": None, **KEYS}
            for metric, higher in HIGHER_IS_BETTER.items():
                preferred = side == "good" and correct[metric][i] if metric in correct else None
                best = 1.0 if higher else 0.0
                row[metric] = np.nan if preferred is None else best if preferred else 0.5
            rows.append(row)
    return rows


def test_validation_reads_whether_each_pair_has_a_summary_not_its_text(tmp_path):
    """The validation report reads the controlled pairs' summaries only as ``has_summary``,
    file after file in the files' order, a batch at a time (their texts are most of the files)."""
    from selfreflect.artifacts import ROW_BATCH, write_table
    from selfreflect.report.catalog import REPORTS

    files = []
    for name, count in (("a", 3), ("b", ROW_BATCH + 5)):  # the second over one batch
        pairs = pd.DataFrame(controlled_pairs("idk", {"selfreflect": [True] * count}))
        made = pd.Series(np.arange(len(pairs)) % 3 != 0)
        summaries = pairs.pop("has_summary").where(made, None).map({True: "a text"})
        pairs = pairs.assign(id=name + pairs["id"], summary=summaries, error=None)
        write_table("controlled_scores", pairs, tmp_path / f"{name}.parquet")
        files.append((tmp_path / f"{name}.parquet", made))
    (validation,) = (report for report in REPORTS if report.table == "validation")
    rows = validation.read(path for path, _ in files)
    assert "summary" not in rows.columns
    assert rows["has_summary"].tolist() == [flag for _, made in files for flag in made]


def test_validation_table_corrects_per_metric_and_compares_metrics_with_mcnemar():
    """n pairs per pair type. SelfReflect ranks all idk pairs and all but one reversed pair
    correctly: binomial p 1/2^n and (n+1)/2^n, Holm over the two pair types 2/2^n and
    (n+1)/2^n. The embedding ranks no idk pair and every reversed pair correctly, the LLM
    rating ties throughout: McNemar p 2/2^n where SelfReflect alone is right n times, 4/2^n
    for n-1, 1 where the embedding alone is right once; Holm over these four. The extra_option
    pairs, fewer than the plan's minimum, get no verdict and stay out of every family."""
    n = PAIRS_PLAN.minimum
    all_of, none_of = [True] * n, [False] * n
    rows = controlled_pairs(
        "idk", {"selfreflect": all_of, "embedding": none_of, "llm_rating": none_of}
    )
    rows += controlled_pairs(
        "reversed",
        {"selfreflect": [False, *all_of[1:]], "embedding": all_of, "llm_rating": none_of},
    )
    few = all_of[1:]
    rows += controlled_pairs(
        "extra_option", {"selfreflect": few, "embedding": few, "llm_rating": few}
    )
    table = validation_table(pd.DataFrame(rows), 0.95, PAIRS_PLAN)
    table = table.set_index(["metric", "pair_type"])
    sr = table.loc["selfreflect"]
    assert sr.loc[["idk", "reversed"], "p_value_vs_chance"].tolist() == pytest.approx(
        [1 / 2**n, (n + 1) / 2**n]
    )
    holm = [2 / 2**n, (n + 1) / 2**n]
    assert sr.loc[["idk", "reversed"], "p_adjusted_vs_chance"].tolist() == pytest.approx(holm)
    emb = table.loc["embedding"]
    assert emb.loc[["idk", "reversed"], "p_adjusted_vs_chance"].tolist() == pytest.approx(
        [1.0, 2 / 2**n]
    )
    assert emb.loc["idk", "verdict_vs_chance"] == "not significant"
    for p, pair_type in zip(holm, ["idk", "reversed"], strict=True):
        found = "above chance" if p < PAIRS_PLAN.level else "not significant"
        assert sr.loc[pair_type, "verdict_vs_chance"] == found
    counts = ["n_common", "n_selfreflect_only", "n_metric_only"]
    assert emb.loc["idk", counts].tolist() == [n, n, 0]
    assert emb.loc["reversed", counts].tolist() == [n, 0, 1]
    assert table.loc[("llm_rating", "reversed"), counts].tolist() == [n, n - 1, 0]
    mcnemar = [("embedding", "idk"), ("embedding", "reversed"), ("llm_rating", "idk")]
    mcnemar += [("llm_rating", "reversed")]
    assert table.loc[mcnemar, "mcnemar_p_value"].tolist() == pytest.approx(
        [2 / 2**n, 1.0, 2 / 2**n, 4 / 2**n]
    )
    # Holm: sorted 2/2^n, 2/2^n, 4/2^n, 1 times 4, 3, 2, 1, running maximum
    holm = [8 / 2**n, 1.0, 8 / 2**n, 8 / 2**n]
    assert table.loc[mcnemar, "mcnemar_p_adjusted"].tolist() == pytest.approx(holm)
    found = ["SelfReflect better" if p < PAIRS_PLAN.level else "not significant" for p in holm]
    assert table.loc[mcnemar, "mcnemar_verdict"].tolist() == found
    assert (sr[counts] == 0).all(axis=None)  # SelfReflect is not tested against itself
    assert sr[["mcnemar_p_value", "mcnemar_p_adjusted", "mcnemar_verdict"]].isna().all(axis=None)
    extra = table.xs("extra_option", level="pair_type").drop("p_true")
    assert (
        extra[["p_value_vs_chance", "mcnemar_p_value"]].drop("selfreflect").notna().all(axis=None)
    )
    assert extra[["p_adjusted_vs_chance", "mcnemar_p_adjusted"]].isna().all(axis=None)
    assert (extra["verdict_vs_chance"] == "too few pairs").all()
    assert (extra["mcnemar_verdict"].drop("selfreflect") == "too few pairs").all()
    p_true = table.loc["p_true"]  # never scored: no test, no verdict
    assert p_true[["p_value_vs_chance", "mcnemar_p_value", "mcnemar_verdict"]].isna().all(axis=None)


MC_STATS = {"n_resamples": 200, "confidence": 0.95, "seed": 0, "plan": report_plan("min_questions")}
MC_STATS["mc_plan"] = mc_plan()
TEMPERATURES = [0.25, 0.5, 1.0, 2.0, 4.0]


def test_mc_table_rank_correlation():
    mc = pd.DataFrame(
        {
            "id": ["a"] * 4 + ["b", "c"],
            "temperature": [*TEMPERATURES[:4], 1.0, 1.0],
            "summary": ["s"] * 5 + [None],  # c: not a multiple-choice question
            "w1": [0.1, 0.2, 0.3, 0.4, np.nan, np.nan],
            "ambiguous_conditioning": [1] * 4 + [0, None],
            "ambiguous_test": [2] * 4 + [1, None],
            "choice_source": ["samples"] * 4 + ["logprobs", None],
            "choice_error": [0.02] * 4 + [0.0, None],
            "truth_tv": [0.05] * 4 + [0.4, None],
            "truth_tv_expected": [0.1] * 4 + [0.1, None],
            "score": [0.2, 0.3, 0.5, 0.9, 0.1, np.nan],
            **KEYS,
        }
    )
    row = mc_table(mc, **MC_STATS).iloc[0]
    assert row["median_rho"] == pytest.approx(1.0)
    assert row["pooled_rho"] == pytest.approx(1.0)
    counts = ["n_summaries", "n_failed", "n_questions", "n_excluded", "n_rho", "n_rho_skipped"]
    assert row[counts].tolist() == [4, 1, 1, 1, 1, 0]
    # each question's ambiguous answers count once, not once per temperature row
    assert row[["n_ambiguous_conditioning", "n_ambiguous_test"]].tolist() == [1, 3]
    # how the truths were found, and their mean sampling error (each question once)
    assert row["truth"] == "logprobs,samples" and row["truth_error"] == pytest.approx(0.01)
    # the truth check: a within its expected error (0.05 <= 0.1 + tolerance), b not (0.4): half
    # of the questions agree, under the plan's minimum share
    assert MC_STATS["mc_plan"].truth_tolerance < 0.3 < MC_STATS["mc_plan"].truth_min_share
    assert row[["n_truth_checked", "n_truth_agree"]].tolist() == [2, 1]
    assert row["truth_agree_share"] == 0.5 and row["truth_check"] == "disagrees"
    constant = mc_table(mc.assign(score=0.5), **MC_STATS).iloc[0]
    assert np.isnan(constant["median_rho"]) and np.isnan(constant["p_value"])
    assert np.isnan(constant["pooled_rho"]) and np.isnan(constant["pooled_p_value"])
    assert constant[["n_rho", "n_rho_skipped"]].tolist() == [0, 1]


def mc_frame(**columns) -> pd.DataFrame:
    """Rows of the multiple-choice study's scored summaries: ``columns`` (id, temperature, w1,
    score, ...) over the defaults of an exact truth within its expected error."""
    defaults = {"summary": "s", "ambiguous_conditioning": 0, "ambiguous_test": 0}
    defaults |= {"choice_source": "logprobs", "choice_error": 0.0}
    defaults |= {"truth_tv": 0.0, "truth_tv_expected": 0.1}
    return pd.DataFrame(defaults | columns | KEYS)


def test_the_mc_truth_check_agrees_at_the_plan_s_share_and_within_its_tolerance():
    """Five questions checked, four within their expected error (one exactly at it, with
    tolerance 0), so the share is the plan's minimum (0.8): agrees. A question without a truth
    check is not counted."""
    n = 6
    mc = mc_frame(
        id=[f"q{i}" for i in range(n)],
        temperature=1.0,
        w1=np.linspace(0.1, 0.6, n),
        score=np.linspace(0.1, 0.6, n),
        choice_source="samples",
        choice_error=[0.0] * 4 + [0.05, 0.0],
        truth_tv=[0.0, 0.05, 0.05, 0.05, 0.4, np.nan],
        truth_tv_expected=[0.0, 0.1, 0.1, 0.1, 0.1, np.nan],
    )
    plan = replace(MC_STATS["mc_plan"], truth_tolerance=0.0, truth_min_share=0.8)
    row = mc_table(mc, **{**MC_STATS, "mc_plan": plan}).iloc[0]
    assert row[["n_truth_checked", "n_truth_agree"]].tolist() == [5, 4]
    assert row["truth_agree_share"] == pytest.approx(0.8) and row["truth_check"] == "agrees"
    assert row["truth_error"] == pytest.approx(0.05 / n)  # the questions' mean sampling error


def test_mc_table_s_median_rho_interval_is_at_the_configured_confidence():
    rng = np.random.default_rng(1)
    n = 8 * len(TEMPERATURES)
    mc = mc_frame(
        id=np.repeat([f"q{q}" for q in range(8)], len(TEMPERATURES)),
        temperature=TEMPERATURES * 8,
        w1=rng.uniform(0, 1, n),
        score=rng.uniform(0, 1, n),  # rhos of every sign: an interval of some width
    )
    row = mc_table(mc, **{**MC_STATS, "confidence": 0.5}).iloc[0]
    two_sided = MC_STATS["mc_plan"].two_sided
    test = within_question_test(mc["id"], mc["score"], mc["w1"], seed=0, confidence=0.5,
                                n_resamples=200, two_sided=two_sided)  # fmt: skip
    assert test.median.low < test.median.high
    assert [row["median_rho_low"], row["median_rho_high"]] == [test.median.low, test.median.high]


def test_mc_table_within_question_order_is_detected_where_the_pooled_rho_is_not():
    """Every question's score orders its temperatures exactly as W1 does, but the questions'
    score levels run against their W1 levels: the median per-question rho is 1 with a small
    Wilcoxon p over 12 questions, the pooled rho is not 1; a question whose score is constant
    has no rho and is counted as skipped."""
    rng = np.random.default_rng(0)
    rows = []
    for q in range(13):
        w1 = np.sort(rng.uniform(0, 0.3, len(TEMPERATURES))) + q * 0.05
        score = 1.0 - q * 0.1 + w1 * 0.2 if q < 12 else np.full(w1.size, 0.4)
        for t, w, sc in zip(rng.permutation(TEMPERATURES), w1, score, strict=True):
            rows.append(
                {
                    "id": f"q{q:02d}",
                    "temperature": t,
                    "summary": "s",
                    "w1": w,
                    "score": sc,
                    "ambiguous_conditioning": q % 2,
                    "ambiguous_test": 1,
                    "choice_source": "logprobs",
                    "choice_error": 0.0,
                    "truth_tv": 0.0,
                    "truth_tv_expected": 0.1,
                    **KEYS,
                }
            )
    mc = pd.DataFrame(rows)
    row = mc_table(mc, **MC_STATS).iloc[0]
    assert row["median_rho"] == pytest.approx(1.0)
    assert row["median_rho_low"] == row["median_rho_high"] == pytest.approx(1.0)
    assert row["p_value"] == pytest.approx(0.5**12) and row["p_value"] < 0.05
    assert row[["n_questions", "n_rho", "n_rho_skipped"]].tolist() == [13, 12, 1]
    pooled = stats.spearmanr(mc["score"], mc["w1"])
    assert row["pooled_rho"] == pytest.approx(pooled.statistic) and row["pooled_rho"] < 0
    # each statistic its verdict (one test per experiment: adjusted p = p), the plan's level
    assert row["p_adjusted"] == row["p_value"] and row["verdict"] == "orders as W1"
    assert row["pooled_p_adjusted"] == pytest.approx(pooled.pvalue)
    assert row["pooled_verdict"] == ("negative" if pooled.pvalue < 0.05 else "not significant")
    # the claim is decided by the statistic the plan names
    assert row["decided_by"] == "within_question" and row["tracks_w1"] == "yes"
    pooled_plan = replace(MC_STATS["mc_plan"], statistic="pooled")
    by_pooled = mc_table(mc, **{**MC_STATS, "mc_plan": pooled_plan}).iloc[0]
    assert by_pooled["decided_by"] == "pooled" and by_pooled["tracks_w1"] == "no"
    few = mc_table(mc[mc["id"] < "q03"], **MC_STATS).iloc[0]  # 3 questions: under the minimum
    assert few["verdict"] == few["pooled_verdict"] == "too few questions"
    assert row["pooled_p_value"] == pytest.approx(pooled.pvalue)
    assert row[["n_ambiguous_conditioning", "n_ambiguous_test"]].tolist() == [6, 13]


def test_convergence_table_means_per_size():
    conv = pd.DataFrame(
        {
            "id": ["a", "b", "c", "a", "b", "c"],
            "strategy": "greedy",
            "axis": "test",
            "size": [1, 1, 1, 2, 2, 2],
            "score": [0.2, 0.4, 0.3, 0.1, None, None],
            "error": [None] * 4 + ["judge failed", f"{SIZE_ABOVE_ANSWERS}: 1 test answers"],
            **KEYS,
        }
    )
    table = convergence_table(conv, 200, 0.95, 0).set_index("size")
    assert table.loc[1, "mean"] == pytest.approx(0.3)
    assert table.loc[1, ["n_scored", "n_failed", "n_excluded"]].tolist() == [3, 0, 0]
    # a question with fewer answers than the size is no failure
    assert table.loc[2, ["n_scored", "n_failed", "n_excluded"]].tolist() == [1, 1, 1]


def test_cost_table_means_and_thinking_flag():
    summaries = pd.DataFrame(
        {
            "id": ["a", "b", "c"],
            "strategy": "basic",
            "summarizer": "m",
            "dataset": "d",
            "subject": "s",
            "summary": ["one two", "three", None],
            "prompt_tokens": [10, 20, 5],
            "completion_tokens": [4, 6, 0],
            "seconds": [1.0, 3.0, 0.5],
            "error": [None, None, "x"],
        }
    )
    row = cost_table(summaries, {"m": True}).iloc[0]
    assert row["thinking"] and (row["n_summaries"], row["n_failed"]) == (2, 1)
    assert (row["prompt_tokens"], row["completion_tokens"], row["seconds"]) == (15, 5, 2)
    assert row["summary_words"] == 1.5 and row["total_seconds"] == 4.5
    assert not cost_table(summaries, {}).iloc[0]["thinking"]  # a summariser of no config's


def ratings_frame(matrix: np.ndarray, strategies: list[str]) -> pd.DataFrame:
    """Raters x units (unit k = question k // len(strategies), strategy k % len)."""
    n = len(strategies)
    return pd.DataFrame(
        [
            {
                "question_id": f"q{k // n}",
                "strategy": strategies[k % n],
                "rater": f"r{r}",
                "rating": value,
            }
            for r, row in enumerate(matrix)
            for k, value in enumerate(row)
            if not np.isnan(value)
        ]
    )


def test_human_agreement_alpha_matches_stats():
    strategies = ["a", "b"]
    matrix = np.array([[1, 2, 3, 3, 2, 1], [1, 2, 3, 3, 2, 2], [np.nan, 3, 3, 3, 2, 1]], float)
    scores = scores_frame({"a": [0.9, 0.1, 0.5], "b": [0.1, 0.9, 0.6]})  # SelfReflect agrees
    table = human_agreement_table(ratings_frame(matrix, strategies), scores)
    alpha = table.set_index("comparison")["alpha"]
    assert alpha["raters (ratings, interval)"] == pytest.approx(krippendorff_alpha(matrix))
    assert table["n_raters"].iloc[0] == 3 and table["n_units"].iloc[0] == 6
    # every rater and SelfReflect rank b over a, a over b, a over b... except ties -> high alpha
    assert alpha["mean rater vs SelfReflect (ranks, ordinal)"] > 0.5
    # the within-question ranks by hand (1 = best: the highest rating, the lowest score; a tie
    # shares 1.5), units (q0, a), (q0, b), (q1, a), ...; the mean rater's rank is the mean
    nan = np.nan
    raters = np.array(
        [[2, 1, 1.5, 1.5, 1, 2], [2, 1, 1.5, 1.5, 1.5, 1.5], [nan, 1, 1.5, 1.5, 1, 2]]
    )
    selfreflect = np.array([2, 1, 1, 2, 1, 2])
    mean = np.array([2, 1, 1.5, 1.5, 7 / 6, 11 / 6])
    expected = {
        "raters (within-question ranks, ordinal)": raters,
        "raters + SelfReflect (ranks, ordinal)": np.vstack([raters, selfreflect]),
        "mean rater vs SelfReflect (ranks, ordinal)": np.vstack([mean, selfreflect]),
    }
    for comparison, ranks in expected.items():
        assert alpha[comparison] == pytest.approx(krippendorff_alpha(ranks, "ordinal"))
    # a strategy nobody rated changes no rank
    unrated = scores_frame({"a": [0.9, 0.1, 0.5], "b": [0.1, 0.9, 0.6], "c": [0.0, 0.0, 0.0]})
    with_c = human_agreement_table(ratings_frame(matrix, strategies), unrated)
    assert with_c.set_index("comparison")["alpha"].tolist() == pytest.approx(alpha.tolist())


def test_read_ratings_checks_the_schema(tmp_path):
    good = tmp_path / "r.csv"
    good.write_text("question_id,strategy,rater,rating\nq1,greedy,r1,4\n")
    assert read_ratings(good)["rating"].tolist() == [4]
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,strategy,rating\nq1,greedy,4\n")
    with pytest.raises(InputError, match="missing column"):
        read_ratings(bad)
    bad.write_text("question_id,strategy,rater,rating\nq1,greedy,r1,good\n")
    with pytest.raises(InputError, match="line 2: rating is not a number"):
        read_ratings(bad)
    bad.write_bytes(b"\xff\xfe,x\n")
    with pytest.raises(InputError, match=r"bad\.csv: not UTF-8 text \(invalid start byte\)"):
        read_ratings(bad)
    bad.write_text('question_id,strategy,rater,rating\nq1,greedy,r1,4\n"q2\n')
    with pytest.raises(InputError, match=r"bad\.csv: malformed CSV: .*EOF inside string"):
        read_ratings(bad)


def test_write_table_files(tmp_path):
    raw = pd.DataFrame({"strategy": ["greedy_x"], "mean": [0.5], "ci_low": [0.4], "ci_high": [0.6]})
    display = with_intervals(raw, {"score": ("mean", "ci_low", "ci_high")})
    assert display["score"].tolist() == ["0.500 [0.400, 0.600]"]
    p_values = pd.DataFrame({"p_value_vs_chance": [0.0004], "mcnemar_p_adjusted": [0.02]})
    assert with_intervals(p_values, {}).iloc[0].tolist() == ["<0.001", "0.020"]
    caption = "Mean with 95% CI; p_adjusted: Holm & co. (#2, $1, {a}, ~b, ^c, \\d)."
    files = write_table_files(raw, display, tmp_path / "t", "main", caption)
    assert [f.name for f in files] == ["main.csv", "main.md", "main.tex"]
    assert pd.read_csv(files[0])["mean"].tolist() == [0.5]
    assert files[1].read_text().startswith(f"{caption}\n\n| strategy")
    tex = files[2].read_text()
    # LaTeX's specials escaped in the caption too (a bare % ended it in a comment)
    printed = (
        r"Mean with 95\% CI; p\_adjusted: Holm \& co. (\#2, \$1, \{a\}, \textasciitilde{}b,"
        r" \textasciicircum{}c, \textbackslash{}d)."
    )
    assert f"\\caption{{{printed}}}" in tex and "greedy\\_x" in tex


def test_human_agreement_without_matching_ratings_is_undefined():
    ratings = pd.DataFrame(
        {"question_id": ["other"], "strategy": ["a"], "rater": ["r1"], "rating": [3]}
    )
    table = human_agreement_table(ratings, scores_frame({"a": [0.1, 0.2]}))
    assert table["n_units"].eq(0).all() and table["alpha"].isna().all()


def test_ratings_of_one_subject_are_compared_with_its_summaries_alone(tmp_path):
    """The probe's: with two subjects, ratings of the first one's summaries were scored against
    the second one's too (other texts), each a plausible alpha. Ratings with a subject column
    join that subject's experiments; without one, a run of several subjects is refused."""
    matrix = np.array([[1, 2, 3, 3, 2, 1], [1, 2, 3, 3, 2, 2]], float)
    ratings = ratings_frame(matrix, ["a", "b"]).assign(subject="s")
    one = scores_frame({"a": [0.9, 0.1, 0.5], "b": [0.1, 0.9, 0.6]})
    scores = pd.concat([one, one.assign(subject="other")])
    units = human_agreement_table(ratings, scores).groupby("subject")["n_units"].first()
    assert units.to_dict() == {"s": 6, "other": 0}
    path = tmp_path / "r.csv"
    ratings.drop(columns="subject").to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        human_agreement(scores, str(path))
    assert str(err.value) == (
        f"{path}: no subject column, and the scores are of several subjects' summaries (s,"
        " other); name the subject each rating's summary is of"
    )
    assert human_agreement(one, str(path))["n_units"].eq(6).all()  # one subject: all of it


def test_human_agreement_counts_rated_units_without_a_score():
    ratings = pd.DataFrame(
        {"question_id": ["q0", "q1"], "strategy": "a", "rater": "r1", "rating": [3, 4]}
    )
    scores = pd.concat(
        [
            scores_frame({"a": [0.1, None], "unrated": [None, None]}),
            scores_frame({"a": [None, None]}).assign(dataset="all_failed", score=np.nan),
        ]
    )
    table = human_agreement_table(ratings, scores).drop_duplicates("dataset").set_index("dataset")
    assert table.loc["d", ["n_units", "n_excluded"]].tolist() == [1, 1]
    assert table.loc["all_failed", ["n_units", "n_excluded"]].tolist() == [0, 2]


def test_a_table_with_nothing_to_show_says_why(tmp_path):
    """The human-agreement table of ratings that share no question with the run is skipped:
    each of its files says so in one line (no rows of zeros and dashes)."""
    import subprocess

    from selfreflect.artifacts import write_table
    from tests.conftest import REPO

    scores = tmp_path / "scores.parquet"
    write_table("scores", scores_frame({"a": [0.1, 0.2]}).assign(tasks=None), scores)
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("question_id,strategy,rater,rating\nother,a,r1,3\n")
    result = subprocess.run(
        [
            "selfreflect", "report", "human-agreement", "--config", str(REPO / "config/smoke.yaml"),
            "--ratings", str(ratings), "--out-dir", str(tmp_path / "tables"), str(scores),
        ],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    reason = f"the ratings in {ratings} rate no question and strategy this run scored"
    assert result.stderr.strip() == f"human_agreement: skipped ({reason})"
    table = tmp_path / "tables" / "human_agreement"
    assert pd.read_csv(f"{table}.csv")["skipped"].tolist() == [reason]
    assert Path(f"{table}.md").read_text().splitlines()[0] == f"Skipped: {reason}"
    assert f"\\caption{{Skipped: {latex_text(reason)}}}" in Path(f"{table}.tex").read_text()


def test_headline_metrics_are_keyed_by_what_varies_in_the_run(tmp_path):
    """`dvc metrics show` columns stay short: experiment parts that never vary are left out."""
    from selfreflect.report.runner import write_metrics

    rows = {"subject": "smollm2", "judge": "smollm2", "pairs_correct": 0.5}
    two = pd.DataFrame([{"dataset": "real", **rows}, {"dataset": "real_mmlu", **rows}])
    write_metrics(str(tmp_path / "two.json"), two, ["pairs_correct"])
    assert json.loads((tmp_path / "two.json").read_text()) == {
        "real": {"pairs_correct": 0.5},
        "real_mmlu": {"pairs_correct": 0.5},
    }
    write_metrics(str(tmp_path / "one.json"), two.iloc[:1], ["pairs_correct"])
    assert json.loads((tmp_path / "one.json").read_text()) == {"pairs_correct": 0.5}


def agreement_frame(scores: dict[str, list[float | None]], **keys: str) -> pd.DataFrame:
    """One experiment's agreement scores: per backend, its scores of (q0, a), (q0, b), (q1, a)…"""
    pairs = [("q0", "a"), ("q0", "b"), ("q1", "a"), ("q1", "b")]
    rows = [
        {
            "id": qid,
            "strategy": strategy,
            "backend": backend,
            "score": value,
            "num_tasks": 1,
            "error": None if value is not None else "failed",
            **{**KEYS, **keys},
        }
        for backend, values in scores.items()
        for (qid, strategy), value in zip(pairs, values, strict=True)
    ]
    return pd.DataFrame(rows)


def test_backend_agreement_compares_each_backend_with_the_configured_one():
    agreement = pd.concat(
        [
            agreement_frame(  # reference listed first: the configured backend is hf
                {
                    "reference": [0.5, 0.2, None, 0.3],
                    "hf": [0.5, 0.25, 0.4, None],
                    "vllm": [0.49, 0.2, 0.4, None],
                }
            ),
            agreement_frame({"hf": [0.1, 0.1, 0.1, 0.1], "vllm": [0.1] * 4}, subject="t"),
            agreement_frame({"vllm": [0.1] * 4}, subject="u"),  # hf never ran: nothing compared
        ],
        ignore_index=True,
    )
    table = backend_agreement_table(agreement, "hf")
    assert list(table.columns) == [
        "dataset", "subject", "judge", "backend",
        "n_summaries", "n_scored_by_one", "max_abs_diff", "mean_abs_diff",
    ]  # fmt: skip
    rows = {(r.subject, r.backend): r for r in table.itertuples()}
    assert list(rows) == [("s", "reference"), ("s", "vllm"), ("t", "vllm"), ("u", "vllm")]
    # (q0, a), (q0, b) both scored; (q1, a) scored by hf alone; (q1, b) by reference alone
    reference = rows["s", "reference"]
    assert (reference.n_summaries, reference.n_scored_by_one) == (2, 2)
    assert reference.max_abs_diff == pytest.approx(0.05)
    assert reference.mean_abs_diff == pytest.approx(0.025)
    vllm = rows["s", "vllm"]  # (q1, b) failed on both: neither compared nor scored by one
    assert (vllm.n_summaries, vllm.n_scored_by_one) == (3, 0)
    assert vllm.max_abs_diff == pytest.approx(0.05)
    assert vllm.mean_abs_diff == pytest.approx((0.01 + 0.05) / 3)
    assert rows["t", "vllm"].max_abs_diff == 0 and rows["t", "vllm"].n_summaries == 4
    unmatched = rows["u", "vllm"]
    assert (unmatched.n_summaries, unmatched.n_scored_by_one) == (0, 4)
    assert np.isnan(unmatched.max_abs_diff) and np.isnan(unmatched.mean_abs_diff)
    # only the configured backend: nothing to compare
    assert backend_agreement_table(agreement_frame({"hf": [0.1] * 4}), "hf").empty
    assert backend_agreement_table(agreement.iloc[:0], "hf").empty


def test_metrics_keyed_by_a_column_of_the_table_even_when_it_does_not_vary(tmp_path):
    from selfreflect.report.runner import write_metrics

    table = backend_agreement_table(agreement_frame({"hf": [0.1] * 4, "vllm": [0.2] * 4}), "hf")
    write_metrics(str(tmp_path / "m.json"), table, ["n_summaries"], by=("backend",))
    assert json.loads((tmp_path / "m.json").read_text()) == {"vllm": {"n_summaries": 4}}


def test_report_commands_caption_their_correction_and_write_adjusted_p_metrics(tmp_path):
    """The main-table and validation commands: captions name the correction and its family,
    each strategy's DVC metrics carry its adjusted p-value."""
    from click.testing import CliRunner

    from selfreflect.artifacts import write_table
    from selfreflect.cli import cli

    config = {**MINIMAL_CONFIG, "summaries": {"strategies": ["greedy", "basic"]}}
    (tmp_path / "c.yaml").write_text(json.dumps(config))
    n = MAIN_PLAN.minimum
    scores = scores_frame({"greedy": [0.5] * n, "basic": list(0.4 - 0.01 * np.arange(n))})
    write_table("scores", scores.assign(tasks=None), tmp_path / "scores.parquet")
    pairs = controlled_pairs("idk", {"selfreflect": [True] * n, "embedding": [False] * n})
    controlled = pd.DataFrame(pairs).drop(columns="has_summary").assign(summary="s", error=None)
    write_table("controlled_scores", controlled, tmp_path / "c.pq")
    common = ["--config", str(tmp_path / "c.yaml"), "--out-dir", str(tmp_path / "t")]
    common += ["--figure-dir", str(tmp_path / "f")]
    runner = CliRunner()
    main = ["report", "main-table", *common, "--metrics-dir", str(tmp_path / "m")]
    done = runner.invoke(cli, [*main, str(tmp_path / "scores.parquet")])
    assert (done.exit_code, done.stdout) == (
        0,
        f"main: table written to {tmp_path / 't'}, figure to {tmp_path / 'f'},"
        f" DVC metrics to {tmp_path / 'm'}\n",
    )
    validation = ["report", "validation", *common, "--metrics", str(tmp_path / "v.json")]
    assert runner.invoke(cli, [*validation, str(tmp_path / "c.pq")]).exit_code == 0
    table = pd.read_csv(tmp_path / "t" / "main.csv").set_index("strategy")
    metrics = json.loads((tmp_path / "m" / "basic.json").read_text())
    assert metrics["p_adjusted"] == pytest.approx(table.loc["basic", "p_adjusted"])
    assert json.loads((tmp_path / "m" / "greedy.json").read_text())["p_adjusted"] is None
    correction = MAIN_PLAN.correction.capitalize()
    caption = (tmp_path / "t" / "main.md").read_text().split("\n\n")[0]
    assert f"p_adjusted: {correction}-adjusted over the comparisons with greedy" in caption
    caption = (tmp_path / "t" / "validation.md").read_text().split("\n\n")[0]
    assert f"{correction}-adjusted over one metric's pair types" in caption
    assert f"{correction}-adjusted over all McNemar tests" in caption


# --- a row given twice ---------------------------------------------------------------------------

# each report command that reads a kind of table, and its options besides --config and the files
READERS = {
    "main-table": ("scores", ["--figure-dir", "r"]),
    "validation": ("controlled_scores", ["--figure-dir", "r"]),
    "mc-study": ("mc_scores", ["--figure-dir", "r"]),
    "convergence": ("convergence_scores", ["--figure-dir", "r"]),
    "cost-table": ("summaries", []),
    "backend-agreement": ("agreement_scores", []),
}
KEYED_KINDS = [kind for kind in ROW_KEYS if kind != "answers"]  # answers: keyed once labelled


def keyed_row(kind: str, qid: str = "q0") -> pd.DataFrame:
    """A ``kind`` table of one row: the text fields of its key (artifacts.ROW_KEYS) filled in,
    the list fields every row holds (artifacts.FILLED) empty, every other field (numbers of the
    key too) null."""
    from selfreflect.artifacts import FILLED, SCHEMAS

    fields = SCHEMAS[kind]
    row = dict.fromkeys(fields.names)
    for name in FILLED.get(kind, ()):
        if pa.types.is_list(fields.field(name).type):
            row[name] = []
    for name in ROW_KEYS[kind]:
        if pa.types.is_string(fields.field(name).type):
            row[name] = name
    return pd.DataFrame([{**row, "id": qid}])


@pytest.mark.parametrize("command", READERS)
def test_report_tables_refuse_a_row_given_in_two_files(tmp_path, monkeypatch, capsys, command):
    """`report main-table` over a folder that also holds a backup copy of greedy's scores
    averaged both (greedy's mean 0.075 became 0.325, every p-value 0.031); each report table
    now stops with one line naming the row and both files, and writes nothing."""
    from selfreflect.artifacts import write_table
    from selfreflect.cli import main

    kind, options = READERS[command]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(json.dumps(MINIMAL_CONFIG))
    write_table(kind, keyed_row(kind), tmp_path / "greedy.parquet")
    shutil.copy(tmp_path / "greedy.parquet", tmp_path / "greedy.backup.parquet")
    args = ["report", command, "--config", "c.yaml", "--out-dir", "r", *options]
    files = ["greedy.parquet", "greedy.backup.parquet"]
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args, *files])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: greedy.backup.parquet: "), lines
    assert f"{kind} row (" in lines[0] and lines[0].endswith("is also in greedy.parquet")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("score", [float("inf"), -5.0, 1.5])
def test_main_table_refuses_a_score_out_of_its_range(tmp_path, monkeypatch, capsys, score):
    """A score is a total-variation distance: one out of [0, 1] (a hand-edited or damaged
    file) stops the table with one line naming the file, field and row, writing nothing; 1
    plus float rounding passes."""
    from selfreflect.artifacts import write_table
    from selfreflect.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(json.dumps(MINIMAL_CONFIG))
    write_table("scores", keyed_row("scores").assign(score=1 + 1e-7), "rounded.parquet")
    write_table("scores", keyed_row("scores", "q1").assign(score=score), "bad.parquet")
    args = ["report", "main-table", "--config", "c.yaml", "--out-dir", "r", "--figure-dir", "r"]
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args, "rounded.parquet", "bad.parquet"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    expected = f"error: bad.parquet: field 'score' is {score} in row 0 (id q1), not in [0.0, 1.0]"
    assert lines == [expected] and not (tmp_path / "r").exists()


def test_controlled_scores_refuses_an_alternative_metric_given_twice(tmp_path, monkeypatch, capsys):
    """The pairs' alternative metrics are read with their experiment's labels, so a row given
    twice (which would double its pair's rows) stops the command with one line, writing
    nothing."""
    from selfreflect.artifacts import write_table
    from selfreflect.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(json.dumps(MINIMAL_CONFIG))
    write_table("judgements", keyed_row("judgements").assign(kind="pair"), "j.parquet")
    write_table("alt_metrics", pd.concat([keyed_row("alt_metrics")] * 2), "alt.parquet")
    args = ["report", "controlled-scores", "--config", "c.yaml", "--judgements", "j.parquet"]
    args += ["--alternatives", "alt.parquet", "--out", "out.parquet"]
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: alt.parquet: alt_metrics row ("), lines
    assert lines[0].endswith("is twice in this file") and not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("kind", KEYED_KINDS)
def test_every_reader_refuses_a_row_given_twice_in_one_file_or_two(tmp_path, kind):
    """A row's key (experiment, question and what it scores; a null key field is one value)
    given twice in one file, or in two files read together, is refused naming the row; rows
    of other questions read as before."""
    from selfreflect.artifacts import read_table, read_tables, write_table

    write_table(kind, keyed_row(kind), tmp_path / "a.parquet")
    write_table(kind, keyed_row(kind, "q1"), tmp_path / "b.parquet")
    write_table(kind, pd.concat([keyed_row(kind)] * 2), tmp_path / "twice.parquet")
    assert len(read_tables(kind, [tmp_path / "a.parquet", tmp_path / "b.parquet"])) == 2
    with pytest.raises(InputError, match=rf"twice\.parquet: {kind} row \(.*id q0.*\) is twice in"):
        read_table(kind, tmp_path / "twice.parquet")
    shutil.copy(tmp_path / "a.parquet", tmp_path / "c.parquet")
    with pytest.raises(
        InputError, match=rf"c\.parquet: {kind} row \(.*\) is also in .*a\.parquet$"
    ):
        read_tables(kind, [tmp_path / name for name in ("a.parquet", "b.parquet", "c.parquet")])


def test_an_answers_table_refuses_a_question_given_twice_in_it(tmp_path):
    """Answers name their dataset and subject in the file's metadata, not in columns: a
    question given twice in one file is refused (the judge pass crashed on it), the same id in
    two files (two datasets' answers) is not. An unreadable file of the user's is named without
    the workflow's hint."""
    from selfreflect.artifacts import read_table, write_table

    row = {"question": "Q?", "test_answers": ["a"], "conditioning_answers": ["b"]}
    row |= {"backend": "hf", "model": "m", "seed": 0, "error": None}
    one = pd.DataFrame([{"id": "q0", **row}])
    write_table("answers", one, tmp_path / "a.parquet")
    write_table("answers", one, tmp_path / "b.parquet")
    write_table("answers", pd.concat([one, one]), tmp_path / "twice.parquet")
    assert len(read_table("answers", tmp_path / "a.parquet")) == 1
    assert len(read_table("answers", tmp_path / "b.parquet")) == 1
    with pytest.raises(InputError, match=r"twice\.parquet: answers row \(id q0\) is twice in"):
        read_table("answers", tmp_path / "twice.parquet")
    # a file of the user's, not the workflow's: no rule remakes it
    (tmp_path / "text.parquet").write_text("id,question\n")
    with pytest.raises(InputError, match=r"text\.parquet: not a readable Parquet file") as err:
        read_table("answers", tmp_path / "text.parquet")
    assert "forcerun" not in str(err.value)


def test_answers_files_of_two_experiments_read_together_keep_their_rows(tmp_path):
    """Two answers files read together (two datasets' answers, each labelled only in its
    metadata) may answer the same question id: its rows are not one row given twice."""
    from selfreflect.artifacts import read_tables, write_table

    row = {"id": "q0", "question": "Q?", "test_answers": ["a"], "conditioning_answers": ["b"]}
    one = pd.DataFrame([row | {"backend": "hf", "model": "m", "seed": 0, "error": None}])
    write_table("answers", one, tmp_path / "a.parquet", {"dataset": "d", "subject": "s"})
    write_table("answers", one, tmp_path / "b.parquet", {"dataset": "e", "subject": "s"})
    both = read_tables("answers", [tmp_path / "a.parquet", tmp_path / "b.parquet"])
    assert both["id"].tolist() == ["q0", "q0"]


def test_the_paper_configs_plan_compares_sampling_with_reasoning():
    """config/config.yaml's report.plan.versus gives the main table each reasoning strategy ->
    sample_and_summarize; a run that lists not the claim's strategy has no such family, and a
    strategy (compared or reference) that a run lists not is left out."""
    from selfreflect.config import load_config
    from selfreflect.report.catalog import _main_arguments

    config = load_config(REPO / "config" / "config.yaml")
    claim = dict.fromkeys(["basic", "cot", "twostep_cot"], "sample_and_summarize")
    assert _main_arguments(config)["versus"] == claim
    assert _main_arguments(config)["references"] == ["concatenated_answers"]
    # only the strategies the run lists: a reasoning one it lists not, a reference it lists not
    config["summaries"]["strategies"] = ["greedy", "basic", "sample_and_summarize"]
    arguments = _main_arguments(config)
    assert arguments["versus"] == {"basic": "sample_and_summarize"}
    assert arguments["references"] == []
    config["summaries"]["strategies"] = ["greedy", "basic", "cot"]
    assert _main_arguments(config)["versus"] == {}


def pair_rows(right: int, wrong: int) -> pd.DataFrame:
    """Controlled idk pairs of which SelfReflect ranks ``right`` correctly, ``wrong`` not."""
    rows = []
    for i in range(right + wrong):
        good, bad = (0.1, 0.9) if i < right else (0.9, 0.1)
        for side, score in (("good", good), ("bad", bad)):
            rows.append(
                {"id": f"q{i}", "pair_type": "idk", "side": side, "has_summary": True}
                | {"selfreflect": score, "llm_rating": 3.0, "embedding": 0.5, "p_true": 0.5}
                | {"error": None, **KEYS}
            )
    return pd.DataFrame(rows)


def test_a_two_sided_plan_calls_a_pair_type_below_chance_where_one_sided_says_nothing():
    """2 of 20 pairs right: one-sided (above chance) p is P(X >= 2), not significant; two-sided
    p is P(X <= 2) + P(X >= 18) and the verdict names the reversal."""
    rows = pair_rows(2, 18)
    one = validation_table(rows, 0.95, PAIRS_PLAN).set_index("metric").loc["selfreflect"]
    two = validation_table(rows, 0.95, PAIRS_PLAN, two_sided=True)
    two = two.set_index("metric").loc["selfreflect"]
    assert one["p_value_vs_chance"] == pytest.approx(stats.binom.sf(1, 20, 0.5))
    assert one["verdict_vs_chance"] == "not significant"
    assert two["p_value_vs_chance"] == pytest.approx(2 * stats.binom.cdf(2, 20, 0.5))
    assert two["verdict_vs_chance"] == "below chance"
    high = validation_table(pair_rows(18, 2), 0.95, PAIRS_PLAN, two_sided=True)
    assert high.set_index("metric").loc["selfreflect", "verdict_vs_chance"] == "above chance"


def test_a_two_sided_plan_calls_an_mc_study_whose_scores_run_against_w1_so():
    """Every question's score orders its temperatures against W1: one-sided, not significant
    (p = 1 - 0.5^12); two-sided, 2 * 0.5^12, "orders against W1", and the claim fails."""
    rows = []
    for q in range(12):
        for t, w in zip(TEMPERATURES, np.linspace(0.1, 0.5, len(TEMPERATURES)), strict=True):
            rows.append(
                {"id": f"q{q:02d}", "temperature": t, "summary": "s", "w1": w, "score": 1 - w}
                | {"ambiguous_conditioning": 0, "ambiguous_test": 0, "choice_source": "logprobs"}
                | {"choice_error": 0.0, "truth_tv": 0.0, "truth_tv_expected": 0.1}
                | KEYS
            )
    mc = pd.DataFrame(rows)
    one = mc_table(mc, **MC_STATS).iloc[0]
    assert one["verdict"] == "not significant" and one["tracks_w1"] == "no"
    two_sided = {**MC_STATS, "mc_plan": replace(MC_STATS["mc_plan"], two_sided=True)}
    two = mc_table(mc, **two_sided).iloc[0]
    assert two["p_value"] == pytest.approx(2 * 0.5**12)
    assert two["verdict"] == "orders against W1" and two["tracks_w1"] == "no"


def test_judge_tokens_are_counted_per_judge_and_once_per_shard():
    """The probe's: two judges' tokens were added into one total; and DVC keeps the shard files
    the merged judgements record, which were counted a second time."""
    from selfreflect.report.performance import judge_tokens_table

    shard = {"kind": "judgements", "judge": "a", "shard": [0, 1], "judge_forward_tokens": 5}
    merged = {"kind": "judgements", "judge": "a", "shard": None, "shards": [shard]}
    studies = {"kind": "alt_metrics", "judge": "a", "judge_forward_tokens": 2}
    other = {"kind": "judgements", "judge": "b", "judge_forward_tokens": 7}
    table = judge_tokens_table([shard, merged, studies, other, {"kind": "answers"}])
    assert table.values.tolist() == [
        ["a", "judgements", 5],
        ["a", "alt_metrics", 2],
        ["a", "total", 7],
        ["b", "judgements", 7],
        ["b", "total", 7],
    ]


def test_the_mc_study_report_is_skipped_only_where_no_summary_was_scored():
    """One failed summary among scored ones leaves the table, counted as failed."""
    from selfreflect.report.catalog import report_for

    scores = [0.2, 0.3, np.nan, 0.9]
    mc = mc_frame(id=["a"] * 4, temperature=TEMPERATURES[:4], w1=[0.1, 0.2, 0.3, 0.4], score=scores)
    assert report_for("mc_study").build(mc, **MC_STATS)["n_failed"].tolist() == [1]
    assert report_for("mc_study").build(mc.assign(score=np.nan), **MC_STATS).empty


def test_human_agreement_keeps_the_experiments_the_ratings_do_not_rate(tmp_path):
    """Empty only where the ratings rate nothing this run scored: a subject they do not rate
    keeps its rows, with no units, beside the rated one."""
    matrix = np.array([[1, 2, 3, 3, 2, 1], [1, 2, 3, 3, 2, 2]], float)
    path = tmp_path / "r.csv"
    ratings_frame(matrix, ["a", "b"]).assign(subject="s").to_csv(path, index=False)
    one = scores_frame({"a": [0.9, 0.1, 0.5], "b": [0.1, 0.9, 0.6]})
    table = human_agreement(pd.concat([one, one.assign(subject="other")]), str(path))
    assert table.groupby("subject")["n_units"].first().to_dict() == {"s": 6, "other": 0}
