"""The report's judge-scored studies: controlled pairs and convergence (the multiple-choice
study's: :mod:`selfreflect.mc_study`).

Their SelfReflect scores are read off the experiment's ``judgements`` table
(:mod:`selfreflect.scoring.experiment`: one judge pass per question for every strategy and
study, the scorer's own code); only the controlled pairs' alternative metrics (LLM rating, P(True),
embedding similarity) run models here. Each function returns one study table
(``artifacts.SCHEMAS``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from selfreflect.controlled import BY_STRING, SIDES, Grouping, pairs_table
from selfreflect.report import alt_metrics
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.table import of_kind

ALT_METRICS = ["llm_rating", "p_true", "embedding"]


def alt_metrics_table(
    judge: Judge, answers: pd.DataFrame, pair_types: list[str], grouping: Grouping = BY_STRING
) -> pd.DataFrame:
    """The alternative metrics of both summaries of every controlled pair that could be made
    (``grouping``: how the answers are clustered; one batched pass of the judge per metric)."""
    pairs = pairs_table(answers, pair_types, grouping)
    made = pairs[pairs["error"].isna()]
    by_id = answers.set_index("id")
    rows = [
        (pair.id, pair.pair_type, side, getattr(pair, side))
        for pair in made.itertuples()
        for side in SIDES
    ]
    table = pd.DataFrame(rows, columns=["id", "pair_type", "side", "summary"])
    items = [
        (by_id.loc[qid, "question"], list(by_id.loc[qid, "conditioning_answers"]), summary)
        for qid, summary in zip(table["id"], table["summary"], strict=True)
    ]
    table[ALT_METRICS] = np.nan
    if items:
        table["llm_rating"] = alt_metrics.llm_ratings(judge, items)
        table["p_true"] = alt_metrics.p_true(judge, items)
        table["embedding"] = alt_metrics.embedding_similarity(items)
    return table


def controlled_scores(judgements: pd.DataFrame, alternatives: pd.DataFrame) -> pd.DataFrame:
    """Every metric of both summaries of every controlled pair (long over ``side``); a pair
    that cannot be made keeps its two rows with no summary and the reason in ``error``."""
    keys = ["id", "pair_type", "side"]
    table = of_kind(judgements, "pair", ["pair_type", "side"])
    table = table.rename(columns={"score": "selfreflect"})
    return table.merge(alternatives[[*keys, *ALT_METRICS]], on=keys, how="left")


def convergence_scores(judgements: pd.DataFrame) -> pd.DataFrame:
    """Every strategy's scores with subsampled conditioning answers (test answers all) and
    with subsampled test answers (conditioning answers all), per size of the subsample."""
    return of_kind(judgements, "convergence", ["strategy", "axis", "size"])
