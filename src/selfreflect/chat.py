"""Chat construction and rendering (SPEC §1).

Every prompt is a chat (system, then alternating user/assistant); how a model renders and
tokenises it depends on its family (:mod:`selfreflect.families`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import yaml

Message = dict[str, str]


@cache
def prompts() -> dict[str, str]:
    """All prompt texts, from the package's ``prompts.yaml``."""
    text = (resources.files("selfreflect") / "data" / "prompts.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def system_message() -> Message:
    return {"role": "system", "content": prompts()["system"]}


def question_chat(question: str) -> list[Message]:
    """System message plus the question as user message (answer sampling, ``greedy``)."""
    return [system_message(), {"role": "user", "content": question}]
