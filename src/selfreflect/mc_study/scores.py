"""The multiple-choice study's table of scored summaries: the ``mc`` rows of the experiment's
``judgements`` (:mod:`selfreflect.scoring.table`) with each summary's true W1 alongside."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from selfreflect.mc_study.choices import choice_counts, over_options, sampling_error
from selfreflect.mc_study.variants import mc_exclusion, stated_distribution

MC_TRUTH = ["w1", "choice_source", "choice_error", "ambiguous_conditioning", "ambiguous_test"]
MC_TRUTH += ["truth_tv", "truth_tv_expected"]
# what the study reads of the answers table
ANSWER_COLUMNS = ["id", "test_answers", "conditioning_answers", "error"]
ANSWER_COLUMNS += ["choice_probs", "choice_source", "choice_error"]


def truth_check(probs: list[float], answers: list[str], options: list[str]) -> tuple[float, float]:
    """The total variation between a question's truth (``probs`` over its options, then "none")
    and the shares of the options its ``answers`` name, and the expected total variation of
    that many draws from the truth (:func:`selfreflect.mc_study.choices.sampling_error`)."""
    shares = over_options(choice_counts(answers, options)) / len(answers)
    tv = 0.5 * float(np.abs(np.asarray(probs) - shares).sum())
    return tv, sampling_error(probs, len(answers))


Truth = dict[tuple[str, float], tuple]  # (question, temperature) -> its MC_TRUTH values


def mc_truth(questions: pd.DataFrame, answers: Iterable[pd.DataFrame], settings: dict) -> Truth:
    """The true W1 of each multiple-choice question's stated distribution at each temperature
    of ``settings`` (``mc_temperatures``), with the truth's source and expected sampling error,
    how many of its conditioning and test answers name two or more choices (ambiguous) and the
    truth checked against all its answers (``truth_tv``, ``truth_tv_expected``:
    :func:`truth_check`): its :data:`MC_TRUTH` values. ``answers``: the answers table in parts
    (:data:`ANSWER_COLUMNS`), read one at a time."""
    choices = questions.set_index("id")["choices"]
    truth = {}
    for answer in (row for part in answers for row in part.itertuples(index=False)):
        options = choices.get(answer.id)
        if mc_exclusion(answer, options) is not None:
            continue
        options = list(options)
        conditioning, test = list(answer.conditioning_answers), list(answer.test_answers)
        ambiguous = [int(choice_counts(a, options)[-1]) for a in (conditioning, test)]
        source, probs = (answer.choice_source, answer.choice_error), list(answer.choice_probs)
        checked = truth_check(probs, conditioning + test, options)
        for t in settings["mc_temperatures"]:
            _, w1 = stated_distribution(probs, t)
            truth[answer.id, float(t)] = (w1, *source, *ambiguous, *checked)
    return truth


def mc_rows(judgements: pd.DataFrame, truth: Truth) -> pd.DataFrame:
    """SelfReflect and true W1 of each stated-distribution summary of each MC question: the
    ``mc`` rows of ``judgements`` with their questions' ``truth`` (:func:`mc_truth`) alongside;
    a question without ``choices``, a distribution over them or answers keeps one row per
    temperature with no summary and the reason in ``error``."""
    rows = judgements[judgements["kind"] == "mc"]
    table = rows[["id", "temperature", "summary", "score", "num_tasks", "error"]]
    table = table.reset_index(drop=True)
    keys = list(zip(table["id"], table["temperature"], strict=True))
    values = [truth.get(key, (None,) * len(MC_TRUTH)) for key in keys]
    table[MC_TRUTH] = pd.DataFrame(values, columns=MC_TRUTH, index=table.index)
    return table
