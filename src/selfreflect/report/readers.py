"""The report's inputs: artifact tables of many experiments in one frame, and human ratings."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from selfreflect import artifacts
from selfreflect.errors import InputError

RATINGS_COLUMNS = ["question_id", "strategy", "rater", "rating"]


def read_tables(kind: str, files: Iterable[str | Path]) -> pd.DataFrame:
    """All ``kind`` tables of ``files`` in one frame (their rows name their experiment), without
    scoring tasks: no table of the report shows one. A row given twice is refused."""
    return artifacts.read_tables(kind, files, artifacts.columns_but_tasks(kind))


def read_ratings(path: str | Path) -> pd.DataFrame:
    """A ratings CSV: columns question_id, strategy, rater, rating (numeric, higher is better)."""
    frame = pd.read_csv(path, dtype={"question_id": str, "strategy": str, "rater": str})
    missing = [c for c in RATINGS_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing} (need {RATINGS_COLUMNS})")
    ratings = pd.to_numeric(frame["rating"], errors="coerce")
    if ratings.isna().any():
        row = int(ratings.isna().to_numpy().argmax()) + 2
        raise InputError(f"{path}: line {row}: rating is not a number")
    return frame[RATINGS_COLUMNS].assign(rating=ratings)
