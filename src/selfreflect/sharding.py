"""Split questions into shards and order the rows of per-shard tables back in question order."""

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


def merge_order(
    ids: list[pd.Series], order: pd.Series, names: list[str], one_row: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The merged table's rows, as each one's shard (an index into ``ids``, the question ids of
    each shard's rows) and row there: in the order of the questions ``order`` (their ids), each
    question's rows in its shard's order.

    Every question must be in exactly one shard (in one row, if ``one_row``), and no shard may
    hold a question that is not in ``order``; ``names`` name the shard files.
    """
    questions = pd.Index(order)
    if not questions.is_unique:
        raise InputError(
            f"the questions list question {order[questions.duplicated()].iloc[0]} twice"
        )
    owner = np.full(len(questions), -1)  # the shard holding each question
    ranks = []
    for index, (part, name) in enumerate(zip(ids, names, strict=True)):
        repeated = part.duplicated().to_numpy()
        if one_row and repeated.any():
            raise InputError(f"{name}: question {part[repeated].iloc[0]} is in two rows")
        rank = questions.get_indexer(part)
        wrong = ~repeated & ((rank < 0) | (owner[rank] >= 0))
        if wrong.any():
            row = int(np.argmax(wrong))
            if rank[row] < 0:
                raise InputError(f"{name}: question {part.iloc[row]} is not among the questions")
            raise InputError(
                f"{names[owner[rank[row]]]}, {name}: question {part.iloc[row]} is in two shards"
            )
        owner[rank] = index
        ranks.append(rank)
    if (owner < 0).any():
        missing = sorted(order[owner < 0])[0]
        raise InputError(f"{', '.join(names)}: no shard holds question {missing}")
    rank = np.concatenate(ranks)
    shard = np.repeat(np.arange(len(ids)), [len(r) for r in ranks])
    row = np.concatenate([np.arange(len(r)) for r in ranks])
    position = np.argsort(rank, kind="stable")
    return shard[position], row[position]


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
