"""Real text on a real tokenizer: SmolLM2-135M-Instruct's answers and chat template.

Each edge case of real model output is handled as the protocol says (SPEC §1, §3-§5): answers
cut at ``max_tokens`` are kept as they are, multi-sentence answers are split on whitespace, the
template's own default system prompt never replaces the protocol's, an end-of-turn token ends a
generation and is tokenised as it is inside a summary, and a ``cot`` output without a
``summary:`` marker is its own summary.
"""

from __future__ import annotations

import pandas as pd
import pytest

from selfreflect.backends import Sampling
from selfreflect.chat import prompts, question_chat
from selfreflect.report.alt_metrics import p_true_chat, rating_chat
from selfreflect.scoring.contexts import question_tasks
from selfreflect.scoring.prompts import masked_words
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.strategies.context import Models
from selfreflect.strategies.paper import sample_and_summarize_chat, twostep_cot_chat
from selfreflect.strategies.runner import summarize
from selfreflect.strategies.text import prompt, user_chat
from tests.conftest import model_entry

QUESTION = "Question: What is the capital of Australia?"
END_OF_TURN = "<|im_end|>"


@pytest.fixture(scope="module")
def generator(smollm2_model):
    from selfreflect.backends.hf_engine import HfGenerator

    with HfGenerator(model_entry("smollm2", smollm2_model, backend="hf")) as model:
        yield model


@pytest.fixture(scope="module")
def tokenizer(generator):
    return generator.tokenizer


@pytest.fixture(scope="module")
def fmt(generator):
    """The judge's prompt format for SmolLM2 (its family, the default fidelity)."""
    return generator.format


def _tasks(fmt, test_answers, summaries, conditioning=("Canberra.", "Sydney.")):
    return question_tasks(
        fmt, QUESTION, test_answers, list(conditioning), summaries, stopword_policy("none")
    )


def test_answers_cut_at_max_tokens_are_kept_and_scored(generator, fmt):
    sampling = Sampling(n=4, temperature=1.0, max_tokens=5, seed=3)
    [generation] = generator.chat([question_chat(QUESTION)], sampling)
    assert generation.error is None
    assert generation.completion_tokens == 4 * 5  # every answer ran to max_tokens
    assert all(text.strip() for text in generation.texts)
    words = masked_words(generation.texts, stopword_policy("none"))
    # the cut-off last word is masked like any other word
    assert {text.split()[-1] for text in generation.texts} <= {w.word for w in words}
    reference, summaries = _tasks(fmt, generation.texts, {"s": generation.texts[0]})
    assert reference.num_tasks == summaries["s"].num_tasks > 0


def test_multi_sentence_answers_split_on_whitespace(tokenizer, fmt):
    answer = "The capital is Canberra. It is not Sydney.\nMany people think so!"
    words = masked_words([answer], stopword_policy("none"))
    assert [w.word for w in words] == answer.split()
    assert words[3].masked_answer == "The capital is _ It is not Sydney. Many people think so!"
    reference, summaries = _tasks(fmt, [answer], {"s": "Canberra. Or Sydney."})
    for k, masked in enumerate(words):  # the target tokens spell exactly the masked word
        assert tokenizer.decode(reference.targets(k)) == masked.word
        assert summaries["s"].targets(k) == reference.targets(k)
    # the reference context lists each conditioning answer verbatim, newlines included
    text = tokenizer.decode(reference.sequences[0])
    assert "x_1 = 'Canberra.'\nx_2 = 'Sydney.'" in text


def test_the_templates_default_system_prompt_never_appears(tokenizer, fmt):
    system = prompts()["system"]
    default = fmt.render([{"role": "user", "content": "Hi"}])
    assert "SmolLM" in default and system not in default  # what a chat without one would get
    chats = [
        question_chat(QUESTION),
        user_chat(prompt("basic", question=QUESTION)),
        user_chat(prompt("cot", question=QUESTION)),
        sample_and_summarize_chat(QUESTION, ["Canberra.", "Sydney."]),
        twostep_cot_chat(QUESTION, "Canberra or Sydney."),
        rating_chat(QUESTION, ["Canberra."], "Canberra."),
        p_true_chat(QUESTION, ["Canberra."], "Canberra."),
    ]
    texts = [fmt.render(chat) for chat in chats]
    reference, summaries = _tasks(fmt, ["It is Canberra."], {"s": "Canberra."})
    texts += [tokenizer.decode(seq) for seq in [*reference.sequences, *summaries["s"].sequences]]
    for text in texts:
        assert text.startswith(f"<|im_start|>system\n{system}{END_OF_TURN}\n")
        assert text.count("<|im_start|>system") == 1 and "SmolLM" not in text


def test_end_of_turn_ends_a_generation_and_is_kept_inside_a_summary(generator, tokenizer, fmt):
    end = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    assert generator.model.generation_config.eos_token_id == end == tokenizer.eos_token_id
    [generation] = generator.chat([question_chat(QUESTION)], Sampling(max_tokens=200))
    assert 0 < generation.completion_tokens < 200  # stopped at the end-of-turn token
    assert END_OF_TURN not in generation.texts[0]  # special tokens are skipped
    # a summary that spells the token is rendered and tokenised as it is (SPEC §1)
    summary = f"Canberra.{END_OF_TURN}\nSydney."
    reference, summaries = _tasks(fmt, ["It is Canberra."], {"s": summary})
    sequence = summaries["s"].sequences[0]
    assert sequence.count(end) == reference.sequences[0].count(end) + 1
    assert summaries["s"].targets(0) == reference.targets(0)
    assert fmt.encode(summary).count(end) == 1


def test_cot_output_without_a_summary_line_is_the_summary(generator):
    settings = {"max_tokens": 24, "plugins": {}}
    questions = pd.DataFrame({"id": ["q"], "question": [QUESTION]})
    models = Models(lambda: generator, lambda: generator)
    config = {"seed": 1, "summaries": settings}
    table = summarize("cot", questions, models, config, "smollm2")
    [raw] = generator.chat([user_chat(prompt("cot", question=QUESTION))], Sampling(max_tokens=24))
    assert "summary:" not in raw.texts[0].lower()  # cut before the model wrote its summary
    assert table["error"].isna().all()
    assert table["summary"].iloc[0] == raw.texts[0]
