"""A command run with its resources sampled: wall and CPU time, peak memory, load."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import time
from pathlib import Path

INTERVAL = 0.2  # seconds between samples


def tree_rss(process) -> int:
    """Resident memory of a ``psutil.Process`` and all its descendants, in bytes."""
    import psutil

    total = 0
    for proc in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total


def cpu_seconds() -> float:
    """User and system time of this process's finished (waited-for) children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sampled_run(
    command: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None
) -> dict:
    """Run ``command`` in ``cwd``, its output to ``log``, sampling every ``INTERVAL`` s the
    total RSS of it and all its descendants and the 1-min load average. Returns the date and
    command, exit status, wall and CPU time (of every process of the run), peak memory, mean
    load and CPU count."""
    import psutil

    date = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    cpu, start = cpu_seconds(), time.perf_counter()
    peak, loads = 0, []
    with log.open("wb") as handle:
        process = psutil.Popen(command, cwd=cwd, env=env, stdout=handle, stderr=subprocess.STDOUT)
        while process.poll() is None:
            peak = max(peak, tree_rss(process))
            loads.append(os.getloadavg()[0])
            time.sleep(INTERVAL)
    return {
        "date": date,
        "command": " ".join(command),
        "returncode": process.returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": round(cpu_seconds() - cpu, 1),
        "peak_rss_mib": round(peak / 2**20),
        "mean_load": round(sum(loads) / max(len(loads), 1), 1),
        "cpus": os.cpu_count(),
    }
