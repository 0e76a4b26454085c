"""Run ``selfreflect ARGS`` and SIGKILL it at a deterministic point, for the fault suite.

    python tests/kill_at.py POINT N -- ARGS...

POINT is ``after-checkpoint`` (the N-th checkpoint chunk is on disk), ``before-rename`` (the
N-th atomic write has its temporary file or folder complete but not yet renamed into place) or
``before-training-state`` (a finetuning run's N-th checkpoint is written but for its trainer
state, the file the Trainer writes last: a checkpoint killed half-written). The real
code runs unchanged up to that point; the job then dies as ``kill -9`` would kill it: with
its process group, as a scheduler kills a job. ``term-before-rename`` sends SIGTERM there
instead (as a scheduler first asks a job to stop; the job may clean up). (Killing only the
main process would leave vLLM's engine process running, holding the caller's output pipes
open.)
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from selfreflect import checkpoints, fileio
from selfreflect.cli import main


def die(signum: int = signal.SIGKILL) -> None:
    """Signal this job: its own process group (see ``__main__``), engine processes included."""
    os.killpg(os.getpgrp(), signum)


def dying_on_call(fn: Callable, n: int, after: bool, signum: int = signal.SIGKILL) -> Callable:
    """``fn`` that signals the process (kills it) at its ``n``-th call, before or after doing
    its work."""
    calls = 0

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == n and not after:
            die(signum)
        result = fn(*args, **kwargs)
        if calls == n and after:
            die(signum)
        return result

    return wrapper


class _Os:
    """``os`` for :mod:`selfreflect.fileio` only, with one function replaced."""

    def __init__(self, **replaced: Callable) -> None:
        self.__dict__.update(replaced)

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)


def arm(point: str, n: int) -> None:
    if point == "after-checkpoint":
        checkpoints.write_table = dying_on_call(checkpoints.write_table, n, after=True)
    elif point == "before-training-state":
        from transformers import TrainerState

        TrainerState.save_to_json = dying_on_call(TrainerState.save_to_json, n, after=False)
    elif point == "before-rename":
        fileio.os = _Os(replace=dying_on_call(os.replace, n, after=False))
    elif point == "term-before-rename":
        fileio.os = _Os(replace=dying_on_call(os.replace, n, False, signal.SIGTERM))
    else:
        raise SystemExit(f"unknown kill point {point}")


if __name__ == "__main__":
    os.setpgrp()  # a process group of its own: die() kills the job, never its caller
    point, n, separator, *args = sys.argv[1:]
    assert separator == "--"
    arm(point, int(n))
    sys.argv = ["selfreflect", *args]
    main()
