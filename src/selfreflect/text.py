"""Text normalisation shared by answer clustering and choice parsing."""

from __future__ import annotations

import re

_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise(answer: str) -> str:
    """Lower-cased, punctuation removed, whitespace collapsed."""
    return " ".join(_PUNCTUATION.sub(" ", answer.lower()).split())
