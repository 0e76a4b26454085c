"""Text forms shared across the package: questions as the prompts show them, and answers
normalised for clustering and choice parsing (no dependency beyond the standard library)."""

from __future__ import annotations

import re

_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise(answer: str) -> str:
    """Lower-cased, punctuation removed, whitespace collapsed."""
    return " ".join(_PUNCTUATION.sub(" ", answer.lower()).split())


LETTERS = "ABCDEFGHIJ"  # a multiple-choice question's option letters
QUESTION_PREFIX = "Question: "


def question_form(text: str) -> str:
    """``text`` with the ``Question: `` prefix and a final ``?``, unless already there."""
    if not text.startswith(QUESTION_PREFIX):
        text = QUESTION_PREFIX + text
    return text if text.endswith("?") else text + "?"
