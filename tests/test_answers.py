"""Answer sampling: shapes, the held-out split, seeds, and both local backends."""

import pandas as pd
import pytest

from selfreflect.answers import question_seed, sample_answers, split_answers
from selfreflect.artifacts import read_table, write_table
from selfreflect.backends import Sampling
from selfreflect.chat import question_chat
from selfreflect.questions import normalize_question, question_id

SETTINGS = {"num_answers": 3, "temperature": 1.0, "top_p": 1.0, "max_tokens": 8}


@pytest.fixture(scope="module")
def questions():
    texts = [normalize_question(q) for q in ("Who wrote Hamlet", "What is the capital of France")]
    return pd.DataFrame({"id": [question_id(t) for t in texts], "question": texts})


def test_split_first_half_is_held_out():
    assert split_answers(["a", "b", "c", "d"]) == (["a", "b"], ["c", "d"])


def test_question_seed_depends_on_run_seed_and_question():
    assert question_seed(1, "a") == question_seed(1, "a")
    assert len({question_seed(1, "a"), question_seed(2, "a"), question_seed(1, "b")}) == 3
    assert 0 <= question_seed(1, "a") < 2**31
    # the derivation itself (sha256 of "seed:id"): were it changed, every run's answer sets
    # would be sampled with other seeds than the ones recorded and shipped
    assert question_seed(1, "a") == 1097006557


@pytest.mark.parametrize("backend", ["vllm", "hf"])
def test_sampling_shapes_and_determinism(request, backend, questions, tmp_path):
    generator = request.getfixturevalue(f"{backend}_generator")
    first = sample_answers(generator, questions, SETTINGS, run_seed=1, backend=backend)
    assert list(first["id"]) == list(questions["id"])
    assert all(len(a) == 3 for a in first["test_answers"])
    assert all(len(a) == 3 for a in first["conditioning_answers"])
    assert first["error"].isna().all()
    assert first["backend"].eq(backend).all()
    assert list(first["seed"]) == [question_seed(1, qid) for qid in questions["id"]]
    # a question drew its answers with the seed its row records, whatever was sampled beside it
    own = Sampling(n=6, temperature=1.0, top_p=1.0, max_tokens=8, seed=int(first["seed"][1]))
    [alone] = generator.chat([question_chat(questions["question"][1])], [own])
    assert alone.texts == [*first["test_answers"][1], *first["conditioning_answers"][1]]

    again = sample_answers(generator, questions, SETTINGS, run_seed=1, backend=backend)
    pd.testing.assert_frame_equal(first, again)
    other = sample_answers(generator, questions, SETTINGS, run_seed=2, backend=backend)
    assert list(other["test_answers"].map(list)) != list(first["test_answers"].map(list))

    write_table("answers", first, tmp_path / "answers.parquet")
    loaded = read_table("answers", tmp_path / "answers.parquet")
    assert list(loaded["test_answers"].map(list)) == list(first["test_answers"].map(list))


@pytest.mark.parametrize("near_greedy", [{"temperature": 1e-3}, {"top_p": 1e-6}])
def test_the_sampling_settings_reach_the_model(hf_generator, questions, near_greedy):
    """At T = 1 a question's answers differ; near-greedy settings make them all one."""

    def distinct(settings):
        answers = sample_answers(hf_generator, questions, settings, run_seed=1, backend="hf")
        return [len({*t, *c}) for t, c in answers[["test_answers", "conditioning_answers"]].values]

    assert max(distinct(SETTINGS)) > 1
    assert distinct({**SETTINGS, **near_greedy}) == [1] * len(questions)


def test_too_long_prompt_is_cut_or_a_recorded_failure(tiny_spec, vllm_engine, questions):
    """original (the authors') left-truncates it; corrected records a failure."""
    from selfreflect.backends.vllm_engine import VllmGenerator

    long = questions.assign(question=["Question: " + "word " * 3000 + "?", questions.question[1]])
    original = VllmGenerator(tiny_spec, llm=vllm_engine)
    result = sample_answers(original, long, SETTINGS, run_seed=1, backend="vllm")
    assert result["error"].isna().all() and len(result["test_answers"][0]) == 3
    corrected = VllmGenerator({**tiny_spec, "fidelity": "corrected"}, llm=vllm_engine)
    result = sample_answers(corrected, long, SETTINGS, run_seed=1, backend="vllm")
    assert "max_model_len" in result["error"][0]
    assert list(result["test_answers"][0]) == []
    assert pd.isna(result["error"][1]) and len(result["test_answers"][1]) == 3


def test_hf_batch_mates_do_not_change_a_prompts_samples(hf_generator):
    short, long = "Question: Who wrote Hamlet?", "Question: " + "Why " * 40
    chats = [question_chat(short), question_chat(long)]
    sampling = Sampling(n=3, temperature=1.0, max_tokens=8, seed=5)
    together = hf_generator.chat(chats, sampling)
    alone = hf_generator.chat(chats[:1], sampling)
    assert together[0].texts == alone[0].texts
    assert len(together[1].texts) == 3
