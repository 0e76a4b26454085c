"""Resumable work: process a table in chunks, checkpointing each finished chunk.

A killed job loses at most the chunk in flight. Checkpoints live in a directory named after a
fingerprint of everything that determines the result (settings, seeds, the model's files and
entry, the code: :func:`~selfreflect.code_deps.job_identity`), so a rerun after any of them
changed never reuses them; they are all removed once the full result is written. A
checkpoint that cannot be read (e.g. damaged on disk) is set aside, with a warning, in
``.<output>.checkpoints/corrupt/`` and its chunk computed again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.errors import InputError
from selfreflect.progress import Progress

log = logging.getLogger(__name__)


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable ``parts``."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def checkpoint_dir(out: str | Path, key: str) -> Path:
    """Where the checkpoints of output ``out`` computed under ``key`` live."""
    out = Path(out)
    return out.parent / f".{out.name}.checkpoints" / key


def run_chunked(
    kind: str,
    items: pd.DataFrame,
    work: Callable[[pd.DataFrame], pd.DataFrame],
    directory: Path,
    chunk_size: int,
) -> pd.DataFrame:
    """``work`` on consecutive chunks of ``items``, reusing chunks finished by an earlier run
    (each with the ``attrs`` its work noted)."""
    parts = []
    tracker = Progress(f"{kind}: questions", len(items))
    for start in range(0, len(items), chunk_size):
        chunk = items.iloc[start : start + chunk_size]
        path = directory / f"{start:09d}-{fingerprint(list(chunk['id']))}.parquet"
        result = _reuse(kind, path, chunk) if path.is_file() else None
        if result is None:
            result = work(chunk)
            write_table(kind, result, path, {"attrs": result.attrs})
        parts.append(result)
        tracker.advance(len(chunk))
    return pd.concat(parts, ignore_index=True) if parts else work(items)


def _reuse(kind: str, path: Path, chunk: pd.DataFrame) -> pd.DataFrame | None:
    """The checkpoint at ``path`` of ``chunk``; ``None`` (its chunk is computed again) when it
    is unreadable or holds other questions, after setting it aside with a warning."""
    try:
        result = read_table(kind, path)
        result.attrs = read_metadata(path).get("attrs", {})
        if list(result["id"]) != list(chunk["id"]):
            raise InputError(f"{path}: holds other questions than its chunk")
    except InputError as err:
        aside = path.parent.parent / "corrupt" / f"{path.parent.name}-{path.name}"
        aside.parent.mkdir(exist_ok=True)
        path.replace(aside)
        log.warning("corrupt checkpoint moved to %s; computing its chunk again (%s)", aside, err)
        return None
    return result


def clear(directory: Path) -> None:
    """Remove every checkpoint of a finished output: those of ``directory`` and those that
    killed runs with other settings, models or code left beside them (none is reused now)."""
    shutil.rmtree(directory.parent, ignore_errors=True)
