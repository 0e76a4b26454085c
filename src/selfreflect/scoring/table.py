"""The ``judgements`` table (docs/protocol.md §5): one row per question and thing judged, its
``kind`` saying which (a strategy's summary, a controlled pair's side, a multiple-choice
variant, a convergence cell), with its score, number of tasks and why it failed.

A question that cannot be scored (no conditioning answers, no word to mask, prompt too long,
failed upstream) keeps its rows with ``error`` set and ``score`` null, so it is counted, never
dropped. A crash of the judge (out of memory, a bug) is no question's failure: it propagates
and stops the job, which resumes from its cache. The judge pass
(:mod:`selfreflect.scoring.experiment`) fills the rows from its judgements; the score files and
the studies' tables are read off them with the filters below.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from selfreflect.seeds import subsample_indices

if TYPE_CHECKING:
    from selfreflect.scoring.records import Judgement

SCORES = ["id", "strategy", "score", "num_tasks", "error", "tasks"]  # a scores row's fields
LABELS = ["kind", "strategy", "pair_type", "side", "temperature", "axis", "size"]
COLUMNS = ["id", *LABELS, "summary", "score", "num_tasks", "error", "tasks"]
AXES = ("conditioning", "test")
# how a convergence cell's reason begins where its size is above the question's answers: not
# scored, and counted apart from the failures (the convergence table's ``n_excluded``)
SIZE_ABOVE_ANSWERS = "size above the question's answers"


class Result(NamedTuple):
    """One summary's score for one question, its number of tasks, why it failed (or None), and
    its tasks' records (:func:`~selfreflect.scoring.records.task_records`; None unless asked
    for)."""

    score: float | None
    num_tasks: int
    error: str | None
    tasks: list[dict[str, Any]] | None = None


def result(judgement: Judgement) -> Result:
    """A judgement as a score row's fields."""
    if judgement.error is not None:
        return Result(None, 0, judgement.error)
    return Result(judgement.score, len(judgement.distances[0]), None, judgement.records)


def row(qid: str, kind: str, summary: str | None, error: str | None, **labels: Any) -> dict:
    """A row of ``kind`` judging ``summary`` (None: nothing to judge, ``error`` says why), its
    result not yet filled in."""
    unscored = {"score": None, "num_tasks": None, "tasks": None}
    return {"id": qid, "kind": kind, **labels, "summary": summary, "error": error, **unscored}


def filled(rows: list[dict], judged: dict[str, Judgement]) -> list[dict]:
    """``rows`` with the results of their summaries' judgements (the task records on strategy
    rows alone: what the explorer shows)."""
    for item in rows:
        if item["error"] is None:
            score, num_tasks, error, tasks = result(judged[item["summary"]])
            kept = tasks if item["kind"] == "strategy" else None
            item |= {"score": score, "num_tasks": num_tasks, "error": error, "tasks": kept}
    return rows


def convergence_rows(
    qid: str,
    pools: dict[str, list[str]],
    strategy_rows: list[dict],
    judged: dict[str, Judgement],
    sizes: list[int],
    seed: int,
) -> Iterator[dict]:
    """Each strategy's score with each subsample of the conditioning answers (all test
    answers; one reference context each) and of the test answers (all conditioning answers;
    the mean over the subsample's tasks); ``pools`` holds each axis' answers."""
    for strategy_row in strategy_rows:
        error = strategy_row["error"]
        judgement = judged.get(strategy_row["summary"]) if error is None else None
        for axis in AXES:
            for size in sizes:
                labels = {"strategy": strategy_row["strategy"], "axis": axis, "size": size}
                out = row(qid, "convergence", None, error, **labels)
                if judgement is not None:
                    out |= _convergence_cell(judgement, pools, axis, size, sizes, seed)
                yield out


def _convergence_cell(
    judgement: Judgement,
    pools: dict[str, list[str]],
    axis: str,
    size: int,
    sizes: list[int],
    seed: int,
) -> dict:
    """The result of one convergence cell: its size is above the axis' answers, the judgement
    failed, no chosen held-out answer has a task, or the mean over the cell's tasks."""
    if size > len(pools[axis]):
        return {"error": f"{SIZE_ABOVE_ANSWERS}: {len(pools[axis])} {axis} answers"}
    if judgement.error is not None:
        return {"error": judgement.error}
    if axis == "conditioning":  # one reference context per fitting size, after the full one
        fitting = [n for n in sizes if n <= len(pools[axis])]
        distances = judgement.distances[1 + fitting.index(size)]
    else:
        chosen = set(subsample_indices(len(pools["test"]), size, seed))
        pairs = zip(judgement.distances[0], judgement.owners, strict=True)
        distances = [d for d, owner in pairs if owner in chosen]
        if not distances:
            return {"error": "no held-out answer has a word to mask"}
    return {"score": float(np.mean(distances)), "num_tasks": len(distances), "error": None}


def of_kind(judgements: pd.DataFrame, kind: str, labels: list[str]) -> pd.DataFrame:
    """The rows of ``judgements`` of one ``kind`` with its ``labels``, their summaries and
    results (no tasks)."""
    rows = judgements[judgements["kind"] == kind]
    return rows[["id", *labels, "summary", "score", "num_tasks", "error"]].reset_index(drop=True)


def summary_scores(judgements: pd.DataFrame, summaries: pd.DataFrame) -> pd.DataFrame:
    """The ``scores`` rows of ``summaries`` (without the experiment labels): each question on
    the strategies it has a summary of, in their order (a reference file's questions carry
    different keys), and a question without any on every strategy, its rows failed."""
    rows = judgements[judgements["kind"] == "strategy"]
    place = {
        key: i for i, key in enumerate(zip(summaries["id"], summaries["strategy"], strict=True))
    }
    summarised = set(summaries["id"])
    rank = {strategy: i for i, strategy in enumerate(dict.fromkeys(summaries["strategy"]))}
    question = {qid: i for i, qid in enumerate(dict.fromkeys(rows["id"]))}
    keys = list(zip(rows["id"], rows["strategy"], strict=True))
    kept = [key[0] not in summarised or key in place for key in keys]
    order = sorted(
        (i for i, keep in enumerate(kept) if keep),
        key=lambda i: (question[keys[i][0]], place.get(keys[i], rank[keys[i][1]])),
    )
    return rows.iloc[order][SCORES].reset_index(drop=True)
