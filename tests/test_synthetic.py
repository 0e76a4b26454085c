"""The synthetic run's answers (selfreflect.bench.synthetic) are shaped like real ones: their
lengths are the original tool's example answers' and each question's answers are distinct texts
in a few meanings; each summary's scoring tasks are their masked words."""

import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd

from selfreflect.bench.synthetic import (
    REAL_ANSWER_WORDS,
    answer_words,
    task_lists,
    task_positions,
    vocabulary,
    write_synthetic_run,
)
from selfreflect.config import load_config
from tests.conftest import REFERENCE, REPO


def test_answer_lengths_are_the_example_answers_word_counts():
    examples = json.loads((REFERENCE / "example_test_answers.json").read_text())
    counts = [len(a.split()) for q in examples for a in q["masked_out_task_answers"]]
    assert Counter(REAL_ANSWER_WORDS) == Counter(counts)


def test_each_questions_answers_are_distinct_texts_of_real_lengths_in_a_few_meanings():
    rng = np.random.default_rng(0)
    words = vocabulary(rng)
    drawn = answer_words(rng, 200, 100)
    texts = drawn.texts(words)
    assert all(len(set(answers)) == 100 for answers in texts)
    lengths = [len(answer.split()) for answers in texts for answer in answers]
    assert set(lengths) == set(REAL_ANSWER_WORDS)
    # an answer is its meaning's words, the last its own: longer answers start as their meaning
    meanings = [len({a.split()[0] for a in answers if len(a.split()) > 1}) for answers in texts]
    assert min(meanings) == 1 and max(meanings) == 5, Counter(meanings)


def test_scoring_tasks_are_the_test_answers_masked_words_in_order():
    rng = np.random.default_rng(1)
    words = vocabulary(rng)
    test, _ = answer_words(rng, 30, 20).split(10)
    texts = test.texts(words)
    tasks = task_lists(rng, words, test).to_pylist()
    assert [len(t) for t in tasks] == list(test.tasks_per_question())
    for answers, question_tasks in zip(texts, tasks, strict=True):
        expected = [
            (a, int(p))
            for a, answer in enumerate(answers)
            for p in task_positions(len(answer.split()))
        ]
        assert [(t["answer"], t["position"]) for t in question_tasks] == expected
        assert all(answers[t["answer"]].split()[t["position"]] == t["word"] for t in question_tasks)


def test_judgements_come_a_question_at_a_time_as_the_judge_writes_them(tmp_path):
    """Each shard holds its questions' rows in question order, a question's rows together: its
    strategies' rows in the config's order, then each controlled pair's good and bad side, its
    multiple-choice and convergence rows (selfreflect.scoring.experiment.judgement_rows), so a
    merge reads it a row group at a time, as it reads the judge's."""
    config = load_config(REPO / "config" / "smoke.yaml")
    files = write_synthetic_run(config, tmp_path)
    shard = next(tmp_path / f for f in files if "judgements/shards" in str(f))
    rows = pd.read_parquet(shard, columns=["id", "kind", "strategy", "pair_type", "side"])
    runs = [question for question, _ in itertools.groupby(rows["id"])]
    assert runs == sorted(set(runs)), "a question's rows apart, or questions out of order"
    strategies = config["summaries"]["strategies"]
    for _, question in rows.groupby("id", sort=False):
        kinds = [kind for kind, _ in itertools.groupby(question["kind"])]
        assert kinds == [k for k in ("strategy", "pair", "mc", "convergence") if k in kinds]
        assert list(question.loc[question["kind"] == "strategy", "strategy"]) == strategies
        pairs = question[question["kind"] == "pair"]
        assert list(pairs["side"]) == ["good", "bad"] * (len(pairs) // 2)
        assert (pairs["pair_type"].iloc[::2].to_numpy() == pairs["pair_type"].iloc[1::2]).all()
