"""The six summary strategies of the paper (docs/protocol.md §4); prompt texts come from
prompts.yaml."""

from __future__ import annotations

from typing import TYPE_CHECKING

from selfreflect.chat import Message, format_answers, question_chat
from selfreflect.strategies.text import cot_summary, prompt, user_chat

if TYPE_CHECKING:
    from selfreflect.strategies.context import Batch


def greedy(batch: Batch) -> dict[int, str]:
    """The greedy answer to the plain question."""
    return batch.summarize({r: question_chat(q) for r, q in batch.rows().items()})


def basic(batch: Batch) -> dict[int, str]:
    """The model asked to summarise all its possible answers."""
    chats = {r: user_chat(prompt("basic", question=q)) for r, q in batch.rows().items()}
    return batch.summarize(chats)


def cot(batch: Batch) -> dict[int, str]:
    """Reasoning about plausible answers; the summary is the ``Summary:`` line."""
    chats = {r: user_chat(prompt("cot", question=q)) for r, q in batch.rows().items()}
    return {r: cot_summary(text) for r, text in batch.summarize(chats).items()}


def sample_and_summarize_chat(question: str, answers: list[str]) -> list[Message]:
    text = prompt(
        "sample_and_summarize", n=len(answers), question=question, answers=format_answers(answers)
    )
    return user_chat(text)


def sample_and_summarize(batch: Batch) -> dict[int, str]:
    """Fresh answers, then the model summarises them."""
    questions = batch.questions
    chats = {
        r: sample_and_summarize_chat(questions[r], answers)
        for r, answers in batch.fresh_answers().items()
    }
    return batch.summarize(chats)


def concatenated_answers(batch: Batch) -> dict[int, str]:
    """No model call: the formatted block of the fresh answers."""
    return {r: format_answers(answers) for r, answers in batch.fresh_answers().items()}


def twostep_cot_chat(question: str, analysis: str) -> list[Message]:
    """The step-2 chat: the step-1 exchange, then the request to distill it."""
    return [
        *user_chat(prompt("twostep_cot_brainstorm", question=question)),
        {"role": "assistant", "content": analysis},
        {"role": "user", "content": prompt("twostep_cot_distill")},
    ]


def twostep_cot(batch: Batch) -> dict[int, str]:
    """A greedy brainstorm of plausible answers, then a summary of it in the same chat."""
    rows = batch.rows()
    step1 = {r: user_chat(prompt("twostep_cot_brainstorm", question=q)) for r, q in rows.items()}
    analyses = batch.summarize(step1)
    return batch.summarize({r: twostep_cot_chat(rows[r], a) for r, a in analyses.items()})
