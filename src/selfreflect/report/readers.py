"""The report's inputs: artifact tables of many experiments in one frame, and human ratings."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from selfreflect import artifacts
from selfreflect.errors import InputError

RATINGS_COLUMNS = ["question_id", "strategy", "rater", "rating"]


def read_tables(
    kind: str,
    files: Iterable[str | Path],
    columns: Sequence[str] | None = None,
    present: Sequence[str] = (),
) -> pd.DataFrame:
    """The ``columns`` of all ``kind`` tables of ``files`` in one frame (their rows name their
    experiment); by default all but the scoring tasks: no table of the report shows one. A row
    given twice is refused. Each of ``present`` is read a batch at a time as ``has_<name>``:
    whether a row holds one (a text the table only counts need not be held in memory)."""
    files = list(files)
    frame = artifacts.read_tables(kind, files, list(columns or artifacts.columns_but_tasks(kind)))
    for name in present:
        held = [_holds(file, name) for file in files]
        frame[f"has_{name}"] = np.concatenate(held) if held else np.zeros(0, bool)
    return frame


def _holds(path: str | Path, column: str) -> np.ndarray:
    """Whether each row of the (checked) artifact at ``path`` holds a value of ``column``."""
    held = [batch.column(0).is_valid() for batch in artifacts.read_batches(path, [column])]
    return np.concatenate([flags.to_numpy(zero_copy_only=False) for flags in held] or [[]])


def read_ratings(path: str | Path) -> pd.DataFrame:
    """A ratings CSV: columns question_id, strategy, rater, rating (numeric, higher is better),
    and, kept where there is one, the subject whose summaries are rated."""
    text = {"question_id": str, "strategy": str, "rater": str, "subject": str}
    try:
        frame = pd.read_csv(path, dtype=text, encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise InputError(f"{path}: malformed CSV: {' '.join(str(err).split())}") from None
    missing = [c for c in RATINGS_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing} (need {RATINGS_COLUMNS})")
    ratings = pd.to_numeric(frame["rating"], errors="coerce")
    if ratings.isna().any():
        row = int(ratings.isna().to_numpy().argmax()) + 2
        raise InputError(f"{path}: line {row}: rating is not a number")
    kept = [*RATINGS_COLUMNS, *(["subject"] if "subject" in frame else [])]
    return frame[kept].assign(rating=ratings)
