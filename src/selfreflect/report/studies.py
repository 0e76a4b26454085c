"""The report's judge-scored studies: controlled pairs, the MC study, convergence.

Each takes a loaded judge and artifact tables and returns one study table
(``artifacts.SCHEMAS``); SelfReflect scores come from the scorer's
:func:`selfreflect.scoring.score.score_question`, so a study scores exactly as ``score`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from selfreflect.answers import question_seed
from selfreflect.report import alt_metrics
from selfreflect.report.controlled import mc_variants, pairs_table
from selfreflect.scoring.judge import Judge
from selfreflect.scoring.score import score_question
from selfreflect.scoring.stopwords import IsStopword


def controlled_scores(
    judge: Judge,
    answers: pd.DataFrame,
    pair_types: Sequence[str],
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """Every metric of both summaries of every controlled pair (long over ``side``)."""
    pairs = pairs_table(answers, pair_types)
    by_id = answers.set_index("id")
    rows = []
    for qid, group in pairs.groupby("id", sort=False):
        answer = by_id.loc[qid]
        texts = {
            f"{p.pair_type}:{side}": getattr(p, side)
            for p in group.itertuples()
            for side in ("good", "bad")
        }
        results = score_question(
            judge,
            answer["question"],
            list(answer["test_answers"]),
            list(answer["conditioning_answers"]),
            texts,
            temperature,
            is_stopword,
        )
        for key, summary in texts.items():
            pair_type, side = key.split(":")
            score, _, error = results[key]
            rows.append((qid, pair_type, side, summary, score, error))
    table = pd.DataFrame(
        rows, columns=["id", "pair_type", "side", "summary", "selfreflect", "error"]
    )
    items = [
        (by_id.loc[qid, "question"], list(by_id.loc[qid, "conditioning_answers"]), summary)
        for qid, summary in zip(table["id"], table["summary"], strict=True)
    ]
    table["llm_rating"] = alt_metrics.llm_ratings(judge, items)
    table["p_true"] = alt_metrics.p_true(judge, items)
    table["embedding"] = alt_metrics.embedding_similarity(items)
    return table


def mc_scores(
    judge: Judge,
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    settings: dict[str, Any],
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """SelfReflect and true W1 of each stated-distribution summary of each MC question.

    Only questions with ``choices`` whose answers did not fail take part.
    """
    choices = questions.set_index("id")["choices"]
    rows = []
    for answer in answers[answers["error"].isna()].itertuples(index=False):
        options = choices.get(answer.id)
        if options is None or len(options) == 0:
            continue
        variants = mc_variants(
            list(answer.conditioning_answers),
            list(answer.test_answers),
            list(options),
            settings["mc_temperatures"],
            settings["mc_pseudo_count"],
        )
        texts = {str(t): summary for t, summary, _ in variants}
        results = score_question(
            judge,
            answer.question,
            list(answer.test_answers),
            list(answer.conditioning_answers),
            texts,
            temperature,
            is_stopword,
        )
        for t, summary, w1 in variants:
            score, _, error = results[str(t)]
            rows.append((answer.id, t, summary, w1, score, error))
    columns = ["id", "temperature", "summary", "w1", "score", "error"]
    return pd.DataFrame(rows, columns=columns)


def subsample(answers: Sequence[str], size: int, seed: int) -> list[str]:
    """The first ``size`` answers of a seeded permutation (nested across sizes)."""
    order = np.random.default_rng(seed).permutation(len(answers))
    return [answers[i] for i in order[:size]]


def convergence_scores(
    judge: Judge,
    answers: pd.DataFrame,
    summaries: pd.DataFrame,
    settings: dict[str, Any],
    run_seed: int,
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """Scores of every strategy with subsampled conditioning answers (test answers all) and
    with subsampled test answers (conditioning answers all), per size of the subsample.

    The first ``convergence_questions`` questions (all if null) whose answers did not fail take
    part; sizes above the number of answers are left out; failed summaries are skipped.
    """
    ok = answers[answers["error"].isna()]
    if settings["convergence_questions"] is not None:
        ok = ok.head(settings["convergence_questions"])
    usable = summaries[summaries["error"].isna() & summaries["summary"].notna()]
    rows = []
    for answer in ok.itertuples(index=False):
        texts = dict(usable.loc[usable["id"] == answer.id, ["strategy", "summary"]].values)
        if not texts:
            continue
        seed = question_seed(run_seed, answer.id)
        test, conditioning = list(answer.test_answers), list(answer.conditioning_answers)
        for axis, pool in (("conditioning", conditioning), ("test", test)):
            for size in settings["convergence_sizes"]:
                if size > len(pool):
                    continue
                part = subsample(pool, size, seed)
                args = (test, part) if axis == "conditioning" else (part, conditioning)
                results = score_question(
                    judge, answer.question, *args, texts, temperature, is_stopword
                )
                for strategy, (score, _, error) in results.items():
                    rows.append((answer.id, strategy, axis, size, score, error))
    columns = ["id", "strategy", "axis", "size", "score", "error"]
    return pd.DataFrame(rows, columns=columns)
