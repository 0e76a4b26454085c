"""The finetuned summarisers' strategies: one greedy pass of the ``basic`` prompt with the
subject's LoRA adapter (``selfreflect summarize --adapter``; trained by
:mod:`selfreflect.finetune`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from selfreflect.chat import Message
from selfreflect.strategies.text import prompt, user_chat

if TYPE_CHECKING:
    from selfreflect.strategies.context import Batch


def finetuned_chat(question: str) -> list[Message]:
    """The one prompt the adapters are trained on and run: the ``basic`` summary request."""
    return user_chat(prompt("basic", question=question))


def finetuned(batch: Batch) -> dict[int, str]:
    """The adapter's greedy answer to the basic summary request (the prompt it was trained on)."""
    return batch.summarize({r: finetuned_chat(q) for r, q in batch.rows().items()})
