"""A multiple-choice question's options: which one an answer names, and the subject's true
distribution over them (exact from log-probabilities, or sampled)."""

import numpy as np
import pandas as pd
import pytest

from selfreflect.answers import sample_answers
from selfreflect.backends import Generator, Sampling
from selfreflect.backends.hf_engine import HfGenerator
from selfreflect.chat import question_chat
from selfreflect.errors import InputError
from selfreflect.mc_study.choices import (
    AMBIGUOUS,
    choice_counts,
    choice_truth,
    letter_probabilities,
    over_options,
    parse_choice,
    sampling_error,
)
from selfreflect.mc_study.scores import truth_check
from selfreflect.questions import format_mmlu, question_id
from tests.conftest import tiny_model_spec

SETTINGS = {
    "num_answers": 2,
    "temperature": 1.0,
    "top_p": 1.0,
    "max_tokens": 6,
    "choice_truth": "logprobs",
}
CHOICES = ["Berlin", "Madrid", "Paris", "Rome"]


@pytest.fixture(scope="module")
def questions():
    texts = [format_mmlu("The capital of France?", CHOICES, "geography"), "Who wrote Hamlet?"]
    return pd.DataFrame(
        {"id": [question_id(t) for t in texts], "question": texts, "choices": [CHOICES, None]}
    )


PARSE_CASES = [
    ("B", 1),
    ("b", 1),
    ("(B)", 1),
    ("( B )", 1),
    ("B.", 1),
    ("B)", 1),
    ("(c) because", 2),
    ("Answer: D.", 3),
    ("The answer is B.", 1),
    ("The answer is (C), Paris", 2),
    ("B. Madrid, not Rome", 1),  # a label decides over option texts
    ("It is Paris", 2),
    ("A city in France: Paris", 2),  # the article is no label
    ("Answer: A city in Italy, Rome", 3),
    ("no idea", None),
    ("Parisian food", None),  # option texts match as whole words
    ("E", None),
    ("Paris or Rome", AMBIGUOUS),
    ("(A) or (C)", AMBIGUOUS),
    ("The answer is A, or (D)", AMBIGUOUS),
]


@pytest.mark.parametrize(("answer", "expected"), PARSE_CASES)
def test_parse_choice(answer, expected):
    assert parse_choice(answer, CHOICES) == expected


def test_an_option_inside_another_named_option_is_not_named_too():
    choices = ["York", "New York", "Boston"]
    assert parse_choice("New York City", choices) == 1
    assert parse_choice("York, not Boston", choices) is AMBIGUOUS


def test_choice_counts_count_ambiguous_answers_apart_from_none():
    choices = ["x1", "x2"]
    counts = choice_counts(["B", "b)", "x2", "?", "x1 or x2", "(A) (B)"], choices)
    assert list(counts) == [0, 3, 1, 2]  # A, B, none, ambiguous
    assert list(over_options(counts)) == [0, 3, 3]  # an ambiguous answer names no one choice


def test_letter_probabilities_sum_a_letters_token_variants():
    first = {"B": 0.4, " B": 0.1, "B.": 0.1, "(C": 0.1, "Based": 0.1, "E": 0.05, "The": 0.05}
    probs = letter_probabilities(first, 4)  # "Based" is a word, "E" no choice of four
    np.testing.assert_allclose(probs, [0.0, 0.6, 0.1, 0.0, 0.3])
    assert letter_probabilities({}, 2).tolist() == [0.0, 0.0, 1.0]
    np.testing.assert_allclose(letter_probabilities({"B": 0.9, "F": 0.1}, 4), [0, 0.9, 0, 0, 0.1])


def test_sampling_error_is_the_expected_total_variation_of_sampled_shares():
    truth = np.array([0.5, 0.3, 0.15, 0.05])
    rng = np.random.default_rng(0)
    shares = rng.multinomial(200, truth, size=4000) / 200
    measured = 0.5 * np.abs(shares - truth).sum(axis=1).mean()
    assert sampling_error(truth, 200) == pytest.approx(measured, rel=0.05)


def test_truth_check_compares_the_truth_with_the_shares_its_answers_name():
    """Truth 0.7 / 0.3 / 0 / 0 / 0 (Berlin, Madrid, Paris, Rome, none) against answers naming
    Berlin, Madrid twice (by letter and by text) and Paris: shares 0.25 / 0.5 / 0.25 / 0, total
    variation (0.45 + 0.2 + 0.25) / 2; expected error of four draws 2 sqrt(0.21 / (8 pi))."""
    answers = ["Berlin", "The answer is B.", "Madrid", "Paris"]
    tv, expected = truth_check([0.7, 0.3, 0.0, 0.0, 0.0], answers, CHOICES)
    assert tv == pytest.approx(0.45)
    assert expected == pytest.approx(2 * np.sqrt(0.21 / (8 * np.pi)))


def test_exact_truth_agrees_across_backends_and_rides_on_the_answers(
    hf_generator, vllm_generator, questions
):
    answers = sample_answers(hf_generator, questions, SETTINGS, run_seed=1, backend="hf")
    mc, free = answers.itertuples(index=False)
    assert free.choice_probs is None and free.choice_source is None
    assert mc.choice_source == "logprobs" and mc.choice_error == 0.0
    assert len(mc.choice_probs) == len(CHOICES) + 1 and np.isclose(sum(mc.choice_probs), 1.0)
    on_vllm = choice_truth(vllm_generator, questions, SETTINGS, [1, 2])
    np.testing.assert_allclose(on_vllm["choice_probs"][0], mc.choice_probs, atol=1e-4)


def test_sampled_truth_reports_its_sampling_error(hf_generator, questions):
    settings = {**SETTINGS, "choice_truth": "samples", "choice_samples": 200}
    table = choice_truth(hf_generator, questions, settings, [1, 2])
    probs = table["choice_probs"][0]
    assert table["choice_source"][0] == "samples" and np.isclose(sum(probs), 1.0)
    assert table["choice_error"][0] == pytest.approx(sampling_error(probs, 200))
    again = choice_truth(hf_generator, questions, settings, [1, 2])
    assert again["choice_probs"][0] == probs  # seeded
    assert table["choice_probs"][1] is None
    # sampling the answers draws each question's truth from that question's own seed
    answers = sample_answers(hf_generator, questions, settings, run_seed=1, backend="hf")
    own = choice_truth(hf_generator, questions, settings, list(answers["seed"]))
    assert answers["choice_probs"][0] == own["choice_probs"][0]
    # from the seed after the answers' (4 here; 4 and 5 draw different shares), not their own
    truth = choice_truth(hf_generator, questions, settings, [4, 0])["choice_probs"][0]
    chat = question_chat(questions["question"][0])
    shares = {}
    for seed in (4, 5):
        knobs = {k: settings[k] for k in ("temperature", "top_p", "max_tokens")}
        sampling = Sampling(n=200, seed=seed, **knobs)
        [drawn] = hf_generator.chat([chat], [sampling])
        shares[seed] = (over_options(choice_counts(drawn.texts, CHOICES)) / 200).tolist()
    assert truth == shares[5] != shares[4]


def test_a_backend_without_log_probabilities_is_told_to_sample(tiny_model, questions):
    class NoLogprobs(HfGenerator):  # as the openai backend: the base class's refusal
        first_token_probs = Generator.first_token_probs

    generator = NoLogprobs(tiny_model_spec(tiny_model, backend="hf"))
    with pytest.raises(InputError, match=r"answers\.choice_truth: logprobs: .*use samples"):
        choice_truth(generator, questions, SETTINGS, [1, 2])


def test_exact_truth_needs_the_answers_to_be_sampled_from_the_models_own_distribution(
    hf_generator, questions
):
    with pytest.raises(InputError, match=r"logprobs is the distribution at temperature 1"):
        choice_truth(hf_generator, questions, {**SETTINGS, "temperature": 0.7}, [1, 2])
