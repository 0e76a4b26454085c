"""Failed questions are recorded in their artifact's ``error`` column and counted; a job in
which more than ``max_failed_share`` of the questions fail stops with the reasons counted."""

from __future__ import annotations

from collections import Counter

import pandas as pd

from selfreflect.errors import SelfReflectError

ANSWERS_FAILED = "answers failed"  # how a study's row begins the reason of a failed question
_REASONS_SHOWN = 3
_REASON_CHARS = 80


class TooManyFailures(SelfReflectError):
    """More than the configured share of a job's questions failed."""


def reason_counts(errors: pd.Series) -> str:
    """The most frequent reasons of ``errors`` (non-null), counted: ``2x 'a'; 1x 'b'``."""
    counts = Counter(str(e)[:_REASON_CHARS] for e in errors.dropna())
    shown = [f"{n}x {reason!r}" for reason, n in counts.most_common(_REASONS_SHOWN)]
    if len(counts) > _REASONS_SHOWN:
        shown.append(f"{len(counts) - _REASONS_SHOWN} more reason(s)")
    return "; ".join(shown)


def check_failures(table: pd.DataFrame, max_share: float, what: str, by: str | None = None) -> None:
    """Raise :class:`TooManyFailures` when more than ``max_share`` of the rows of ``table``
    (of each ``by`` group) have an ``error``; the message counts the reasons."""
    groups = table.groupby(by, sort=False) if by else [(None, table)]
    for key, group in groups:
        failed = group["error"].notna()
        if len(group) and failed.mean() > max_share:
            name = what if key is None else f"{what} ({by} {key})"
            raise TooManyFailures(
                f"{name}: {int(failed.sum())} of {len(group)} questions failed, more than "
                f"max_failed_share={max_share:g}: {reason_counts(group['error'])}"
            )
