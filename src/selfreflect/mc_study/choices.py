"""A multiple-choice question's options in the subject's answers and in its distribution.

Parsing: which choice an answer names (:func:`parse_choice`), counted over a question's
answers (:func:`choice_counts`). Truth: the subject's distribution over the options, the
choices then "none of the choices" (:func:`choice_truth`). With ``logprobs`` (the default) it
is exact: the probability that the subject's answer begins with each choice's letter (a first
token such as ``B``, `` B``, ``B.`` or ``(B``), read off its next-token distribution after the
same chat its answers are sampled from, among its :data:`TOP_TOKENS` most likely first tokens;
the rest of the mass is "none". With ``samples`` (any backend, also one without
log-probabilities) it is the shares of ``choice_samples`` sampled answers (an answer naming
two or more choices counting as "none"), whose expected sampling error is reported
(:func:`sampling_error`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from selfreflect.chat import question_chat
from selfreflect.errors import InputError
from selfreflect.text import LETTERS, normalise

if TYPE_CHECKING:
    from selfreflect.backends import Generator


class Ambiguous(Enum):
    """The type of :data:`AMBIGUOUS`: an answer that names two or more different choices."""

    AMBIGUOUS = "ambiguous"


AMBIGUOUS = Ambiguous.AMBIGUOUS


def _choice_labels(answer: str, letters: str) -> set[int]:
    """The choices ``answer`` names by letter: a parenthesised letter anywhere (``(B)``), or a
    letter at the start or after "answer (is)" followed by ``.``, ``)``, ``:``, ``,`` or the
    end (``B``, ``B.``, ``b)``, ``Answer: B``, ``The answer is B.``). A letter followed by a
    word (the article in "A city in ...") is no label."""
    letter = f"([{letters}])"
    pattern = rf"\(\s*{letter}\s*\)|(?:^|\banswer(?:\s+is)?\s*:?)\s*{letter}(?=[.):,]|\s*$)"
    found = re.findall(pattern, answer, re.IGNORECASE)
    return {letters.index((a or b).upper()) for a, b in found}


def _choice_texts(answer: str, choices: Sequence[str]) -> set[int]:
    """The choices whose whole normalised text occurs in the normalised answer, word-bounded;
    a choice whose text lies inside another named choice's ("York" in "New York") is dropped."""
    text = f" {normalise(answer)} "
    names = {i: f" {normalise(c)} " for i, c in enumerate(choices) if normalise(c)}
    named = {i for i, name in names.items() if name in text}
    inside = {i for i in named for j in named if names[i] != names[j] and names[i] in names[j]}
    return named - inside


def parse_choice(answer: str, choices: Sequence[str]) -> int | Ambiguous | None:
    """The index of the choice an answer names, :data:`AMBIGUOUS` when it names two or more,
    None when it names none.

    Letters standing as choice labels (:func:`_choice_labels`) decide when there are any;
    otherwise the choices' texts do (:func:`_choice_texts`).
    """
    named = _choice_labels(answer, LETTERS[: len(choices)]) or _choice_texts(answer, choices)
    if len(named) > 1:
        return AMBIGUOUS
    return next(iter(named), None)


def choice_counts(answers: Sequence[str], choices: Sequence[str]) -> np.ndarray:
    """How many answers name each choice, then how many name none, then how many are
    ambiguous (:data:`AMBIGUOUS`); shape (k + 2,)."""
    k = len(choices)
    counts = np.zeros(k + 2)
    for answer in answers:
        index = parse_choice(answer, choices)
        counts[k if index is None else k + 1 if index is AMBIGUOUS else index] += 1
    return counts


def over_options(counts: np.ndarray) -> np.ndarray:
    """:func:`choice_counts` over the summaries' options, shape (k + 1,): an ambiguous answer
    is no single choice, so it counts as "none of the choices"."""
    return np.append(counts[:-2], counts[-2] + counts[-1])


TOP_TOKENS = 20  # vLLM's default max_logprobs; what lies below them counts as "none"
COLUMNS = ["choice_probs", "choice_source", "choice_error"]
_LETTER_TOKEN = re.compile(r"^\(?([A-Z])(?![A-Za-z0-9])")


def letter_probabilities(first_tokens: dict[str, float], k: int) -> np.ndarray:
    """The probabilities of the ``k`` choice letters as a first token (whitespace and an opening
    parenthesis before it allowed, no letter or digit after it), then of anything else."""
    probs = np.zeros(k + 1)
    for text, p in first_tokens.items():
        match = _LETTER_TOKEN.match(text.strip())
        if match and match.group(1) in LETTERS[:k]:
            probs[LETTERS.index(match.group(1))] += p
    probs[k] = max(0.0, 1.0 - probs[:k].sum())
    return probs / probs.sum()


def sampling_error(probs: Sequence[float], n: int) -> float:
    """The expected total variation between ``probs`` and the shares of ``n`` draws from it
    (normal approximation: ``sum_i sqrt(p_i (1 - p_i) / (2 pi n))``)."""
    p = np.asarray(probs, dtype=float)
    return float(np.sum(np.sqrt(p * (1 - p) / (2 * np.pi * n))))


def choice_truth(
    generator: Generator, questions: pd.DataFrame, settings: dict[str, Any], seeds: list[int]
) -> pd.DataFrame:
    """:data:`COLUMNS` for each question (its row order kept): the subject's distribution over
    its options, how it was found and its expected sampling error (0 when exact); null for a
    question without choices. ``seeds`` are the questions' answer-sampling seeds (``samples``
    draws from the next seed of each)."""
    from selfreflect.backends import Sampling  # the subject's engine runs here alone

    table = pd.DataFrame({"id": questions["id"].to_numpy()}).assign(
        choice_probs=None, choice_source=None, choice_error=np.nan
    )
    options = questions["choices"] if "choices" in questions else [None] * len(questions)
    has_choices = [c is not None and len(c) > 0 for c in options]
    rows = np.flatnonzero(has_choices)
    if rows.size == 0:
        return table[COLUMNS]
    picked = questions.iloc[rows]
    chats = [question_chat(q) for q in picked["question"]]
    choices = [list(c) for c in picked["choices"]]
    source = settings["choice_truth"]
    if source == "logprobs":
        if (settings["temperature"], settings["top_p"]) != (1.0, 1.0):
            raise InputError(
                "answers.choice_truth: logprobs is the distribution at temperature 1 and top_p"
                " 1, not the answers' sampling settings; use samples"
            )
        prompts = [generator.format.render(chat) for chat in chats]
        try:
            first = generator.first_token_probs(prompts, TOP_TOKENS)
        except NotImplementedError as err:
            raise InputError(f"answers.choice_truth: logprobs: {err}; use samples") from None
        probs = [letter_probabilities(f, len(c)) for f, c in zip(first, choices, strict=True)]
        errors = [0.0] * len(probs)
    else:
        n = settings["choice_samples"]
        sampling = [
            Sampling(
                n=n,
                temperature=settings["temperature"],
                top_p=settings["top_p"],
                max_tokens=settings["max_tokens"],
                seed=(seeds[row] + 1) & 0x7FFFFFFF,
            )
            for row in rows
        ]
        generations = generator.chat(chats, sampling)
        probs = [
            None if g.error or not g.texts else over_options(choice_counts(g.texts, c)) / n
            for g, c in zip(generations, choices, strict=True)
        ]
        errors = [np.nan if p is None else sampling_error(p, n) for p in probs]
    table.loc[rows, "choice_probs"] = pd.Series(
        [None if p is None else p.tolist() for p in probs], index=rows, dtype=object
    )
    table.loc[rows, "choice_source"] = source
    table.loc[rows, "choice_error"] = errors
    return table[COLUMNS]
