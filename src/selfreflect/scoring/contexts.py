"""A question's contexts as the judge's token sequences (docs/protocol.md §5), each built once.

Each chat of a context (:mod:`selfreflect.scoring.prompts`: one per masked word of the held-out
answers, ending with the user turn that asks for the word) is rendered answered with the word
``w`` and the final message continued. Its *target tokens* are the tokens after its longest
common prefix with the same chat rendered without ``w`` (generation prompt added). That is the
authors' "extra tokens of the longer chat" whenever the shorter chat tokenises to a prefix of
the longer one; should a tokenizer merge tokens across the boundary, the merged tokens count as
targets too, so every target is predicted from a context the judge really sees. One task = one
target token.

Pure functions of the judge's :class:`PromptFormat` (tokenizer, family, fidelity) and the
chats, rendered with thinking off; no model is run here.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from selfreflect.families import PromptFormat
from selfreflect.scoring.prompts import (
    ContextPrompt,
    MaskedWord,
    QuestionAnswers,
    QuestionPrompts,
    TaskError,
    question_prompts,
)
from selfreflect.scoring.stopwords import IsStopword


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


def packed_spans(tasks: ContextTasks, budget: int) -> list[range]:
    """The sequences of ``tasks`` in order, in runs whose :func:`token_tree` holds at most
    ``budget`` nodes each (a sequence whose own nodes pass it gets a run of its own): the
    forwards of a judge that batches by tokens, not by masked words."""
    spans: list[range] = []
    first = 0
    children: dict[tuple[int, int], int] = {}  # the run's tree: (parent, token) -> node
    for k, sequence in enumerate(tasks.sequences):
        suffix = sequence[tasks.prefix_len : -1]
        node, depth = -1, 0
        while depth < len(suffix) and (node, suffix[depth]) in children:
            node, depth = children[(node, suffix[depth])], depth + 1
        if children and len(children) + len(suffix) - depth > budget:
            spans.append(range(first, k))
            first, children, node, depth = k, {}, -1, 0
        for token in suffix[depth:]:
            node = children.setdefault((node, token), len(children))
    if first < len(tasks.sequences):
        spans.append(range(first, len(tasks.sequences)))
    return spans


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix of two token sequences."""
    n = min(len(a), len(b))
    if list(a[:n]) == list(b[:n]):
        return n
    return int(np.flatnonzero(np.asarray(a[:n]) != np.asarray(b[:n]))[0])


def shared_head(texts: Sequence[str], tokenizer: Any) -> str:
    """The longest start of all ``texts`` that ends with one of the tokenizer's added tokens
    (the chat template's markers): a tokenizer splits a text at its added tokens before
    anything else, so what follows one is tokenized apart from what precedes it."""
    first, last = min(texts), max(texts)  # the texts' common start is these two's
    length = next(
        (i for i, pair in enumerate(zip(first, last, strict=False)) if pair[0] != pair[1]),
        len(first),
    )
    common = first[:length]
    markers = {token.content for token in tokenizer.added_tokens_decoder.values()}
    ends = [common.rfind(marker) + len(marker) for marker in markers if marker and marker in common]
    return common[: max(ends, default=0)]


def encoded_texts(fmt: PromptFormat, texts: list[str]) -> list[list[int]]:
    """``fmt.encode`` of each of ``texts``, their :func:`shared_head` tokenized once: a
    context's chats share everything up to their last turn (at the paper's N, thousands of
    tokens of conditioning answers), so tokenizing each whole would cost the judge's host
    more than its forwards. Checked against whole encodings of the first and last text; where
    they differ (a tokenizer that marks a text's end, or strips around a marker), each text is
    encoded whole."""
    head = shared_head(texts, fmt.tokenizer)
    if not head:
        return [fmt.encode(text) for text in texts]
    head_ids = fmt.encode(head)
    tails = fmt.tokenizer([text[len(head) :] for text in texts], add_special_tokens=False)
    joined = [head_ids + tail for tail in tails["input_ids"]]
    if any(joined[i] != fmt.encode(texts[i]) for i in {0, len(texts) - 1}):
        return [fmt.encode(text) for text in texts]
    return joined


def rendered_chats(fmt: PromptFormat, prompt: ContextPrompt) -> list[str]:
    """Each chat of a context rendered twice: answered with its masked word (the final message
    continued), then with the generation prompt."""
    rendered = []
    for chat, masked in zip(prompt.chats, prompt.words, strict=True):
        answered = [*chat, {"role": "assistant", "content": masked.word}]
        rendered.append(fmt.render(answered, continue_final_message=True))
        rendered.append(fmt.render(chat, add_generation_prompt=True))
    return rendered


def context_tasks(fmt: PromptFormat, prompt: ContextPrompt) -> ContextTasks:
    """The token sequences of one context's chats; raises :class:`TaskError` when a masked
    word has no target tokens."""
    encoded = encoded_texts(fmt, rendered_chats(fmt, prompt))
    sequences, starts = [], []
    for k, masked in enumerate(prompt.words):
        with_word, without = encoded[2 * k], encoded[2 * k + 1]
        start = common_prefix(with_word, without)
        if start == len(with_word):
            raise TaskError(f"masked word {masked.word!r} has no target tokens")
        sequences.append(with_word)
        starts.append(start)
    prefix = len(sequences[0])
    for seq in sequences[1:]:
        prefix = common_prefix(sequences[0][:prefix], seq)
    return ContextTasks(sequences, starts, min(prefix, min(starts) - 1), prompt.words)


def encoded_context(fmt: PromptFormat, prompt: ContextPrompt, max_model_len: int) -> ContextTasks:
    """:func:`context_tasks`, also raising :class:`TaskError` when a sequence is longer than
    ``max_model_len``, the judge's limit."""
    tasks = context_tasks(fmt, prompt)
    longest = max(len(sequence) for sequence in tasks.sequences)
    if longest > max_model_len:
        raise TaskError(f"prompt has {longest} tokens; max_model_len is {max_model_len}")
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
    fmt: PromptFormat, max_model_len: int, prompts: QuestionPrompts
) -> QuestionContexts:
    """The token sequences of every context of ``prompts``, each built once. A failure of a
    reference context (a masked word without target tokens, a prompt longer than
    ``max_model_len``) fails every text; a text whose own prompt is too long, or whose target
    tokens differ from the reference context's, fails alone."""
    texts = list(prompts.summaries)
    built: list[ContextTasks | str] = []
    for prompt in [*prompts.references, *prompts.summaries.values()]:
        try:
            built.append(encoded_context(fmt, prompt, max_model_len))
        except TaskError as err:
            built.append(str(err))
    references, summaries = built[: len(prompts.references)], built[len(prompts.references) :]
    broken = next((reason for reason in references if isinstance(reason, str)), None)
    if broken is not None:
        return QuestionContexts([], {}, dict.fromkeys(texts, broken), [])
    full = references[0]
    targets = [full.targets(k) for k in range(len(full.words))]
    judged, failed = {}, {}
    for text, tasks in zip(texts, summaries, strict=True):
        if isinstance(tasks, str):
            failed[text] = tasks
        elif differing := [k for k, t in enumerate(targets) if tasks.targets(k) != t]:
            failed[text] = (
                f"target tokens of masked word {differing[0]} differ from the reference "
                "context's (mismatched task counts)"
            )
        else:
            judged[text] = tasks
    if not judged:
        return QuestionContexts([], {}, failed, [])
    owners = [word.answer for word, target in zip(full.words, targets, strict=True) for _ in target]
    return QuestionContexts(references, judged, failed, owners)


def question_tasks(
    fmt: PromptFormat,
    question: str,
    test_answers: Sequence[str],
    conditioning_answers: Sequence[str],
    summaries: dict[str, str],
    is_stopword: IsStopword,
    choices: Sequence[str] | None = None,
) -> tuple[ContextTasks, dict[str, ContextTasks]]:
    """The reference context's tasks and each summary's (keyed as ``summaries``), aligned task
    by task, with no length limit; raises :class:`TaskError` when any of them fails."""
    answers = QuestionAnswers(
        question, list(test_answers), list(conditioning_answers), [], choices and list(choices)
    )
    prompts = question_prompts(answers, list(summaries.values()), is_stopword)
    contexts = question_contexts(fmt, sys.maxsize, prompts)
    if contexts.failed:
        raise TaskError(next(iter(contexts.failed.values())))
    return contexts.references[0], {key: contexts.summaries[t] for key, t in summaries.items()}
