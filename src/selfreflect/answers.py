"""Answer sampling (docs/protocol.md §3): 2N answers per question at T=1; the first N are
held out.

Held-out answers (``test_answers``, the original tool's ``masked_out_task_answers``) are only
ever read by the scorer; summary strategies get the conditioning answers or fresh samples.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from selfreflect.backends import Generator, Sampling
from selfreflect.chat import question_chat
from selfreflect.mc_study.choices import choice_truth
from selfreflect.seeds import question_seed


def split_answers(answers: list[str]) -> tuple[list[str], list[str]]:
    """First half held out for testing, second half for conditioning."""
    half = len(answers) // 2
    return answers[:half], answers[half:]


def sample_answers(
    generator: Generator,
    questions: pd.DataFrame,
    settings: dict[str, Any],
    run_seed: int,
    backend: str,
) -> pd.DataFrame:
    """One ``answers`` row per question, with the subject's distribution over a multiple-choice
    question's options (:mod:`selfreflect.mc_study.choices`); a question that fails keeps its row
    with ``error``."""
    seeds = [question_seed(run_seed, qid) for qid in questions["id"]]
    sampling = [
        Sampling(
            n=2 * settings["num_answers"],
            temperature=settings["temperature"],
            top_p=settings["top_p"],
            max_tokens=settings["max_tokens"],
            seed=seed,
        )
        for seed in seeds
    ]
    chats = [question_chat(question) for question in questions["question"]]
    generations = generator.chat(chats, sampling)
    truth = choice_truth(generator, questions, settings, seeds).to_dict("records")
    rows = []
    for (qid, question), seed, generation, choice in zip(
        questions[["id", "question"]].itertuples(index=False),
        seeds,
        generations,
        truth,
        strict=True,
    ):
        test, conditioning = split_answers(generation.texts)
        rows.append(
            {
                "id": qid,
                "question": question,
                "test_answers": test,
                "conditioning_answers": conditioning,
                "backend": backend,
                "model": generator.name,
                "seed": seed,
                "error": generation.error,
                **choice,
            }
        )
    return pd.DataFrame(rows)
