"""Split questions into shards and merge per-shard tables back in question order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from selfreflect.artifacts import EXPERIMENT, one_label
from selfreflect.errors import InputError


def shard(questions: pd.DataFrame, index: int, count: int) -> pd.DataFrame:
    """The ``index``-th of ``count`` contiguous, near-equal slices of ``questions``."""
    if not 0 <= index < count:
        raise InputError(f"shard {index} does not exist (shards: {count})")
    bounds = np.linspace(0, len(questions), count + 1).astype(int)
    return questions.iloc[bounds[index] : bounds[index + 1]]


def merge(
    parts: list[pd.DataFrame], order: pd.Series, names: list[str], one_row: bool = False
) -> pd.DataFrame:
    """Concatenate shard tables and order them as ``order`` (question ids), each question's
    rows in their shard's order.

    Every id must be in exactly one shard (in one row, if ``one_row``), and no shard may hold
    a question that is not in ``order``; ``names`` name the shard files.
    """
    rank = {qid: i for i, qid in enumerate(order)}
    owner: dict[str, str] = {}
    for part, name in zip(parts, names, strict=True):
        repeated = part["id"][part["id"].duplicated()]
        if one_row and len(repeated):
            raise InputError(f"{name}: question {repeated.iloc[0]} is in two rows")
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


# what every shard of one table shares: its run and experiment, and how it was made (the shard's
# number, the code's commit and the time it ran may differ)
IDENTITY = ("run", "dataset", "subject", "judge", "strategy", "models", "seed", "settings")


def identity(metadata: dict[str, Any], table: pd.DataFrame, name: str) -> dict[str, Any]:
    """A shard's :data:`IDENTITY`: from its ``metadata``, and the experiment labels its rows
    carry (judgements name their dataset and subject there); ``name`` names the shard file."""
    labels = {key: one_label(table, key, name) for key in EXPERIMENT if key in table}
    return {key: labels.get(key) or metadata.get(key) for key in IDENTITY}


def check_shards(run: str | None, shards: list[dict[str, Any]], names: list[str]) -> None:
    """Refuse a shard (its :func:`identity` in ``shards``) of another run than its questions'
    ``run``, or one differing from the first shard in any other field (a field a shard does not
    record, as in artifacts written before it was, passes; so does an empty shard's label)."""
    for meta, name in zip(shards, names, strict=True):
        if run and meta["run"] and meta["run"] != run:
            raise InputError(
                f"{name}: a shard of run '{meta['run']}', not of run '{run}' (its questions')"
            )
        for key in IDENTITY:
            first = shards[0][key]
            if None not in (meta[key], first) and meta[key] != first:
                raise InputError(f"{name}: {key} {meta[key]!r}, not {first!r} as in {names[0]}")
