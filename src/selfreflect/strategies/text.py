"""Prompt construction and post-processing shared by the strategies (texts from prompts.yaml)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from selfreflect.chat import Message, prompts, question_chat

if TYPE_CHECKING:
    import pandas as pd

_SUMMARY_MARKER = re.compile(r"summary:\s*(.*)", re.IGNORECASE)


def prompt(key: str, **fields: object) -> str:
    """The prompt text ``key`` of prompts.yaml with ``fields`` filled in."""
    return prompts()[key].format(**fields)


def user_chat(content: str) -> list[Message]:
    """System message plus one user message."""
    return question_chat(content)


def cot_summary(text: str) -> str:
    """What follows the first case-insensitive ``summary:`` up to the end of that line."""
    match = _SUMMARY_MARKER.search(text)
    return match.group(1) if match else text


def blank_summaries(summaries: pd.Series) -> pd.Series:
    """Which summaries are blank (empty or whitespace), not missing (a failed question's)."""
    return summaries.map(lambda text: isinstance(text, str) and not text.strip())
