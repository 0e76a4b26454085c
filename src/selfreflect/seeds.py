"""Seeds derived from the run's seed: each question's own, so a question samples the same
answers whichever shard, batch or run computes it, and the subsamples seeded with it."""

from __future__ import annotations

import hashlib

import numpy as np


def question_seed(run_seed: int, question_id: str) -> int:
    """A per-question sampling seed derived from the run seed and the question id."""
    digest = hashlib.sha256(f"{run_seed}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def subsample_indices(n: int, size: int, seed: int) -> list[int]:
    """The first ``size`` indices of a seeded permutation of ``range(n)`` (nested across sizes)."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n)[:size]]
