"""Power of the multiple-choice study, simulated without a model.

Each simulated question has ``choices`` options and a true distribution over them drawn from
a symmetric Dirichlet(``concentration``); its subject never answers "none". As in
:func:`selfreflect.mc_study.variants.mc_variants`, each temperature tempers the exact truth
(:mod:`selfreflect.mc_study.choices`) into a stated distribution (whole percentages); the *true
distance* of a summary is the total variation between the two. The judge's score of a
summary is

- ``perfect``: the total variation between its stated distribution and the shares of the
  ``n_answers`` held-out answers the judge scores with, i.e. the true distance plus the
  sampling noise of scoring with N answers;
- ``random``: noise independent of the summaries (uniform; only its ranks matter).

The study's statistic is :func:`selfreflect.stats.within_question_test`'s: the one-sided
Wilcoxon signed-rank test that the per-question Spearman rho of score and true distance is
above 0. Power is the share of simulated studies where its p-value is below ``level``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from selfreflect.mc_study.variants import stated_distribution
from selfreflect.stats import per_question_rho, proportion_ci, signed_rank_test, wasserstein_1

Judge = Literal["perfect", "random"]
JUDGES: tuple[Judge, ...] = ("perfect", "random")


def _score(
    rng: np.random.Generator, judge: Judge, percents: np.ndarray, held_out: np.ndarray
) -> float:
    """The judge's score of the summary stating ``percents``."""
    if judge == "perfect":
        return wasserstein_1(percents, held_out, normalize=True)
    if judge == "random":
        return float(rng.uniform())
    raise ValueError(f"unknown judge {judge!r}; known: {', '.join(JUDGES)}")


def simulate_study(
    rng: np.random.Generator,
    judge: Judge,
    questions: int,
    n_answers: int,
    temperatures: Sequence[float],
    choices: int = 4,
    concentration: float = 1.0,
) -> pd.DataFrame:
    """One simulated study: a row (question, temperature, score, distance) per question and
    temperature."""
    rows = []
    for question, truth in enumerate(rng.dirichlet(np.full(choices, concentration), questions)):
        held_out = rng.multinomial(n_answers, truth)
        for temperature in temperatures:
            percents, distance = stated_distribution(truth, temperature)
            score = _score(rng, judge, percents, held_out)
            rows.append((question, temperature, score, distance))
    return pd.DataFrame(rows, columns=["question", "temperature", "score", "distance"])


def study_p_value(study: pd.DataFrame) -> float:
    """The one-sided Wilcoxon p-value of a study's per-question rho (1 when no question has
    one)."""
    rhos, _ = per_question_rho(study["question"], study["score"], study["distance"])
    return signed_rank_test(rhos)[1] if rhos.size else 1.0


def detections(
    judge: Judge,
    questions: int,
    n_answers: int,
    temperatures: Sequence[float],
    trials: int,
    seed: int,
    *,
    level: float = 0.05,
    **settings: float,
) -> int:
    """How many of ``trials`` simulated studies have a p-value below ``level``; ``settings``
    are :func:`simulate_study`'s ``choices`` and ``concentration``."""
    rng = np.random.default_rng(seed)
    studies = (
        simulate_study(rng, judge, questions, n_answers, temperatures, **settings)
        for _ in range(trials)
    )
    return sum(study_p_value(study) < level for study in studies)


def power_curve(
    question_counts: Sequence[int],
    n_answers: int,
    temperatures: Sequence[float],
    trials: int,
    seed: int,
    **options: float,
) -> pd.DataFrame:
    """Each judge's power at each question count (the share of ``trials`` where
    :func:`detections` fires: the false-positive rate for the random judge), with its Wilson
    interval: columns judge, questions, n_answers, power, low, high."""
    rows = []
    for judge in JUDGES:
        for questions in question_counts:
            fired = detections(judge, questions, n_answers, temperatures, trials, seed, **options)
            ci = proportion_ci(fired, trials)
            rows.append((judge, questions, n_answers, ci.estimate, ci.low, ci.high))
    return pd.DataFrame(rows, columns=["judge", "questions", "n_answers", "power", "low", "high"])
