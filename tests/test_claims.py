"""One verdict per claim (selfreflect.claims): each judge's verdict read off the report tables,
and the plan's rule that combines judges through the primary judge; the tables' verdicts
themselves come from the adjusted p-values (selfreflect.verdicts)."""

import pandas as pd
import pytest

from selfreflect import claims
from selfreflect.verdicts import Plan, with_verdicts

NOT_CONFIRMED = "not confirmed: the primary judge's test is not significant"
AGAINST = "fails: the primary judge's verdict is against"


def tables(verdicts: dict[str, str]) -> dict[str, pd.DataFrame]:
    """Validation rows of one pair type, a judge each with its verdict against chance."""
    rows = [
        {"judge": judge, "dataset": "real", "pair_type": "idk", "metric": "selfreflect"}
        | {"n_correct": 5, "n_pairs": 10, "ci_low": 0.2, "ci_high": 0.8}
        | {"p_adjusted_vs_chance": 0.5, "verdict_vs_chance": verdict}
        for judge, verdict in verdicts.items()
    ]
    main = pd.DataFrame(columns=["judge", "dataset", "strategy", "family", "p_adjusted"])
    return {"validation": pd.DataFrame(rows), "main": main}


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ({"a": "above chance", "b": "not significant"}, "holds"),
        ({"a": "above chance", "b": "below chance"}, "fails: against it by b"),
        ({"a": "not significant", "b": "above chance"}, NOT_CONFIRMED),
        ({"a": "not significant", "b": "below chance"}, f"{NOT_CONFIRMED}; against it by b"),
        ({"a": "below chance", "b": "above chance"}, AGAINST),
    ],
)
def test_a_claim_holds_when_the_primary_judge_supports_it_and_no_other_is_against(
    verdicts, expected
):
    found = tables(verdicts)
    [claim] = claims.claims(found, {}, "real", None)
    assert claim.name == "pairs: idk"
    table = claims.verdict_table(found, [claim], list(verdicts), primary="a")
    supports = {"above chance": "supports", "below chance": "against"}
    assert table.iloc[0][list(verdicts)].tolist() == [
        supports.get(v, "neither") for v in verdicts.values()
    ]
    assert table.iloc[0]["one verdict"] == expected


def test_a_claim_holds_only_so_far_while_a_judge_of_the_plan_has_not_run():
    """A judge not yet run may still be against a claim the primary judge supports; a claim
    the primary judge does not support fails whatever the others find."""
    found = tables({"a": "above chance"})
    [claim] = claims.claims(found, {}, "real", None)
    table = claims.verdict_table(found, [claim], ["a"], primary="a", pending=["b"])
    assert table.iloc[0]["one verdict"] == "holds so far (b not yet run)"
    found = tables({"a": "not significant"})
    table = claims.verdict_table(found, [claim], ["a"], primary="a", pending=["b"])
    assert table.iloc[0]["one verdict"] == NOT_CONFIRMED


def test_without_a_primary_judge_no_verdict_is_combined_and_a_missing_record_says_so():
    found = tables({"a": "above chance"})
    [claim] = claims.claims(found, {}, "real", None)
    assert "one verdict" not in claims.verdict_table(found, [claim], ["a"], None)
    table = claims.verdict_table(found, [claim], ["a"], primary="b")
    assert table.iloc[0]["one verdict"] == "no record of the primary judge"


def test_each_strategy_tested_against_the_baseline_is_a_claim_a_failure_withholds_support():
    """The baseline (untested) and a reference strategy (a family of its own) are no claims; a
    strategy better than the baseline that failed on a question is not supported."""
    common = {"judge": "a", "dataset": "real", "diff_low": -0.2, "diff_high": -0.1}
    rows = [
        {"strategy": "greedy", "family": "strategies", "p_adjusted": None, "verdict": None},
        {"strategy": "cot", "family": "strategies", "p_adjusted": 0.01, "verdict": "better"},
        {"strategy": "basic", "family": "strategies", "p_adjusted": 0.02, "verdict": "better"},
        {"strategy": "teacher", "family": "teacher", "p_adjusted": 0.01, "verdict": "better"},
    ]
    main = pd.DataFrame([common | row | {"diff": -0.15} for row in rows])
    main["n_failed"] = [0, 0, 1, 0]
    found = {"validation": pd.DataFrame(columns=["dataset", "pair_type"]), "main": main}
    made = claims.claims(found, {}, "real", None)
    assert [claim.name for claim in made] == ["cot beats the baseline", "basic beats the baseline"]
    assert [claim.verdict(found, "a").verdict for claim in made] == ["supports", "neither"]


def control_rows(teacher: str, adapters: list[str]) -> pd.DataFrame:
    """A finetuning run's main-table rows: greedy, the teacher, SFT adapters with verdicts."""
    rows = [{"strategy": "greedy", "diff": None, "p_adjusted": None, "verdict": None}]
    rows.append({"strategy": "concatenated_answers", "diff": -0.03, "p_adjusted": 1e-5})
    rows[-1]["verdict"] = teacher
    rows += [
        {"strategy": f"finetuned_sft-seed{seed}", "diff": -0.01, "p_adjusted": 0.01, "verdict": v}
        for seed, v in enumerate(adapters)
    ]
    frame = pd.DataFrame(rows)
    frame["teacher"] = [None, None, *["concatenated_answers"] * len(adapters)]
    return frame


@pytest.mark.parametrize(
    ("teacher", "adapters", "verdict"),
    [
        ("better", ["better", "better", "not significant"], "succeeds"),
        ("better", ["better", "not significant", "worse"], "fails"),
        ("not significant", ["better", "better", "better"], "void"),
        ("worse", ["better", "better", "better"], "void"),
    ],
)
def test_the_finetuning_control_succeeds_fails_or_is_void_by_its_rule(teacher, adapters, verdict):
    rows = control_rows(teacher, adapters)
    found = claims.finetuning_control(rows, "concatenated_answers", "greedy", min_adapters=2)
    assert found.verdict == verdict
    better = adapters.count("better")
    assert f"adapters better than greedy: {better} of 3 (the rule needs 2)" in found.numbers
    assert f"concatenated_answers -0.0300 to greedy, adjusted p 1e-05: {teacher}" in found.numbers


def main_rows(*rows: dict) -> pd.DataFrame:
    """Main-table rows of judge a on dataset real (the numbers a verdict quotes filled in)."""
    numbers = {"diff": 0.0, "diff_low": 0.0, "diff_high": 0.0, "p_adjusted": 0.01}
    numbers |= {"versus_diff": 0.0, "versus_diff_low": 0.0, "versus_diff_high": 0.0}
    numbers |= {"versus_p_adjusted": 0.01, "n_failed": 0, "family": "strategies"}
    return pd.DataFrame([{"judge": "a", "dataset": "real"} | numbers | row for row in rows])


def test_a_strategy_worse_than_the_baseline_is_against_even_where_it_failed():
    found = {"main": main_rows({"strategy": "cot", "verdict": "worse", "n_failed": 1})}
    assert claims.beats_baseline(found, "a", "real", "cot").verdict == "against"


def test_the_plan_s_versus_claims_read_each_other_strategy_s_comparison():
    """``versus: {strategy: sas}``: one claim per strategy compared with sas (a row saying it is
    worse than sas supports "sas beats it"), none for the rows compared with nothing."""
    none = {"versus": None, "versus_verdict": None, "verdict": None, "p_adjusted": None}
    main = main_rows(
        {"strategy": "greedy"} | none,
        {"strategy": "sas"} | none,
        {"strategy": "cot", "versus": "sas", "versus_verdict": "worse", "verdict": None},
        {"strategy": "basic", "versus": "sas", "versus_verdict": "better", "verdict": None},
    ).assign(p_adjusted=None)
    validation = pd.DataFrame(columns=["judge", "dataset", "pair_type", "metric"])  # no pairs
    found = {"validation": validation, "main": main}
    claimed = claims.claims(found, {"versus": {"strategy": "sas"}}, "real", None)
    verdicts = [(claim.name, claim.verdict(found, "a").verdict) for claim in claimed]
    assert verdicts == [("sas beats cot", "supports"), ("sas beats basic", "against")]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"tracks_w1": "yes", "verdict": "not significant"}, "supports"),  # by the pooled rho
        ({"tracks_w1": "no", "verdict": "orders as W1"}, "neither"),  # the plan decides
        ({"tracks_w1": "no", "verdict": "orders against W1"}, "against"),
    ],
)
def test_the_mc_claim_follows_the_statistic_the_plan_decides_by(row, expected):
    numbers = {"median_rho": 0.5, "p_value": 0.01, "pooled_rho": 0.5, "pooled_p_value": 0.01}
    study = pd.DataFrame(
        [{"judge": "a", "dataset": "mc", "pooled_verdict": "positive"} | numbers | row]
    )
    assert claims.tracks_w1({"mc_study": study}, "a", "mc").verdict == expected


def test_the_mc_claim_is_made_only_where_the_mc_study_ran():
    """A multiple-choice dataset without the MC study's table (its study not run) makes no
    claim on it, and no error; with the table, the claim is made (none without the dataset)."""
    found = tables({"a": "above chance"})
    assert [c.name for c in claims.claims(found, {}, "real", "mc")] == ["pairs: idk"]
    found["mc_study"] = pd.DataFrame(columns=["judge", "dataset"])
    named = [c.name for c in claims.claims(found, {}, "real", "mc")]
    assert named == ["pairs: idk", "MC study tracks W1"]
    assert [c.name for c in claims.claims(found, {}, "real", None)] == ["pairs: idk"]


def test_the_pairs_claim_reads_selfreflect_s_row_of_the_validation_table():
    """The validation table has a row per metric: the claim is SelfReflect's."""
    found = tables({"a": "above chance"})
    other = found["validation"].assign(metric="embedding", verdict_vs_chance="below chance")
    found["validation"] = pd.concat([found["validation"], other], ignore_index=True)
    assert claims.pairs(found, "a", "real", "idk").verdict == "supports"


def test_a_verdict_needs_the_adjusted_p_below_the_level():
    """Bonferroni over two tests: p 0.025 adjusts to exactly the level, which is not below it;
    p 0.02 to 0.04, below it."""
    table = pd.DataFrame({"family": ["a", "a"], "p_value": [0.025, 0.02], "n": [10, 10]})
    plan = Plan(level=0.05, correction="bonferroni", minimum=5)
    found = pd.Series(["better", "better"])
    out = with_verdicts(table, "p_value", "n", ["family"], plan, found, "too few")
    assert out["p_adjusted"].tolist() == [0.05, 0.04]
    assert out["verdict"].tolist() == ["not significant", "better"]


def test_rows_without_a_family_key_are_a_family_of_their_own_and_get_verdicts():
    """A missing family key (NaN) is a family like any other: its tests are adjusted together
    and get verdicts, not dropped to NaN."""
    table = pd.DataFrame(
        {"family": ["a", None, None], "p_value": [0.01, 0.01, 0.02], "n": [10, 10, 10]}
    )
    plan = Plan(level=0.05, correction="bonferroni", minimum=5)
    found = pd.Series(["better"] * 3)
    out = with_verdicts(table, "p_value", "n", ["family"], plan, found, "too few")
    assert out["p_adjusted"].tolist() == [0.01, 0.02, 0.04]
    assert out["verdict"].tolist() == ["better"] * 3
