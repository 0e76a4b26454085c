"""The benchmark's science, asserted on the science run's records (docs/science/<judge>/,
kept by ``selfreflect bench science-record`` after each judge's run of config/science.yaml):

    pytest -m science

Every assertion is on a verdict the report drew by the analysis plan in the config
(``report.plan``: level, correction within each family, minimum pairs and questions, the MC
study's deciding statistic and truth check); no threshold lives here. The claims: SelfReflect
ranks the better controlled summary first for every pair type; it tracks the true distance in
the multiple-choice study, whose first-token truth agrees with the sampled answers; summaries
written from samples (sample_and_summarize, and the samples themselves) beat greedy; the
judge's backends agree. Where the run showed a claim failing for a judge, the case is a strict
expected failure citing the record, so it fails the day the judge passes. docs/science.md
shows the same records.

The confirmatory run's records (docs/science-confirm/, config/confirm.yaml) are asserted as its
plan decides them: one verdict per claim across its judges (selfreflect.claims).
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from selfreflect import claims
from selfreflect.bench.science_record import read_records
from selfreflect.config import load_config
from tests.conftest import REPO

pytestmark = pytest.mark.science

CONFIG = load_config(REPO / "config" / "science.yaml")
RECORDS = REPO / "docs" / "science"
JUDGES = CONFIG["judges"]
PAIR_TYPES = CONFIG["report"]["pair_types"]
DATASETS = FREE_FORM, MULTIPLE_CHOICE = "real", "real_mmlu"
FROM_SAMPLES = ["sample_and_summarize", "concatenated_answers"]
# claims the recorded run showed failing (docs/science/<judge>/, recorded 2026-11-28: 100
# free-form questions at N = 8): (test, judge, case); each reason is read from the record
EXPECTED_FAILURES = {
    ("pairs", "smollm2", "no_likelihoods"),
    ("pairs", "smollm2", "reversed"),
    ("strategies", "smollm2", "sample_and_summarize"),
    ("strategies", "gemma-3-270m", "sample_and_summarize"),
    ("pairs", "qwen2.5-coder-0.5b", "no_likelihoods"),
    ("pairs", "qwen2.5-coder-0.5b", "reversed"),
    ("mc", "qwen2.5-coder-0.5b", ""),
    ("strategies", "qwen2.5-coder-0.5b", "sample_and_summarize"),
}


def table(judge: str, name: str) -> pd.DataFrame:
    path = RECORDS / judge / f"{name}.csv"
    if not path.is_file():
        pytest.fail(f"{path} is missing: run the science workflow for {judge} and record it")
    return pd.read_csv(path)


def records(judge: str) -> dict[str, pd.DataFrame]:
    """The judge's record's tables (a missing main or validation table fails the test)."""
    return {name: table(judge, name) for name in ("main", "validation", "mc_study")}


def pairs_claim(judge: str, pair_type: str) -> tuple[bool, str]:
    """SelfReflect ranks the better summary of ``pair_type``'s pairs first: the record's
    verdict, and its numbers (:func:`selfreflect.claims.pairs`)."""
    found = claims.pairs(records(judge), judge, FREE_FORM, pair_type)
    return found.verdict == claims.SUPPORTS, found.numbers


def mc_claim(judge: str, _: str) -> tuple[bool, str]:
    """SelfReflect tracks the true distance in the multiple-choice study."""
    found = claims.tracks_w1(records(judge), judge, MULTIPLE_CHOICE)
    return found.verdict == claims.SUPPORTS, found.numbers


def truth_claim(judge: str, _: str) -> tuple[bool, str]:
    """The multiple-choice study's first-token truth agrees with the sampled answers."""
    [row] = table(judge, "mc_study").query("dataset == @MULTIPLE_CHOICE").itertuples()
    return row.truth_check == "agrees", f"{row.n_truth_agree}/{row.n_truth_checked} agree"


def strategies_claim(judge: str, strategy: str) -> tuple[bool, str]:
    """``strategy``, written from samples, beats greedy (lower is better), scored everywhere."""
    found = claims.beats_baseline(records(judge), judge, FREE_FORM, strategy)
    return found.verdict == claims.SUPPORTS, found.numbers


CLAIMS = {"pairs": pairs_claim, "mc": mc_claim, "truth": truth_claim}
CLAIMS |= {"strategies": strategies_claim}


def case(test: str, judge: str, label: str = ""):
    """A parameter, marked as a strict expected failure where the recorded run showed one (a
    failed assertion, not an error such as a missing row), its reason the record's numbers."""
    marks = []
    if (test, judge, label) in EXPECTED_FAILURES:
        reason = f"recorded: {CLAIMS[test](judge, label)[1]}"
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)]
    return pytest.param(judge, label, marks=marks, id=f"{judge}-{label}" if label else judge)


@pytest.mark.parametrize("judge", JUDGES)
def test_each_record_was_made_under_the_configs_plan(judge):
    made = json.loads((RECORDS / judge / "record.json").read_text(encoding="utf-8"))
    assert made["plan"] == CONFIG["report"]["plan"]
    assert made["answers"][FREE_FORM] == CONFIG["answers"]["num_answers"]


@pytest.mark.parametrize(
    ("judge", "pair_type"), [case("pairs", j, t) for j in JUDGES for t in PAIR_TYPES]
)
def test_selfreflect_ranks_the_better_controlled_summary_first(judge, pair_type):
    passed, numbers = pairs_claim(judge, pair_type)
    assert passed, numbers


@pytest.mark.parametrize(("judge", "_"), [case("mc", j) for j in JUDGES])
def test_mc_selfreflect_tracks_the_true_distance(judge, _):
    [row] = table(judge, "mc_study").query("dataset == @MULTIPLE_CHOICE").itertuples()
    assert row.decided_by == CONFIG["report"]["plan"]["mc_statistic"]
    passed, numbers = mc_claim(judge, "")
    assert passed, numbers


@pytest.mark.parametrize(("judge", "_"), [case("truth", j) for j in JUDGES])
def test_mc_first_token_truth_agrees_with_the_sampled_answers(judge, _):
    [row] = table(judge, "mc_study").query("dataset == @MULTIPLE_CHOICE").itertuples()
    assert row.truth == "logprobs"
    passed, numbers = truth_claim(judge, "")
    assert passed, numbers


@pytest.mark.parametrize(
    ("judge", "strategy"), [case("strategies", j, s) for j in JUDGES for s in FROM_SAMPLES]
)
def test_summaries_from_samples_beat_greedy(judge, strategy):
    passed, numbers = strategies_claim(judge, strategy)
    assert passed, numbers


@pytest.mark.parametrize("judge", JUDGES)
def test_the_judges_backends_agree(judge):
    agreement = table(judge, "backend_agreement")
    assert set(agreement["backend"]) >= {"reference"}
    assert (agreement["n_summaries"] > 0).all()
    assert (agreement["max_abs_diff"] < 1e-4).all(), agreement.to_string()


# The confirmatory run (config/confirm.yaml, docs/science-confirm/): each claim's one verdict by
# the plan's rule (its primary judge supports it and no other recorded judge is against it),
# provisional while a judge of the plan has no record yet
CONFIRM = load_config(REPO / "config" / "confirm.yaml")
CONFIRM_PROVENANCE, CONFIRM_TABLES = read_records(REPO / "docs" / "science-confirm", CONFIRM)
CONFIRM_PENDING = [judge for judge in CONFIRM["judges"] if judge not in CONFIRM_PROVENANCE]
CONFIRM_CLAIMS = claims.claims(CONFIRM_TABLES, CONFIRM["report"]["plan"], *DATASETS)
# claims the confirmatory records showed failing or not confirmed (SmolLM2 and Gemma 3 270M,
# recorded 2026-12-04); each reason is the records' one verdict
CONFIRM_FAILURES = {
    "pairs: no_likelihoods",
    "pairs: reversed",
    "basic beats the baseline",
    "cot beats the baseline",
    "twostep_cot beats the baseline",
    "sample_and_summarize beats the baseline",
    "sample_and_summarize beats basic",
    "sample_and_summarize beats twostep_cot",
}


def one_verdict(claim: claims.Claim) -> str:
    """The claim's one verdict across the confirmatory run's recorded judges."""
    [verdict] = claims.verdict_table(
        CONFIRM_TABLES,
        [claim],
        list(CONFIRM_PROVENANCE),
        CONFIRM["report"]["plan"]["primary_judge"],
        CONFIRM_PENDING,
    )["one verdict"]
    return verdict


def confirm_case(claim: claims.Claim):
    """A claim of the confirmatory run, a strict expected failure where its records showed one."""
    marks = []
    if claim.name in CONFIRM_FAILURES:
        reason = f"recorded: {one_verdict(claim)}"
        marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)]
    return pytest.param(claim, marks=marks, id=claim.name)


def test_the_confirmatory_records_name_a_plan_committed_before_their_data():
    """(read_records refuses a record made under another plan; tests/test_plan_history.py
    checks each plan commit against the repository.)"""
    for judge, made in CONFIRM_PROVENANCE.items():
        assert made["plan_commit"], f"{judge}: its data came before its plan"


@pytest.mark.parametrize("claim", [confirm_case(claim) for claim in CONFIRM_CLAIMS])
def test_each_claim_holds_in_the_confirmatory_run(claim):
    verdict = one_verdict(claim)
    assert verdict.startswith("holds"), verdict


@pytest.mark.parametrize("judge", CONFIRM["judges"])
def test_every_judge_of_the_confirmatory_plan_is_recorded(judge):
    if judge in CONFIRM_PENDING:
        pytest.skip(f"{judge} has not judged the confirmatory run yet: its claims hold so far")
