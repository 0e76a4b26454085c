"""Judge backend agreement: the same summaries scored by several judge backends.

Each backend (:data:`selfreflect.scoring.registry.JUDGES`) loads the same judge model and scores the
summaries with the scorer's own :func:`selfreflect.scoring.experiment.score_table`, so the backends'
scores differ only by what the engines compute (kernels, batching, dtype handling).
:func:`selfreflect.report.tables.backend_agreement_table` compares them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager

import pandas as pd

from selfreflect.scoring.experiment import score_table
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.stopwords import IsStopword

COLUMNS = ["id", "strategy", "backend", "score", "num_tasks", "error"]


def backend_scores(
    open_backend: Callable[[str], AbstractContextManager[Judge]],
    backends: Iterable[str],
    answers: pd.DataFrame,
    summaries: pd.DataFrame,
    temperature: float,
    is_stopword: IsStopword,
) -> tuple[pd.DataFrame, int]:
    """Every summary of ``answers``' questions scored by each backend (a repeated name once), one
    row per question, strategy and backend (:func:`score_table`'s rows, failures kept with their
    reason), and the tokens the judges computed. ``open_backend(name)`` opens the judge on that
    backend; each is closed before the next opens (one model in memory at a time)."""
    frames, tokens = [], 0
    for backend in dict.fromkeys(backends):
        with open_backend(backend) as judge:
            scores = score_table(judge, answers, summaries, temperature, is_stopword)
            tokens += judge.forward_tokens
        frames.append(scores.assign(backend=backend))
    if not frames:
        return pd.DataFrame(columns=COLUMNS), tokens
    return pd.concat(frames, ignore_index=True)[COLUMNS], tokens
