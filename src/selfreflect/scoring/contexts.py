"""A question's contexts (docs/protocol.md §5): the token sequences whose next-token
distributions the judge gives, each built once per question.

For one question, each context (the *reference context*, listing the conditioning answers, and
each summary) gets one token sequence per masked word of the held-out answers: the chat
``system, user Q', assistant <context>, user M, assistant w`` rendered with the final message
continued. Its *target tokens* are the tokens after its longest common prefix with the same chat
rendered without ``w`` (generation prompt added). That is the authors' "extra tokens of the
longer chat" whenever the shorter chat tokenises to a prefix of the longer one; should a
tokenizer merge tokens across the boundary, the merged tokens count as targets too, so every
target is predicted from a context the judge really sees. One task = one target token.

:func:`question_contexts` builds a question's reference contexts and its summary contexts for
the judge pass. Pure functions of the judge's :class:`PromptFormat` (tokenizer, family,
fidelity) and texts, rendered with thinking off; no model is run here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from selfreflect.chat import Message, format_answers, prompts, system_message
from selfreflect.families import PromptFormat
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
class ContextTasks:
    """One context's token sequences, one per masked word, each ending with its target tokens.

    ``sequences[k][starts[k]:]`` are the target tokens of masked word ``k``; target ``j`` is
    predicted from the judge's output at position ``j - 1``. The first ``prefix_len`` tokens are
    shared by every sequence and lie before every predicting position. ``words[k]`` is the
    masked word of sequence ``k`` (empty for tasks that mask no word).
    """

    sequences: list[list[int]]
    starts: list[int]
    prefix_len: int
    words: list[MaskedWord] = field(default_factory=list)

    @property
    def num_tasks(self) -> int:
        return sum(len(seq) - start for seq, start in zip(self.sequences, self.starts, strict=True))

    def targets(self, k: int) -> list[int]:
        return self.sequences[k][self.starts[k] :]


@dataclass(frozen=True)
class TokenTree:
    """Some sequences' tokens after their shared prefix, merged into a prefix tree.

    Node ``i`` is token ``tokens[i]`` at ``depths[i]`` tokens after the prefix; its parent is
    ``parents[i]`` (-1: the prefix itself) and precedes it. Sequences that start alike share
    their first nodes, so each distinct start is computed once. ``predictors`` lists, for every
    target token of the sequences in order, the node whose output predicts it.
    """

    tokens: list[int]
    parents: list[int]
    depths: list[int]
    predictors: list[int]


def token_tree(tasks: ContextTasks, rows: Iterable[int]) -> TokenTree:
    """The tree of sequences ``rows`` after ``tasks.prefix_len``, up to their last predictor.

    A sequence's last token predicts nothing, so it is left out.
    """
    tree = TokenTree([], [], [], [])
    children: dict[tuple[int, int], int] = {}
    for k in rows:
        sequence, node, path = tasks.sequences[k], -1, []
        for depth, token in enumerate(sequence[tasks.prefix_len : -1]):
            child = children.setdefault((node, token), len(tree.tokens))
            if child == len(tree.tokens):
                tree.tokens.append(token)
                tree.parents.append(node)
                tree.depths.append(depth)
            node = child
            path.append(node)
        tree.predictors.extend(path[tasks.starts[k] - 1 - tasks.prefix_len :])
    return tree


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


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    if list(a[:n]) == list(b[:n]):
        return n
    return int(np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))[0])


def _task_tokens(fmt: PromptFormat, chat: list[Message], word: str) -> tuple[list[int], int]:
    """Token ids of ``chat`` answered with ``word`` and the index of its first target token."""
    full = [*chat, {"role": "assistant", "content": word}]
    with_word = fmt.encode(fmt.render(full, continue_final_message=True))
    without = fmt.encode(fmt.render(chat, add_generation_prompt=True))
    return with_word, common_prefix(with_word, without)


def context_tasks(
    fmt: PromptFormat, question: str, context: str, target: str, words: Sequence[MaskedWord]
) -> ContextTasks:
    """The sequences of one context (``target`` names it in the masked-word prompt)."""
    template = prompts()["score_masked_word"]
    head = [
        system_message(),
        {"role": "user", "content": question},
        {"role": "assistant", "content": context},
    ]
    sequences, starts = [], []
    for masked in words:
        prompt = template.format(target=target, masked_answer=masked.masked_answer)
        chat = [*head, {"role": "user", "content": prompt}]
        tokens, start = _task_tokens(fmt, chat, masked.word)
        if start == len(tokens):
            raise TaskError(f"masked word {masked.word!r} has no target tokens")
        sequences.append(tokens)
        starts.append(start)
    prefix = len(sequences[0])
    for seq in sequences[1:]:
        prefix = common_prefix(sequences[0][:prefix], seq)
    return ContextTasks(sequences, starts, min(prefix, min(starts) - 1), list(words))


def reference_tasks(
    fmt: PromptFormat,
    question: str,
    conditioning_answers: Sequence[str],
    words: Sequence[MaskedWord],
) -> ContextTasks:
    """The reference context's tasks: the conditioning answers listed as the context."""
    text = prompts()
    return context_tasks(
        fmt,
        scoring_question(question)
        + text["score_reference_question_suffix"].format(n=len(conditioning_answers)),
        format_answers(conditioning_answers),
        text["score_target_reference"],
        words,
    )


def question_tasks(
    fmt: PromptFormat,
    question: str,
    test_answers: Sequence[str],
    conditioning_answers: Sequence[str],
    summaries: dict[str, str],
    is_stopword: IsStopword,
    choices: Sequence[str] | None = None,
) -> tuple[ContextTasks, dict[str, ContextTasks]]:
    """The reference context's tasks and each summary's, aligned task by task; a
    multiple-choice question's ``choices`` make "label + option text" one masked unit.

    Raises :class:`TaskError` when the question has no conditioning answers, no word to mask,
    or a summary whose target tokens differ from the reference context's.
    """
    reference = question_reference(
        fmt, question, test_answers, conditioning_answers, is_stopword, choices
    )
    return reference, {
        key: summary_tasks(fmt, question, key, summary, reference)
        for key, summary in summaries.items()
    }


def question_reference(
    fmt: PromptFormat,
    question: str,
    test_answers: Sequence[str],
    conditioning_answers: Sequence[str],
    is_stopword: IsStopword,
    choices: Sequence[str] | None = None,
) -> ContextTasks:
    """The reference context's tasks: every maskable word of the test answers; raises
    :class:`TaskError` when the question has no conditioning answers or no word to mask."""
    if not conditioning_answers:
        raise TaskError("no conditioning answers")
    words = masked_words(test_answers, is_stopword, choices)
    if not words:
        raise TaskError("no held-out answer has a word to mask")
    return reference_tasks(fmt, question, conditioning_answers, words)


def summary_tasks(
    fmt: PromptFormat, question: str, key: str, summary: str, reference: ContextTasks
) -> ContextTasks:
    """A summary's tasks, aligned with the reference context's task by task; raises
    :class:`TaskError` naming ``key`` when its target tokens differ."""
    target = prompts()["score_target_summary"]
    tasks = context_tasks(fmt, scoring_question(question), summary, target, reference.words)
    for k in range(len(reference.words)):
        if tasks.targets(k) != reference.targets(k):
            raise TaskError(
                f"summary '{key}': target tokens of masked word {k} differ from the "
                "reference context's (mismatched task counts)"
            )
    return tasks


@dataclass(frozen=True)
class QuestionContexts:
    """A question's contexts for some summary texts: its reference contexts (the full
    conditioning answers first, then each subsample; none when no text has a context), each
    text's summary context, and why each other text cannot be judged."""

    references: list[ContextTasks]
    summaries: dict[str, ContextTasks]
    failed: dict[str, str]
    owners: list[int]  # each task's held-out answer (its index among the test answers)


def question_contexts(
    fmt: PromptFormat,
    max_model_len: int,
    answers: QuestionAnswers,
    texts: Sequence[str],
    is_stopword: IsStopword,
) -> QuestionContexts:
    """The contexts of ``texts`` on one question, each built once. A failure of the whole
    question (no conditioning answers, no word to mask, the reference prompt longer than
    ``max_model_len``) fails every text; a text whose own prompt is too long or whose tasks do
    not align fails alone."""
    try:
        reference = question_reference(
            fmt, answers.question, answers.test, answers.conditioning, is_stopword, answers.choices
        )
        _check_length(reference, max_model_len)
    except TaskError as err:
        return QuestionContexts([], {}, {text: str(err) for text in texts}, [])
    summaries, failed = {}, {}
    for text in texts:
        try:
            tasks = summary_tasks(fmt, answers.question, "summary", text, reference)
            _check_length(tasks, max_model_len)
            summaries[text] = tasks
        except TaskError as err:
            failed[text] = str(err)
    if not summaries:
        return QuestionContexts([], summaries, failed, [])
    references = [reference] + [
        reference_tasks(fmt, answers.question, subsample, reference.words)
        for subsample in answers.subsamples
    ]
    owners = [word.answer for k, word in enumerate(reference.words) for _ in reference.targets(k)]
    return QuestionContexts(references, summaries, failed, owners)


def _check_length(tasks: ContextTasks, max_model_len: int) -> None:
    """Raise :class:`TaskError` when a sequence of ``tasks`` is longer than the judge takes."""
    longest = max(len(sequence) for sequence in tasks.sequences)
    if longest > max_model_len:
        raise TaskError(f"prompt has {longest} tokens; max_model_len is {max_model_len}")
