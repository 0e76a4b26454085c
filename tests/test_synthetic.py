"""The synthetic run's answers (selfreflect.bench.synthetic) are shaped like real ones: their
lengths are the original tool's example answers' and each question's answers are distinct texts
in a few meanings; each summary's scoring tasks are their masked words."""

import json
from collections import Counter

import numpy as np

from selfreflect.bench.synthetic import (
    REAL_ANSWER_WORDS,
    answer_words,
    task_lists,
    task_positions,
    vocabulary,
)
from tests.conftest import REFERENCE


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
