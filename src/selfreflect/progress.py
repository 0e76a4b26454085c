"""Progress lines for long jobs: a job's log says how far it is and about how long is left."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class Progress:
    """Logs ``what: done/total (pct), elapsed, about N left`` every ``every`` seconds and at
    the end, as work is reported with :meth:`advance`. (Not tqdm: it redraws one line with
    carriage returns, which a job's log file keeps as one ever-growing line.)"""

    def __init__(self, what: str, total: int, every: float = 30.0) -> None:
        self.what, self.total, self.every = what, total, every
        self.done = 0
        self.start = self.last = time.monotonic()

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if now - self.last >= self.every or self.done >= self.total:
            self.last = now
            elapsed = now - self.start
            left = elapsed / self.done * (self.total - self.done) if self.done else 0.0
            share = 100 * self.done / self.total if self.total else 100.0
            log.info(
                "%s: %d/%d (%.0f%%), %s elapsed, about %s left",
                self.what, self.done, self.total, share, _duration(elapsed), _duration(left),
            )  # fmt: skip


def progress(items: Iterable[T], what: str, total: int, every: float = 30.0) -> Iterator[T]:
    """Yield ``items`` (``total`` of them), logging progress lines as they are consumed."""
    tracker = Progress(what, total, every)
    for item in items:
        yield item
        tracker.advance()


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
