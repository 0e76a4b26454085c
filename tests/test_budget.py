"""scoring.token_budget: auto: the hf judge's tokens per forward from the memory it may take."""

from __future__ import annotations

import logging

import pytest
import torch
from transformers import Qwen2Config

from selfreflect.bench.scorer import PRESETS
from selfreflect.scoring.budget import Shape, forward_bytes, token_budget
from selfreflect.scoring.registry import open_judge

QWEN_7B = Shape.of(Qwen2Config(**PRESETS["qwen2.5-7b"]), dtype_bytes=2)
GIB = 2**30


def test_a_shape_is_read_from_the_model_config():
    assert Shape(28, 3584, 18944, 28, 4, 128, 152064, 2) == QWEN_7B


def test_a_forward_costs_more_with_more_tokens_and_a_longer_prefix():
    costs = [forward_bytes(QWEN_7B, tokens, 2048) for tokens in (1, 256, 1024, 4096)]
    assert costs == sorted(costs) and len(set(costs)) == 4
    assert forward_bytes(QWEN_7B, 1024, 8192) > forward_bytes(QWEN_7B, 1024, 2048)
    # per target, the LM head's four float32 vocabulary rows alone
    assert forward_bytes(QWEN_7B, 1, 0) >= 4 * 152064 * 4


@pytest.mark.parametrize(("free", "prefix"), [(60 * GIB, 2048), (60 * GIB, 32768), (GIB, 512)])
def test_the_budget_is_the_most_tokens_whose_forward_fits_half_the_free_memory(free, prefix):
    budget = token_budget(QWEN_7B, free, prefix)
    assert forward_bytes(QWEN_7B, budget, prefix) <= free / 2
    assert forward_bytes(QWEN_7B, budget + 1, prefix) > free / 2


def test_on_a_gpu_the_budget_is_more_than_twice_the_paper_configs_batch():
    """docs/performance.md: Qwen2.5-7B with 60 GiB free, after a prefix of all 32,768 positions,
    against 32 masked words per forward at 40 tokens each."""
    assert token_budget(QWEN_7B, 60 * GIB, 32768) > 2 * 32 * 40


def test_too_little_memory_still_gives_one_token_per_forward():
    assert token_budget(QWEN_7B, free_bytes=1024, prefix=2048) == 1


def test_an_auto_budget_judge_names_its_budget_and_scores_as_the_word_batched_one(
    tiny_spec, caplog
):
    """Only how the forwards are cut changes: the distances are the batch_size judge's."""
    from selfreflect.scoring.experiment import judge_question
    from selfreflect.scoring.prompts import QuestionAnswers
    from selfreflect.scoring.stopwords import stopword_policy
    from tests.test_grpo_reward import DATA, DEGENERATE  # one question's answers and texts

    question = DATA.iloc[0]
    answers = QuestionAnswers(question.question, question.test_answers,
                              question.conditioning_answers, [])  # fmt: skip
    scores = {}
    for budget in [None, "auto"]:
        settings = {"backend": "hf", "dtype": "auto", "batch_size": 2, "token_budget": budget}
        with (
            caplog.at_level(logging.INFO),
            open_judge({**tiny_spec, "backend": "hf"}, settings) as judge,
        ):
            if budget == "auto":
                assert isinstance(judge.token_budget, int) and judge.token_budget >= 1
                said = f"token budget auto: {judge.token_budget} tokens per forward ("
                assert any(said in record.getMessage() for record in caplog.records)
            judged = judge_question(judge, answers, DEGENERATE, 5.0, stopword_policy("none"))
            scores[budget] = torch.tensor([judged[text].score for text in DEGENERATE])
    assert torch.allclose(scores["auto"], scores[None], atol=1e-6)


def test_the_performance_page_names_a_runs_token_budget_apart_from_batch_sizes():
    from selfreflect.docs.performance import batch_sizes, by_batch_size, cut_text

    runs = [{"settings": {"batch_size": 128}}, {"settings": {"batch_size": 32}}]
    runs += [{"settings": {"batch_size": 32, "token_budget": 2824}}]
    assert batch_sizes(runs) == "32, 128 and token budget 2824"
    keys = [key for key, _ in by_batch_size(runs)]
    assert [cut_text(key, named=True) for key in keys] == [
        "batch size 32",
        "batch size 128",
        "token budget 2824",
    ]
