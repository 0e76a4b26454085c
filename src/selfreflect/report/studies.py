"""The report's judge-scored studies: controlled pairs and convergence (the multiple-choice
study's: :mod:`selfreflect.mc_study`; the pairs' alternative metrics:
:mod:`selfreflect.report.alt_metrics`).

Their SelfReflect scores are read off the experiment's ``judgements`` table
(:mod:`selfreflect.scoring.experiment`: one judge pass per question for every strategy and
study, the scorer's own code); no model runs here. Each function returns one study table
(``artifacts.SCHEMAS``)."""

from __future__ import annotations

import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.scoring.table import of_kind

ALT_METRICS = ["llm_rating", "p_true", "embedding"]
PAIR_KEYS = ["id", "pair_type", "side"]  # a controlled pair's summary in its experiment
# what controlled_scores reads of the alternative metrics (with the experiment's labels, so a
# row given twice is refused: artifacts.ROW_KEYS)
ALT_METRIC_COLUMNS = [*EXPERIMENT, *PAIR_KEYS, *ALT_METRICS]


def controlled_scores(judgements: pd.DataFrame, alternatives: pd.DataFrame) -> pd.DataFrame:
    """Every metric of both summaries of every controlled pair (long over ``side``); a pair
    that cannot be made keeps its two rows with no summary and the reason in ``error``."""
    table = of_kind(judgements, "pair", ["pair_type", "side"])
    table = table.rename(columns={"score": "selfreflect"})
    return table.merge(alternatives[[*PAIR_KEYS, *ALT_METRICS]], on=PAIR_KEYS, how="left")


def convergence_scores(judgements: pd.DataFrame) -> pd.DataFrame:
    """Every strategy's scores with subsampled conditioning answers (test answers all) and
    with subsampled test answers (conditioning answers all), per size of the subsample."""
    return of_kind(judgements, "convergence", ["strategy", "axis", "size"])
