"""The benchmark's science on a real instruct model: SmolLM2-135M-Instruct as subject, summariser
and judge, answers sampled on one vLLM engine, on CI-sized fact and multiple-choice questions.

scripts/science_evidence.py measures the same quantities (tests 1-3) with the same functions
into docs/science.md. Two properties do not hold on a 135M model (docs/science.md): they are
strict xfails, so the run fails the day they start to hold and the marker must go. The module
takes about 22 min on 2 CPU cores, a third of CI's budget, so it runs on request:
pytest -m science.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from selfreflect.scoring.judge import open_judge
from tests import science_utils as science

pytestmark = [pytest.mark.vllm, pytest.mark.science]

NAME = "smollm2"
SIZES = science.Sizes()
JUDGE = {"dtype": "auto", "batch_size": 32}


@pytest.fixture(scope="module")
def config(smollm2_model):
    return science.config(NAME, str(smollm2_model), SIZES)


@pytest.fixture(scope="module")
def spec(config):
    return {"name": NAME, **config["models"][NAME]}


@pytest.fixture(scope="module")
def engine(spec):
    """One engine for sampling, summaries and the vllm judge (full logprobs, prefix cache)."""
    from vllm import LLM

    from selfreflect.backends.vllm_engine import engine_kwargs

    llm = LLM(**engine_kwargs(spec, max_logprobs=-1, enable_prefix_caching=True))
    yield llm
    del llm


@pytest.fixture(scope="module")
def generator(spec, engine):
    from selfreflect.backends.vllm_engine import VllmGenerator

    return VllmGenerator(spec, llm=engine)


@pytest.fixture(scope="module")
def judge(spec):
    with open_judge(spec, {"backend": "hf", **JUDGE}) as model:
        yield model


@pytest.fixture(scope="module")
def facts():
    return science.fact_questions()


@pytest.fixture(scope="module")
def fact_answers(generator, facts):
    return science.answers(generator, facts, SIZES.num_answers, SIZES.max_tokens)


@pytest.fixture(scope="module")
def fact_summaries(generator, facts, config):
    return science.summaries(generator, facts, ["greedy", "concatenated_answers"], config)


@pytest.fixture(scope="module")
def fact_scores(judge, fact_answers, fact_summaries):
    return science.scores(judge, fact_answers, fact_summaries)


def test_real_answers_are_sampled_for_every_question(fact_answers, fact_summaries):
    assert fact_answers["error"].isna().all() and fact_summaries["error"].isna().all()
    assert all(len(a) == SIZES.num_answers for a in fact_answers["test_answers"])
    distinct = [
        len(set(a) | set(c))
        for a, c in fact_answers[["test_answers", "conditioning_answers"]].itertuples(index=False)
    ]
    assert np.mean(distinct) > 1  # sampled at T=1: real variation


@pytest.fixture(scope="module")
def controlled(judge, fact_answers):
    table = science.controlled_fractions(judge, fact_answers)
    return table[table["metric"] == "selfreflect"].set_index("pair_type")


# SmolLM2's answers to a fact question are mostly distinct, often incoherent sentences: a
# foreign answer added to five of them moves the score by ~1e-3, and on 3 of 12 questions the
# wrong way (9/12 measured; docs/science.md).
SUBJECT_TOO_INCOHERENT = pytest.mark.xfail(
    strict=True, reason="SmolLM2's answers: 9/12 extra_option pairs ranked right, not 90 %"
)


@pytest.mark.parametrize(
    "pair_type",
    [
        pytest.param(t, marks=SUBJECT_TOO_INCOHERENT) if t == "extra_option" else t
        for t in science.PAIR_TYPES
    ],
)
def test_selfreflect_ranks_the_better_controlled_summary_first(controlled, fact_answers, pair_type):
    row = controlled.loc[pair_type]
    assert row["n_pairs"] >= len(fact_answers) // 2, pair_type  # most questions have one
    assert row["fraction"] >= 0.9, f"{pair_type}: {row['n_correct']}/{row['n_pairs']}"


# The stated percentages move SmolLM2's (and Gemma 3 270M's) score by ~1e-3 within a question,
# less than the questions differ: rho 0.05, p 0.75 measured (docs/science.md).
@pytest.mark.xfail(strict=True, reason="135M judge barely reads stated percentages: rho 0.05")
def test_mc_selfreflect_tracks_the_true_wasserstein_distance(judge, generator):
    questions = science.mc_questions()
    answers = science.answers(generator, questions, SIZES.mc_num_answers, SIZES.mc_max_tokens)
    table, rho, p = science.mc_correlation(judge, questions, answers, SIZES)
    assert table["score"].notna().all()
    assert rho > 0 and p < 0.05, f"Spearman rho {rho:.3f}, p {p:.3g}"


def test_concatenated_answers_beat_greedy(fact_scores):
    result = science.strategy_comparison(fact_scores, "concatenated_answers", "greedy")
    assert result["n"] == fact_scores["id"].nunique()  # every question scored
    assert result["diff"] < 0 and result["p_value"] < 0.05, result  # lower is better


def test_hf_vllm_and_reference_judges_agree(spec, engine, fact_answers, fact_summaries):
    # one question, two held-out answers: the reference judge runs one forward pass per token
    answers = fact_answers.head(1)
    answers = answers.assign(test_answers=answers["test_answers"].map(lambda a: list(a)[:2]))
    summaries = fact_summaries[fact_summaries["id"].isin(answers["id"])]
    tables = {}
    for backend in ("hf", "vllm", "reference"):
        llm = engine if backend == "vllm" else None
        with open_judge(spec, {"backend": backend, **JUDGE}, llm=llm) as model:
            tables[backend] = science.scores(model, answers, summaries)["score"].to_numpy()
    assert np.isfinite(tables["hf"]).all()
    for backend in ("vllm", "reference"):
        np.testing.assert_allclose(tables[backend], tables["hf"], rtol=0, atol=1e-4)


def test_same_seeds_give_identical_answers_and_scores(spec, generator, facts, config):
    questions = facts.head(3)
    runs = []
    for _ in range(2):
        answers = science.answers(generator, questions, SIZES.num_answers, SIZES.max_tokens)
        summaries = science.summaries(generator, questions, ["concatenated_answers"], config)
        with open_judge(spec, {"backend": "hf", **JUDGE}) as model:
            runs.append((answers, summaries, science.scores(model, answers, summaries)))
    (answers_a, summaries_a, scores_a), (answers_b, summaries_b, scores_b) = runs
    columns = ["test_answers", "conditioning_answers", "seed"]
    pd.testing.assert_frame_equal(answers_a[columns], answers_b[columns])
    assert summaries_a["summary"].tolist() == summaries_b["summary"].tolist()
    assert scores_a["score"].tolist() == scores_b["score"].tolist()
    assert scores_a["score"].notna().all()
