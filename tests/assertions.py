"""Assertions shared by test modules: a refused command touched nothing and said why in one line."""

from __future__ import annotations

import subprocess
from pathlib import Path


def snapshot(folder: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under ``folder`` (links not followed): its bytes (a link: its target) and
    modification time, to show that a refused command touched nothing."""
    state = {}
    for path in sorted(folder.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            state[str(path)] = (str(path.readlink()), info.st_mtime_ns)
        elif path.is_file():
            state[str(path)] = (path.read_bytes(), info.st_mtime_ns)
        else:
            state[str(path)] = (b"", info.st_mtime_ns)
    return state


def one_line_error(result: subprocess.CompletedProcess, *parts: str) -> None:
    assert result.returncode != 0 and result.stdout == ""
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for part in parts:
        assert part in result.stderr, (part, result.stderr)
