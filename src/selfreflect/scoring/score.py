"""A summary's score row (docs/protocol.md §5): its score, number of tasks and why it failed.

A question that cannot be scored (no conditioning answers, no word to mask, prompt too long,
failed upstream) keeps its row with ``error`` set and ``score`` null, so it is counted, never
dropped. A crash of the judge (out of memory, a bug) is no question's failure: it propagates
and stops the job, which resumes from its result cache. The score tables come from the judge
pass (:mod:`selfreflect.judging`); :func:`reference_scores` writes them in the original tool's
format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from selfreflect.scoring.judgements import Judgement, QuestionAnswers, judge_question
from selfreflect.scoring.stopwords import IsStopword

if TYPE_CHECKING:
    from selfreflect.scoring.judge import Judge


class Result(NamedTuple):
    """One summary's score for one question, its number of tasks, why it failed (or None), and
    its tasks' records (:func:`task_records`; None unless asked for)."""

    score: float | None
    num_tasks: int
    error: str | None
    tasks: list[dict[str, Any]] | None = None


def score_question(
    judge: Judge,
    question: str,
    test_answers: list[str],
    conditioning_answers: list[str],
    summaries: dict[str, str],
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool = False,
) -> dict[str, Result]:
    """Each summary's score for one question (one judge pass, :func:`judge_question`); a
    question that cannot be scored gives every summary its reason, a summary that cannot be
    scored alone fails alone; any other exception propagates. ``keep_tasks`` keeps every
    task's record."""
    answers = QuestionAnswers(question, test_answers, conditioning_answers, [])
    judged = judge_question(
        judge, answers, list(summaries.values()), temperature, is_stopword, keep_tasks
    )
    return {key: result(judged[text]) for key, text in summaries.items()}


def result(judgement: Judgement) -> Result:
    """A judgement as a score row's fields."""
    if judgement.error is not None:
        return Result(None, 0, judgement.error)
    return Result(judgement.score, len(judgement.distances[0]), None, judgement.records)


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
