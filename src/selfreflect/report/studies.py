"""The report's judge-scored studies: controlled pairs, the MC study, convergence.

Their SelfReflect scores are read off the experiment's ``judgements`` table
(:mod:`selfreflect.judging`: one judge pass per question for every strategy and study, the
scorer's own code); only the controlled pairs' alternative metrics (LLM rating, P(True),
embedding similarity) run models here. Each function returns one study table
(``artifacts.SCHEMAS``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from selfreflect.choices import choice_counts
from selfreflect.judging import SIDES, mc_exclusion
from selfreflect.report import alt_metrics
from selfreflect.report.controlled import (
    BY_STRING,
    Grouping,
    pairs_table,
    stated_distribution,
)
from selfreflect.scoring.judge import Judge

ALT_METRICS = ["llm_rating", "p_true", "embedding"]
MC_TRUTH = ["w1", "choice_source", "choice_error", "ambiguous_conditioning", "ambiguous_test"]


def _of_kind(judgements: pd.DataFrame, kind: str, labels: list[str]) -> pd.DataFrame:
    rows = judgements[judgements["kind"] == kind]
    return rows[["id", *labels, "summary", "score", "num_tasks", "error"]].reset_index(drop=True)


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
    table = _of_kind(judgements, "pair", ["pair_type", "side"])
    table = table.rename(columns={"score": "selfreflect"})
    return table.merge(alternatives[[*keys, *ALT_METRICS]], on=keys, how="left")


def mc_scores(
    questions: pd.DataFrame, answers: pd.DataFrame, judgements: pd.DataFrame, settings: dict
) -> pd.DataFrame:
    """SelfReflect and true W1 of each stated-distribution summary of each MC question, with
    the truth's source and expected sampling error and how many of its conditioning and test
    answers name two or more choices (ambiguous); a question without ``choices``, a
    distribution over them or answers keeps one row per temperature with no summary and the
    reason in ``error``."""
    table = _of_kind(judgements, "mc", ["temperature"])
    choices = questions.set_index("id")["choices"]
    truth = {}
    for answer in answers.itertuples(index=False):
        options = choices.get(answer.id)
        if mc_exclusion(answer, options) is not None:
            continue
        options = list(options)
        conditioning, test = list(answer.conditioning_answers), list(answer.test_answers)
        ambiguous = [int(choice_counts(a, options)[-1]) for a in (conditioning, test)]
        source, probs = (answer.choice_source, answer.choice_error), list(answer.choice_probs)
        for t in settings["mc_temperatures"]:
            _, w1 = stated_distribution(probs, t)
            truth[answer.id, float(t)] = (w1, *source, *ambiguous)
    keys = list(zip(table["id"], table["temperature"], strict=True))
    values = [truth.get(key, (None,) * len(MC_TRUTH)) for key in keys]
    table[MC_TRUTH] = pd.DataFrame(values, columns=MC_TRUTH, index=table.index)
    return table


def convergence_scores(judgements: pd.DataFrame) -> pd.DataFrame:
    """Every strategy's scores with subsampled conditioning answers (test answers all) and
    with subsampled test answers (conditioning answers all), per size of the subsample."""
    return _of_kind(judgements, "convergence", ["strategy", "axis", "size"])
