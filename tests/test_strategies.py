"""Every strategy on the tiny model: prompts sent, decoding, costs, thinking mode, isolation."""

import shutil

import pandas as pd
import pytest

from selfreflect.answers import sample_answers
from selfreflect.backends import Generator
from selfreflect.config import validate_config
from selfreflect.questions import question_id
from selfreflect.strategies.context import Models
from selfreflect.strategies.paper import sample_and_summarize_chat, twostep_cot_chat
from selfreflect.strategies.registry import builtin_names
from selfreflect.strategies.runner import fresh_seed, summarize
from tests.test_strategies_prompts import GOLDEN, NO_THINKING, QUESTION

pytestmark = pytest.mark.vllm

PAPER = ["greedy", "basic", "cot", "sample_and_summarize", "concatenated_answers", "twostep_cot"]
RELATED = [
    "cluster_and_verbalize",
    "cluster_and_verbalize_llm",
    "sayself_rationale",
    "verbalized_confidence",
]
NO_SUMMARISER = {"concatenated_answers", "cluster_and_verbalize"}
QUESTIONS = [QUESTION, "Question: Who wrote Hamlet?", "Question: What is 2 + 2?"]


class Recording(Generator):
    """A real generator that also keeps every call: (prompts, samplings, generations)."""

    def __init__(self, inner: Generator) -> None:
        self.inner = inner
        self.name = inner.name
        self.tokenizer = inner.tokenizer
        self.format = inner.format
        self.max_model_len = inner.max_model_len
        self.calls = []

    def generate(self, prompts, sampling):
        generations = self.inner.generate(prompts, sampling)
        self.calls.append((prompts, sampling, generations))
        return generations


def summaries_config(**summaries) -> dict:
    """A validated config whose ``summaries`` section is small enough for the tiny model (the
    main table's baseline: its first strategy)."""
    settings = {"max_tokens": 12, "num_fresh_answers": 4, "fresh_max_tokens": 8}
    settings["cluster"] = {"embedder": "string"}
    strategies = summaries.get("strategies")
    return validate_config(
        {
            "models": {"tiny": {"path": "unused"}},
            "subjects": ["tiny"],
            "judges": ["tiny"],
            "datasets": {"smoke": {"source": "local", "path": "x.jsonl"}},
            "summaries": {**settings, **summaries},
            "report": {"baseline": strategies[0]} if strategies else {},
        }
    )


def questions_table(questions=QUESTIONS) -> pd.DataFrame:
    return pd.DataFrame({"id": [question_id(q) for q in questions], "question": questions})


def run(strategy, generator, config=None, questions=None, thinking=False, subject=None):
    models = Models(lambda: generator, lambda: subject or generator, thinking)
    config = config or summaries_config()
    return summarize(strategy, questions_table(questions or QUESTIONS), models, config, "tiny")


def test_builtin_strategies():
    assert builtin_names() == [*PAPER, *RELATED, "finetuned_sft", "finetuned_dpo", "finetuned_grpo"]


@pytest.mark.parametrize("strategy", PAPER + RELATED)
def test_strategy_summarises_every_question(vllm_generator, strategy):
    summarizer, subject = Recording(vllm_generator), Recording(vllm_generator)
    table = run(strategy, summarizer, subject=subject)
    assert list(table["question"]) == QUESTIONS
    assert table["error"].isna().all(), table["error"].tolist()
    assert table["summary"].map(lambda s: isinstance(s, str)).all()
    assert (table["strategy"] == strategy).all() and (table["summarizer"] == "tiny").all()
    assert (table["prompt_tokens"] > 0).all() and (table["completion_tokens"] > 0).all()
    assert (table["seconds"] > 0).all()
    assert bool(summarizer.calls) == (strategy not in NO_SUMMARISER)
    for _, samplings, _ in summarizer.calls:
        assert all(s.temperature == 0 and s.max_tokens == 12 and s.stop == () for s in samplings)


def test_concatenated_answers_is_the_fresh_block(vllm_generator):
    subject = Recording(vllm_generator)
    table = run("concatenated_answers", vllm_generator, subject=subject)
    ((prompts, samplings, generations),) = subject.calls
    assert prompts[0] == GOLDEN["greedy"] + NO_THINKING
    seeds = [fresh_seed(1, question_id(q)) for q in QUESTIONS]
    assert [(s.n, s.temperature, s.max_tokens, s.seed) for s in samplings] == [
        (4, 1.0, 8, seed) for seed in seeds
    ]
    expected = ["\n".join(f"x_{i} = '{a}'" for i, a in enumerate(g.texts, 1)) for g in generations]
    assert list(table["summary"]) == expected
    assert list(table["completion_tokens"]) == [g.completion_tokens for g in generations]


@pytest.mark.parametrize("strategy", ["greedy", "basic", "cot"])
def test_one_step_strategies_send_golden_prompts(vllm_generator, strategy):
    recording = Recording(vllm_generator)
    run(strategy, recording, questions=[QUESTION])
    assert [prompts for prompts, _, _ in recording.calls] == [[GOLDEN[strategy] + NO_THINKING]]


def test_cot_keeps_the_summary_line(vllm_generator):
    recording = Recording(vllm_generator)
    table = run("cot", recording, questions=[QUESTION])
    output = recording.calls[0][2][0].texts[0]
    marker = output.lower().find("summary:")
    expected = output if marker < 0 else output[marker + 8 :].lstrip().split("\n")[0]
    assert table["summary"][0] == expected


def test_sample_and_summarize_prompts_the_fresh_answers(vllm_generator):
    recording = Recording(vllm_generator)
    run("sample_and_summarize", recording, questions=[QUESTION])
    (fresh, summary) = recording.calls
    answers = fresh[2][0].texts
    assert len(answers) == 4
    expected = vllm_generator.format.render(sample_and_summarize_chat(QUESTION, answers))
    assert summary[0] == [expected]


def test_twostep_cot_continues_the_brainstorm(vllm_generator):
    recording = Recording(vllm_generator)
    table = run("twostep_cot", recording, questions=[QUESTION])
    (step1, step2) = recording.calls
    assert step1[0] == [GOLDEN["twostep_cot"] + NO_THINKING]
    analysis = step1[2][0].texts[0]
    assert step2[0] == [vllm_generator.format.render(twostep_cot_chat(QUESTION, analysis))]
    assert table["summary"][0] == step2[2][0].texts[0]
    assert table["prompt_tokens"][0] == step1[2][0].prompt_tokens + step2[2][0].prompt_tokens


@pytest.mark.parametrize("strategy", ["greedy", "basic", "twostep_cot"])
def test_thinking_summariser(vllm_generator, strategy):
    """In thinking mode every strategy samples at 0.6/0.95/20 with thinking on, and the
    reasoning is removed as the authors do (one "</think>\n\n", else the whole text)."""
    recording = Recording(vllm_generator)
    table = run(strategy, recording, questions=[QUESTION], thinking=True)
    prompts = recording.calls[0][0]
    if strategy != "twostep_cot":
        assert prompts == [GOLDEN[strategy]]  # enable_thinking=True: no empty reasoning block
    for _, samplings, _ in recording.calls:
        assert {(s.temperature, s.top_p, s.top_k) for s in samplings} == {(0.6, 0.95, 20)}
    text = recording.calls[-1][2][0].texts[0]
    parts = text.split("</think>\n\n")
    assert table["summary"][0] == (parts[1] if len(parts) == 2 else text)


def test_long_prompt_is_cut_or_fails_by_fidelity(vllm_generator, tiny_spec, vllm_engine):
    """original left-truncates a prompt to max_model_len - max_tokens - 1 tokens; corrected
    fails its question and keeps its row."""
    from selfreflect.backends.vllm_engine import VllmGenerator

    long_question = "Question: " + "why " * 3000 + "?"
    recording = Recording(vllm_generator)
    table = run("greedy", recording, questions=[QUESTION, long_question])
    assert table["error"].isna().all()
    assert recording.calls[0][2][1].prompt_tokens == 2048 - 12 - 1
    corrected = VllmGenerator({**tiny_spec, "fidelity": "corrected"}, llm=vllm_engine)
    table = run("twostep_cot", corrected, questions=[QUESTION, long_question])
    assert table["error"].isna().tolist() == [True, False]
    assert "max_model_len" in table["error"][1] and table["summary"][1] is None


def test_fresh_answers_are_not_the_held_out_answers(vllm_generator):
    """Fresh answers use their own seeds: with the answers' seeds they would repeat them."""
    questions = questions_table()
    settings = {"num_answers": 2, "temperature": 1.0, "top_p": 1.0, "max_tokens": 8}
    answers = sample_answers(vllm_generator, questions, settings, 1, "vllm")
    again = sample_answers(vllm_generator, questions, settings, 1, "vllm")
    assert again["test_answers"].map(list).tolist() == answers["test_answers"].map(list).tolist()
    subject = Recording(vllm_generator)
    run("concatenated_answers", vllm_generator, subject=subject)
    fresh = [generation.texts for generation in subject.calls[0][2]]
    for texts, test in zip(fresh, answers["test_answers"], strict=True):
        assert not set(texts) & set(test)


def test_base_model_summaries_stop_at_period(tiny_model, tmp_path):
    """Without a chat template, contents are joined and summaries also stop at '. '."""
    from selfreflect.backends.hf_engine import HfGenerator
    from tests.conftest import tiny_model_spec

    base = tmp_path / "base"
    shutil.copytree(tiny_model, base)
    (base / "chat_template.jinja").unlink()
    recording = Recording(HfGenerator(tiny_model_spec(base, backend="hf")))
    assert not recording.format.has_chat_template
    table = run("sample_and_summarize", recording, questions=[QUESTION])
    fresh, (prompts, samplings, _) = recording.calls
    assert fresh[1][0].stop == (". ",)
    assert prompts[0].startswith(
        "You are a friendly chatbot who always responds with short and concise answers.\n\n"
        "Below, you are given 4 individual answers to the question 'Question: What is the"
        " capital of Australia?'"
    )
    assert samplings[0].stop == (". ",)
    assert ". " not in table["summary"][0]
