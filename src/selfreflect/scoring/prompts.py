"""What the judge reads, as text (docs/protocol.md §5): a question's masked words and, for each
context, the chats that ask the judge for them.

For one question, each context (the *reference context*, listing the conditioning answers; a
subsample of them; each summary) gets one chat per masked word of the held-out answers:
``system, user Q', assistant <context>, user M``, where M shows one held-out answer with one
word replaced by ``_``. :mod:`selfreflect.scoring.contexts` tokenises the chats; no model or
tokenizer is used here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from selfreflect.chat import Message, format_answers, prompts, system_message
from selfreflect.scoring.stopwords import IsStopword, masked_positions, normalize
from selfreflect.text import LETTERS, question_form

PROMPT_KEYS = (  # the prompts.yaml texts this module renders
    "score_reference_question_suffix",
    "score_masked_word",
    "score_target_summary",
    "score_target_reference",
)


class TaskError(Exception):
    """A question cannot be scored; the scorer records the message as its failure reason."""


@dataclass(frozen=True)
class QuestionAnswers:
    """What a question's judgements depend on besides the summary text."""

    question: str
    test: list[str]
    conditioning: list[str]
    subsamples: list[list[str]]  # extra reference contexts (subsets of ``conditioning``)
    choices: list[str] | None = None  # a multiple-choice question's options (masking units)

    def key(self) -> list[Any]:
        return [self.question, self.test, self.conditioning, self.subsamples, self.choices]


@dataclass(frozen=True)
class MaskedWord:
    """One held-out answer with one word replaced by ``_``, and that word.

    ``answer`` is the answer's index among the held-out answers, ``position`` the word's index
    among the answer's whitespace-split words (a masked choice label and text, see
    :func:`masked_words`: its first word's).
    """

    masked_answer: str
    word: str
    answer: int
    position: int


@dataclass(frozen=True)
class ContextPrompt:
    """One context's chats, one per masked word of ``words``, each ending with the user turn
    that asks for it (the judge answers with the word)."""

    chats: list[list[Message]]
    words: list[MaskedWord]


@dataclass(frozen=True)
class QuestionPrompts:
    """A question's contexts as chats: its reference contexts (the full conditioning answers
    first, then each subsample) and each summary text's context."""

    references: list[ContextPrompt]
    summaries: dict[str, ContextPrompt]


def scoring_question(question: str) -> str:
    """The authors' scorer normalisation: one trailing newline cut, ``Question: `` prefix, ``?``."""
    return question_form(question.removesuffix("\n"))


_LABEL = re.compile(rf"\(?([{LETTERS}])[.):]*", re.IGNORECASE)  # a choice label: B, (B), B., B)


def _choice_span(words: Sequence[str], choices: Sequence[str]) -> int:
    """How many leading ``words`` are a choice label and that choice's text ("B. Canberra"
    when choice B is "Canberra"; words compared :func:`normalize`-d); 0 when they are not."""
    label = _LABEL.fullmatch(words[0]) if words else None
    index = LETTERS.find(label.group(1).upper()) if label else -1
    if not 0 <= index < len(choices):
        return 0
    text = [normalize(word) for word in choices[index].split()]
    named = [normalize(word) for word in words[1 : 1 + len(text)]]
    return 1 + len(text) if text and named == text else 0


def masked_words(
    answers: Sequence[str], is_stopword: IsStopword, choices: Sequence[str] | None = None
) -> list[MaskedWord]:
    """Every maskable word of every answer, split on whitespace; empty answers are skipped.

    With a multiple-choice question's ``choices``, an answer that starts with a choice label
    and that choice's text (:func:`_choice_span`) has that span masked as one word ("_ is
    right" for "B. Canberra is right"), so neither half gives the other away; its position is
    that of its first word. Without ``choices`` every word is masked on its own.
    """
    out = []
    for index, answer in enumerate(answers):
        words = answer.split()
        span = _choice_span(words, choices) if choices else 0
        units = [" ".join(words[:span]), *words[span:]] if span else words
        for i in masked_positions(units, is_stopword) if units else []:
            masked = " ".join([*units[:i], "_", *units[i + 1 :]])
            position = i + span - 1 if span and i else i
            out.append(MaskedWord(masked, units[i], index, position))
    return out


def context_prompt(
    question: str, context: str, target: str, words: Sequence[MaskedWord]
) -> ContextPrompt:
    """The chats of one context (``target`` names it in the masked-word prompt)."""
    template = prompts()["score_masked_word"]
    head = [
        system_message(),
        {"role": "user", "content": question},
        {"role": "assistant", "content": context},
    ]
    asks = (template.format(target=target, masked_answer=w.masked_answer) for w in words)
    return ContextPrompt([[*head, {"role": "user", "content": ask}] for ask in asks], list(words))


def reference_prompt(
    question: str, conditioning_answers: Sequence[str], words: Sequence[MaskedWord]
) -> ContextPrompt:
    """A reference context's chats: ``conditioning_answers`` listed as the context."""
    text = prompts()
    suffix = text["score_reference_question_suffix"].format(n=len(conditioning_answers))
    return context_prompt(
        scoring_question(question) + suffix,
        format_answers(conditioning_answers),
        text["score_target_reference"],
        words,
    )


def summary_prompt(question: str, summary: str, words: Sequence[MaskedWord]) -> ContextPrompt:
    """A summary's chats, asking for the reference context's ``words``."""
    target = prompts()["score_target_summary"]
    return context_prompt(scoring_question(question), summary, target, words)


def question_prompts(
    answers: QuestionAnswers, texts: Sequence[str], is_stopword: IsStopword
) -> QuestionPrompts:
    """The chats of every context of ``answers`` for the summary ``texts``, all asking for
    every maskable word of the held-out answers (``answers.choices`` make "label + option
    text" one word). Raises :class:`TaskError` when the question has no conditioning answers
    or no word to mask."""
    if not answers.conditioning:
        raise TaskError("no conditioning answers")
    words = masked_words(answers.test, is_stopword, answers.choices)
    if not words:
        raise TaskError("no held-out answer has a word to mask")
    pools = [answers.conditioning, *answers.subsamples]
    return QuestionPrompts(
        [reference_prompt(answers.question, pool, words) for pool in pools],
        {text: summary_prompt(answers.question, text, words) for text in texts},
    )
