"""Score summaries against the held-out answers (SPEC §5): answers + summaries -> ``scores``.

One row per question and strategy. A question that cannot be scored (no conditioning answers,
no word to mask, prompt too long, failed upstream) keeps its row with ``error`` set and
``score`` null, so it is counted, never dropped. A crash of the judge (out of memory, a bug) is
no question's failure: it propagates and stops the job, which resumes from its checkpoint.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pandas as pd

from selfreflect.scoring import metric
from selfreflect.scoring.judge import Judge
from selfreflect.scoring.stopwords import IsStopword
from selfreflect.scoring.tasks import TaskError, question_tasks
from selfreflect.stats import bootstrap_ci

logger = logging.getLogger(__name__)

Result = tuple[float | None, int, str | None]  # score, number of tasks, error


def score_question(
    judge: Judge,
    question: str,
    test_answers: list[str],
    conditioning_answers: list[str],
    summaries: dict[str, str],
    temperature: float,
    is_stopword: IsStopword,
) -> dict[str, Result]:
    """Each summary's score for one question; a :class:`TaskError` gives every summary the
    same error, any other exception propagates."""
    try:
        reference, tasks = question_tasks(
            judge.format,
            question,
            test_answers,
            conditioning_answers,
            summaries,
            is_stopword,
        )
        longest = max(len(s) for t in [reference, *tasks.values()] for s in t.sequences)
        if longest > judge.max_model_len:
            raise TaskError(f"prompt has {longest} tokens; max_model_len is {judge.max_model_len}")
        distances = judge.distances(reference, list(tasks.values()), temperature)
    except TaskError as err:
        return dict.fromkeys(summaries, (None, 0, str(err)))
    return {key: (metric.score(d), len(d), None) for key, d in zip(tasks, distances, strict=True)}


def score_answer(
    judge: Judge,
    answer: Any,
    summaries: dict[str, str],
    temperature: float,
    is_stopword: IsStopword,
) -> dict[str, Result]:
    """:func:`score_question` on a row of an ``answers`` table (its question and answers)."""
    return score_question(
        judge,
        answer.question,
        list(answer.test_answers),
        list(answer.conditioning_answers),
        summaries,
        temperature,
        is_stopword,
    )


def upstream_error(answer: Any, summary: Any) -> str | None:
    """Why a question cannot be scored before any task is built, or None."""
    if isinstance(answer.error, str):
        return f"answers failed: {answer.error}"
    if summary is None:
        return "no summary for this question"
    if isinstance(summary.error, str):
        return f"summary failed: {summary.error}"
    if not isinstance(summary.summary, str):
        return "summary is null"
    return None


def score_table(
    judge: Judge,
    answers: pd.DataFrame,
    summaries: pd.DataFrame,
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """A ``scores`` table: each question of ``answers`` x each strategy it has a summary of.

    A question with no summary at all gets a failed row for every strategy; a summary key a
    question never had (reference files where questions carry different keys) gets no row.
    """
    strategies = list(dict.fromkeys(summaries["strategy"]))
    lookup = {(row.id, row.strategy): row for row in summaries.itertuples(index=False)}
    keys: dict[str, list[str]] = {}
    for qid, strategy in lookup:
        keys.setdefault(qid, []).append(strategy)
    rows = []
    for answer in answers.itertuples(index=False):
        results: dict[str, Result] = {}
        texts = {}
        present = keys.get(answer.id, strategies)
        for strategy in present:
            error = upstream_error(answer, lookup.get((answer.id, strategy)))
            if error is None:
                texts[strategy] = lookup[answer.id, strategy].summary
            else:
                results[strategy] = (None, 0, error)
        if texts:
            results |= score_answer(judge, answer, texts, temperature, is_stopword)
        for strategy in present:
            score, num_tasks, error = results[strategy]
            rows.append((answer.id, strategy, judge.name, score, num_tasks, error))
        logger.info("question %s scored: %s", answer.id, {k: v[0] for k, v in results.items()})
    columns = ["id", "strategy", "judge", "score", "num_tasks", "error"]
    return pd.DataFrame(rows, columns=columns)


def strategy_metrics(
    scores: pd.DataFrame, *, n_resamples: int, confidence: float, seed: int
) -> dict[str, dict[str, Any]]:
    """Per strategy: mean score over scored questions, its bootstrap CI, scored/failed counts."""
    out = {}
    for strategy, group in scores.groupby("strategy", sort=False):
        scored = group["score"].dropna().to_numpy(dtype=float)
        ci = (
            bootstrap_ci(scored, confidence=confidence, n_resamples=n_resamples, seed=seed)
            if scored.size
            else None
        )
        out[str(strategy)] = {
            "mean": ci.estimate if ci else None,
            "ci_low": ci.low if ci else None,
            "ci_high": ci.high if ci else None,
            "confidence": confidence,
            "n_scored": int(scored.size),
            "n_failed": int(len(group) - scored.size),
            "num_tasks": int(group["num_tasks"].sum()),
        }
    return out


def reference_scores(
    answers: pd.DataFrame, summaries: pd.DataFrame, scores: pd.DataFrame
) -> list[dict[str, float | None]]:
    """Scores in the reference format: one ``{summary_key: score}`` per question, in order.

    A question without summaries gets ``{}``; a failed score is ``None`` (JSON null).
    """
    keys: dict[str, list[str]] = {}
    for row in summaries.itertuples(index=False):
        keys.setdefault(row.id, []).append(row.strategy)
    by_key = {(row.id, row.strategy): row.score for row in scores.itertuples(index=False)}
    out = []
    for qid in answers["id"]:
        out.append({key: _json_float(by_key[qid, key]) for key in keys.get(qid, [])})
    return out


def _json_float(value: Any) -> float | None:
    return None if pd.isna(value) else float(value)


def score_metrics(scores: pd.DataFrame, config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The per-strategy metrics of a scores table, with the settings of ``config``."""
    settings = config["scoring"]
    return strategy_metrics(
        scores,
        n_resamples=settings["bootstrap_resamples"],
        confidence=settings["confidence"],
        seed=config["seed"],
    )


def write_metrics(path: str | os.PathLike, scores: pd.DataFrame, config: dict[str, Any]) -> None:
    """Write the per-strategy metrics of a scores table as JSON, ``{strategy: metrics}``."""
    from selfreflect.fileio import write_json

    write_json(path, score_metrics(scores, config))
