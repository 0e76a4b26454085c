"""The multiple-choice study's summaries: the subject's distribution over a question's options
(:mod:`selfreflect.mc_study.choices`), tempered and stated in whole percentages, one summary
per temperature; their true distance to the truth is known, so SelfReflect should order them
as it does."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from selfreflect.chat import prompts
from selfreflect.controlled import distribution_summary
from selfreflect.failures import ANSWERS_FAILED
from selfreflect.stats import wasserstein_1
from selfreflect.text import LETTERS

PROMPT_KEYS = ("mc_option", "mc_other")  # the prompts.yaml texts this module renders


def tempered(distribution: Sequence[float], temperature: float) -> np.ndarray:
    """``p ** (1 / T)``, normalised: T < 1 sharpens, T > 1 flattens, T = 1 keeps ``p``. Taken
    relative to the largest ``p`` in log space, so no T > 0 underflows every weight to 0."""
    with np.errstate(divide="ignore"):  # log(0) = -inf: a choice of no probability stays 0
        logs = np.log(np.asarray(distribution, dtype=float))
    weights = np.exp((logs - logs.max()) / temperature)
    return weights / weights.sum()


def stated_percents(distribution: np.ndarray) -> np.ndarray:
    """The whole percentages a summary states for ``distribution``; shape kept."""
    return np.round(100 * np.asarray(distribution)).astype(int)


def stated_distribution(truth: Sequence[float], temperature: float) -> tuple[np.ndarray, float]:
    """The whole percentages a summary states for ``truth`` tempered at ``temperature``, and
    their true W1 to ``truth`` (0/1 ground metric, i.e. total variation)."""
    percents = stated_percents(tempered(truth, temperature))
    return percents, wasserstein_1(percents, truth, normalize=True)


def mc_summary(percents: np.ndarray, choices: Sequence[str]) -> str:
    """A distribution summary over the choices (``A. text``) and "none of the choices"."""
    text = prompts()
    names = [text["mc_option"].format(letter=LETTERS[i], choice=c) for i, c in enumerate(choices)]
    names.append(text["mc_other"])
    return distribution_summary([(name, p / 100) for name, p in zip(names, percents, strict=True)])


def mc_variants(
    truth: Sequence[float], choices: Sequence[str], temperatures: Sequence[float]
) -> list[tuple[float, str, float]]:
    """(temperature, summary, true W1) per temperature.

    The summary states the subject's distribution over the options (``truth``: the choices
    then "none", :func:`selfreflect.mc_study.choices.choice_truth`) tempered, in whole percentages
    (:func:`stated_distribution`).
    """
    out = []
    for temperature in temperatures:
        percents, w1 = stated_distribution(truth, temperature)
        out.append((float(temperature), mc_summary(percents, choices), w1))
    return out


def mc_exclusion(answer: Any, choices: Any) -> str | None:
    """Why a question (an ``answers`` row and its options) has no multiple-choice study (None
    when it has one)."""
    if choices is None or len(choices) == 0:
        return "not a multiple-choice question"
    if isinstance(answer.error, str):
        return f"{ANSWERS_FAILED}: {answer.error}"
    if answer.choice_probs is None:
        return "the answers have no distribution over the choices (answers.choice_truth)"
    return None
