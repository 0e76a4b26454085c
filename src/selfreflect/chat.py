"""Chat construction and rendering (docs/protocol.md §1).

Every prompt is a chat (system, then alternating user/assistant); how a model renders and
tokenises it depends on its family (:mod:`selfreflect.families`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path

from selfreflect.fileio import read_yaml

Message = dict[str, str]
PROMPTS_FILE = "data/prompts.yaml"  # every prompt text, in the package
PROMPT_KEYS = ("system", "answer_list_item")  # the prompts.yaml texts this module renders


@cache
def prompts() -> dict[str, str]:
    """All prompt texts, from the package's ``prompts.yaml``."""
    return read_yaml(Path(str(resources.files("selfreflect") / PROMPTS_FILE)))


def format_answers(answers: Sequence[str]) -> str:
    """Answers as ``x_1 = '…'\\nx_2 = '…'…``: the scorer's reference context and the
    strategies' answer block (docs/protocol.md §4, §5)."""
    item = prompts()["answer_list_item"]
    return "\n".join(item.format(index=i, answer=a) for i, a in enumerate(answers, 1))


def system_message() -> Message:
    return {"role": "system", "content": prompts()["system"]}


def question_chat(question: str) -> list[Message]:
    """System message plus the question as user message (answer sampling, ``greedy``)."""
    return [system_message(), {"role": "user", "content": question}]
