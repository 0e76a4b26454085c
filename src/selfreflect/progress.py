"""Progress lines for long jobs: a job's log says how far it is and about how long is left, and
so does the terminal of the Snakemake or DVC run that started it."""

from __future__ import annotations

import logging
import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

log = logging.getLogger(__name__)
_ECHO = "stdout"  # the name of the handler echoing progress lines to standard output
T = TypeVar("T")
_job = ""  # the job this process runs, as its progress lines begin (:func:`name_job`)


def name_job(*parts: str) -> None:
    """Begin this process's progress lines with the job's ``parts`` (``nq/qwen``, ``shard
    3``): a workflow's terminal shows its jobs' lines interleaved."""
    global _job
    _job = f"{' '.join(parts)}: " if parts else ""


def shard_part(shard: int, shards: int) -> tuple[str, ...]:
    """``("shard N",)`` for :func:`name_job` where a job is one of several shards (N as the
    shard's files and logs number it), else nothing."""
    return (f"shard {shard}",) if shards > 1 else ()


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
                "%s%s: %d/%d (%.0f%%), %s elapsed, about %s left",
                _job, self.what, self.done, self.total, share, _duration(elapsed), _duration(left),
            )  # fmt: skip


def echo_to_stdout() -> None:
    """Also write progress lines to standard output where it is not where the log goes: a
    workflow job's log is its standard error, redirected to a file, while Snakemake and DVC show
    its standard output on their terminal. Once per process."""
    try:
        out, err = (os.fstat(stream.fileno()) for stream in (sys.stdout, sys.stderr))
    except (OSError, ValueError):  # a stream without a file (captured in-process)
        return
    echoing = any(handler.get_name() == _ECHO for handler in log.handlers)
    if (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino) and not echoing:
        handler = logging.StreamHandler(sys.stdout)
        handler.set_name(_ECHO)
        handler.setFormatter(logging.Formatter("%(message)s"))
        log.addHandler(handler)


def terminal_bars() -> bool:
    """Whether libraries may draw progress bars: only where standard error is a terminal. A
    job's log is a file, where each redraw of a bar (a carriage return) grows one line without
    end; :class:`Progress` lines say how far the job is there."""
    return sys.stderr.isatty()


def quiet_bars_in_logs() -> None:
    """Turn tqdm's bars off in this process and the ones it starts (vLLM's engine) unless
    :func:`terminal_bars`: tqdm reads ``TQDM_DISABLE`` as it is imported, so this runs before any
    command is. Calls that turn a bar on explicitly pass :func:`terminal_bars` themselves."""
    if not terminal_bars():
        os.environ.setdefault("TQDM_DISABLE", "1")


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
