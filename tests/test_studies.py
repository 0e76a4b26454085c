"""The judge-scored report studies on the tiny model (transformers judge, no vLLM engine)."""

import numpy as np
import pandas as pd
import pytest

from selfreflect.report.studies import controlled_scores, convergence_scores, mc_scores, subsample
from selfreflect.scoring.judge import open_judge
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
    assert set(table["id"]) == {"q1", "q2"}  # the failed question has no pairs
    assert sorted(table.loc[table["id"] == "q1", "pair_type"]) == [
        "idk",
        "idk",
        "majority_only",
        "majority_only",
    ]
    assert table["error"].isna().all()
    for column, (low, high) in {
        "selfreflect": (0, 1),
        "llm_rating": (1, 5),
        "p_true": (0, 1),
        "embedding": (-1, 1),
    }.items():
        assert table[column].between(low, high).all(), column


def test_mc_scores_only_for_multiple_choice_questions(judge):
    questions = pd.DataFrame({"id": ["q1", "q2"], "choices": [None, ["x", "y"]]})
    table = mc_scores(
        judge,
        questions,
        answers_frame(),
        {"mc_temperatures": [0.5, 2.0], "mc_pseudo_count": 0.5},
        5.0,
        stopword_policy("none"),
    )
    assert table["id"].tolist() == ["q2", "q2"]
    assert table["score"].notna().all()
    # test answers B, A -> (0.5, 0.5, 0); the sharper summary leans more on B, so is farther
    assert table["w1"].iloc[0] > table["w1"].iloc[1]


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
    q1 = table[table["id"] == "q1"]
    assert set(q1["strategy"]) == {"a"}  # the failed summary is skipped
    assert sorted(q1.loc[q1["axis"] == "conditioning", "size"]) == [1, 2, 3]
    assert sorted(q1.loc[q1["axis"] == "test", "size"]) == [1, 2]  # only 2 test answers
    full = table[(table["id"] == "q1") & (table["axis"] == "conditioning") & (table["size"] == 3)]
    assert np.isfinite(full["score"]).all()


def test_subsample_is_nested_and_seeded():
    pool = list("abcdefgh")
    assert subsample(pool, 3, 7) == subsample(pool, 5, 7)[:3]
    assert sorted(subsample(pool, 8, 7)) == pool
