"""A model job's own GPUs on a machine with more: ``--resources gpu=N`` lets Snakemake (or DVC's
queue) start N model jobs at once, and each job holds as many of the GPUs its process sees as it
takes, GPUs no other job on this machine holds, and sees only those (``CUDA_VISIBLE_DEVICES``).

A GPU is held by a lock on a file named after it in ``/tmp/selfreflect-gpus-<user id>`` (``/tmp``
itself: Snakemake may give each job a temporary folder of its own), which the operating system
releases when the job's process ends, however it ends. A job that sees no more GPUs than it takes
(a one-GPU machine, or a scheduler such as SLURM that shows each job its own) changes nothing.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

VISIBLE = "CUDA_VISIBLE_DEVICES"
POLL_SECONDS = 2.0
_held: list[IO[bytes]] = []  # the lock files of the GPUs this process holds, open until it ends


def visible_gpus() -> list[str]:
    """The GPUs this process sees: ``CUDA_VISIBLE_DEVICES``'s entries where it is set, else the
    indices ``nvidia-smi`` lists (none without it)."""
    if VISIBLE in os.environ:
        entries = [entry.strip() for entry in os.environ[VISIBLE].split(",")]
        return [entry for entry in entries if entry and entry != "-1"]
    if shutil.which("nvidia-smi") is None:
        return []
    listed = subprocess.run(
        ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
        capture_output=True,
        text=True,
        check=False,
    )
    return listed.stdout.split() if listed.returncode == 0 else []


def lock_folder() -> Path:
    """Where this machine's GPU locks are (one folder per user)."""
    return Path("/tmp") / f"selfreflect-gpus-{os.getuid()}"


def claim_gpus(count: int) -> list[str]:
    """Hold ``count`` of the GPUs this process sees that no other job holds (waiting while they
    are taken) and make them the only ones it sees; the GPUs it uses. Where it sees no more than
    ``count`` GPUs, nothing changes."""
    gpus = visible_gpus()
    if len(gpus) <= count:
        return gpus
    folder = lock_folder()
    folder.mkdir(parents=True, exist_ok=True)
    waited = False
    while (held := _lock_free(folder, gpus, count)) is None:
        if not waited:
            log.info("waiting for %d of GPUs %s: other jobs hold them", count, ",".join(gpus))
            waited = True
        time.sleep(POLL_SECONDS)
    chosen = [gpu for gpu, _ in held]
    _held.extend(lock for _, lock in held)
    os.environ[VISIBLE] = ",".join(chosen)
    log.info("on GPU %s of %s (%s)", os.environ[VISIBLE], ",".join(gpus), VISIBLE)
    return chosen


def _lock_free(folder: Path, gpus: list[str], count: int) -> list[tuple[str, IO[bytes]]] | None:
    """Locks on ``count`` free GPUs of ``gpus``, or None (and no lock kept) if fewer are free."""
    held: list[tuple[str, IO[bytes]]] = []
    for gpu in gpus:
        lock = (folder / f"{re.sub(r'[^A-Za-z0-9._-]', '_', gpu)}.lock").open("ab")
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.close()
            continue
        held.append((gpu, lock))
        if len(held) == count:
            return held
    for _, lock in held:
        lock.close()
    return None
