"""Split questions into shards and merge per-shard tables back in question order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from selfreflect.errors import InputError


def shard(questions: pd.DataFrame, index: int, count: int) -> pd.DataFrame:
    """The ``index``-th of ``count`` contiguous, near-equal slices of ``questions``."""
    if not 0 <= index < count:
        raise InputError(f"shard {index} does not exist (shards: {count})")
    bounds = np.linspace(0, len(questions), count + 1).astype(int)
    return questions.iloc[bounds[index] : bounds[index + 1]]


def merge(parts: list[pd.DataFrame], order: pd.Series, names: list[str]) -> pd.DataFrame:
    """Concatenate shard tables and order them as ``order`` (question ids), each question's
    rows in their shard's order.

    Every id must be in exactly one shard, and no shard may hold a question that is not in
    ``order``; ``names`` name the shard files.
    """
    rank = {qid: i for i, qid in enumerate(order)}
    owner: dict[str, str] = {}
    for part, name in zip(parts, names, strict=True):
        for qid in dict.fromkeys(part["id"]):
            if qid not in rank:
                raise InputError(f"{name}: question {qid} is not among the questions")
            if qid in owner:
                raise InputError(f"{owner[qid]}, {name}: question {qid} is in two shards")
            owner[qid] = name
    missing = [qid for qid in order if qid not in owner]
    if missing:
        raise InputError(f"{', '.join(names)}: no shard holds question {sorted(missing)[0]}")
    merged = pd.concat(parts, ignore_index=True)
    position = merged["id"].map(rank)
    return merged.iloc[np.argsort(position.to_numpy(), kind="stable")].reset_index(drop=True)


def check_run(run: str | None, shards: list[dict[str, Any]], names: list[str]) -> None:
    """Refuse a shard whose metadata (``shards``) names another run than its questions' ``run``
    (artifacts written before runs were recorded name none and pass)."""
    for meta, name in zip(shards, names, strict=True):
        if run and meta.get("run") and meta["run"] != run:
            raise InputError(
                f"{name}: a shard of run '{meta['run']}', not of run '{run}' (its questions')"
            )
