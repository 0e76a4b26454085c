"""The judge-scored report studies on the tiny model (transformers judge, no vLLM engine)."""

import pandas as pd
import pytest

from selfreflect.report.studies import (
    controlled_scores,
    convergence_cells,
    convergence_scores,
    mc_scores,
    subsample,
)
from selfreflect.scoring.judge import open_judge
from selfreflect.scoring.score import score_question
from selfreflect.scoring.stopwords import stopword_policy

SETTINGS = {"backend": "hf", "dtype": "auto", "batch_size": 8}


@pytest.fixture(scope="module")
def judge(tiny_spec):
    with open_judge({**tiny_spec, "backend": "hf"}, SETTINGS) as model:
        yield model


def answers_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["q1", "q2", "q3"],
            "question": [
                "Question: What is the capital of France?",
                "B?\nA. x\nB. y\nAnswer:",
                "Question: Who?",
            ],
            "test_answers": [["Paris is the capital", "Lyon"], ["B", "A"], ["Bob"]],
            "conditioning_answers": [["Paris", "Paris", "Lyon"], ["B", "B"], ["Bob"]],
            "error": [None, None, "failed upstream"],
        }
    )


def test_controlled_scores_every_metric(judge):
    table = controlled_scores(
        judge, answers_frame(), ["majority_only", "idk"], 5.0, stopword_policy("none")
    )
    made = table[table["summary"].notna()]
    assert sorted(made.loc[made["id"] == "q1", "pair_type"]) == [
        "idk",
        "idk",
        "majority_only",
        "majority_only",
    ]
    assert made["error"].isna().all()
    for column, (low, high) in {
        "selfreflect": (0, 1),
        "llm_rating": (1, 5),
        "p_true": (0, 1),
        "embedding": (-1, 1),
    }.items():
        assert made[column].between(low, high).all(), column
    excluded = table[table["summary"].isna()]
    assert len(table) == 3 * 2 * 2  # every question, pair type and side keeps its row
    assert excluded.set_index(["id", "pair_type"])["error"].to_dict() == {
        ("q2", "majority_only"): "no majority_only pair: a single answer group",
        ("q3", "majority_only"): "answers failed: failed upstream",
        ("q3", "idk"): "answers failed: failed upstream",
    }
    assert excluded[["selfreflect", "llm_rating", "p_true", "embedding"]].isna().all().all()


def test_mc_scores_only_for_multiple_choice_questions(judge):
    questions = pd.DataFrame({"id": ["q1", "q2", "q3"], "choices": [None, ["x", "y"], ["x"]]})
    answers = answers_frame()
    answers.at[1, "test_answers"] = ["B", "A", "x or y"]  # the last names both choices
    table = mc_scores(
        judge,
        questions,
        answers,
        {"mc_temperatures": [0.5, 2.0], "mc_pseudo_count": 0.5},
        5.0,
        stopword_policy("none"),
    )
    scored = table[table["summary"].notna()]
    assert scored["id"].tolist() == ["q2", "q2"]
    assert scored["score"].notna().all()
    # test answers B, A, ambiguous -> (1/3, 1/3, 1/3); the sharper summary leans more on B,
    # so is farther
    assert scored["w1"].iloc[0] > scored["w1"].iloc[1]
    assert scored[["ambiguous_conditioning", "ambiguous_test"]].values.tolist() == [[0, 1]] * 2
    excluded = table[table["summary"].isna()].drop_duplicates("id")
    assert excluded["error"].tolist() == [
        "not a multiple-choice question",
        "answers failed: failed upstream",
    ]


def test_convergence_scores_subsample_sizes(judge):
    summaries = pd.DataFrame(
        {
            "id": ["q1", "q1", "q2"],
            "strategy": ["a", "b", "a"],
            "summary": ["Paris", None, "B"],
            "error": [None, "x", None],
        }
    )
    settings = {"convergence_sizes": [1, 2, 3], "convergence_questions": None}
    table = convergence_scores(
        judge, answers_frame(), summaries, settings, 1, 5.0, stopword_policy("none")
    )
    assert len(table) == 3 * 2 * 2 * 3  # question x strategy x answer set x size
    q1 = table[(table["id"] == "q1") & table["score"].notna()]
    assert set(q1["strategy"]) == {"a"}
    assert sorted(q1.loc[q1["axis"] == "conditioning", "size"]) == [1, 2, 3]
    assert sorted(q1.loc[q1["axis"] == "test", "size"]) == [1, 2]  # only 2 test answers
    reasons = table.loc[table["score"].isna()].groupby(["id", "strategy"])["error"].unique()
    assert reasons["q1", "b"].tolist() == ["summary failed: x"]
    assert reasons["q1", "a"].tolist() == ["only 2 test answers"]
    assert reasons["q2", "b"].tolist() == ["no summary for this question"]
    assert reasons["q3", "a"].tolist() == ["answers failed: failed upstream"]


def test_subsample_is_nested_and_seeded():
    pool = list("abcdefgh")
    assert subsample(pool, 3, 7) == subsample(pool, 5, 7)[:3]
    assert sorted(subsample(pool, 8, 7)) == pool


def test_convergence_shares_each_context_and_scores_as_scoring_each_subsample(judge):
    """Every cell equals scoring its subsampled answers on their own (score_question), with the
    summaries' contexts and the full reference computed once: fewer judge tokens."""
    row = answers_frame().iloc[0]
    test, conditioning = list(row.test_answers), list(row.conditioning_answers)
    texts = {"a": "Paris", "b": "Mostly Paris, sometimes Lyon."}
    policy, sizes, seed = stopword_policy("none"), [1, 2, 3], 4
    before = judge.forward_tokens
    cells = convergence_cells(
        judge, row.question, test, conditioning, texts, sizes, seed, 5.0, policy
    )
    shared = judge.forward_tokens - before
    before = judge.forward_tokens
    for (axis, size), results in cells.items():
        pool = conditioning if axis == "conditioning" else test
        part = subsample(pool, size, seed)
        args = (test, part) if axis == "conditioning" else (part, conditioning)
        alone = score_question(judge, row.question, *args, texts, 5.0, policy)
        for key in texts:
            assert abs(results[key].score - alone[key].score) < 1e-6, (axis, size, key)
    assert set(cells) == {("conditioning", n) for n in sizes} | {("test", 1), ("test", 2)}
    assert shared < (judge.forward_tokens - before) / 2
