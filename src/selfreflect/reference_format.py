"""The original tool's JSON formats (docs/protocol.md §6), converted to and from the project's
tables."""

from __future__ import annotations

import logging
import os
from typing import Any

import pandas as pd

from selfreflect.errors import InputError
from selfreflect.fileio import read_json, write_json
from selfreflect.questions import question_id

log = logging.getLogger(__name__)


def _records(path: str | os.PathLike, required: dict[str, type]) -> list[dict[str, Any]]:
    """Records of a reference JSON file, each checked to have ``required`` fields and types
    (a ``question`` among them, not blank)."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of records")
    if not data:
        raise InputError(f"{path}: no records (the file holds an empty list)")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise InputError(f"{path}: record {index} is not an object")
        for name, kind in required.items():
            if name not in record:
                raise InputError(f"{path}: record {index} has no field '{name}'")
            if not isinstance(record[name], kind):
                raise InputError(f"{path}: record {index}: '{name}' must be a {kind.__name__}")
        if not record["question"].strip():  # as the question loader refuses it
            raise InputError(f"{path}: record {index}: 'question' is empty")
    return data


def _unique(records: list[dict[str, Any]], path: str | os.PathLike) -> list[dict[str, Any]]:
    """``records`` without repeated questions (same id), keeping the first, as the loader does;
    a repeat that differs from the first (other answers or summaries) is refused: which one
    holds the question's answers would be a guess."""
    first: dict[str, tuple[int, dict[str, Any]]] = {}  # id -> its first record's number, the record
    for number, record in enumerate(records):
        earlier, kept = first.setdefault(question_id(record["question"]), (number, record))
        if record != kept:
            raise InputError(
                f"{path}: record {number} repeats the question of record {earlier} with"
                " other contents"
            )
    if len(first) < len(records):
        log.warning("%s: dropped %d duplicate question(s)", path, len(records) - len(first))
    return [record for _, record in first.values()]


def read_reference_answers(path: str | os.PathLike) -> pd.DataFrame:
    """A reference test-answers file as an ``answers`` table (backend ``reference``).

    A record may carry an ``error`` (a string, written by :func:`write_reference_answers` for a
    failed question); one without holds an answer with text in each list (a model's empty
    answer may sit beside others). Repeated questions are kept once.
    """
    lists = ("masked_out_task_answers", "conditioning_answers")
    records = _records(path, {"question": str, **dict.fromkeys(lists, list)})
    for index, record in enumerate(records):
        for name in lists:
            if not all(isinstance(answer, str) for answer in record[name]):
                raise InputError(f"{path}: record {index}: '{name}' must hold strings")
        if not isinstance(record.get("error"), str | None):
            raise InputError(f"{path}: record {index}: 'error' must be a string or null")
        for name in lists:
            if record.get("error") is None and not any(a.strip() for a in record[name]):
                raise InputError(
                    f"{path}: record {index}: '{name}' holds no answer with text (a question"
                    " without answers is a failed one: give it an 'error')"
                )
    records = _unique(records, path)
    return pd.DataFrame(
        {
            "id": [question_id(r["question"]) for r in records],
            "question": [r["question"] for r in records],
            "test_answers": [r["masked_out_task_answers"] for r in records],
            "conditioning_answers": [r["conditioning_answers"] for r in records],
            "backend": "reference",
            "model": str(path),
            "seed": pd.array([None] * len(records), dtype="Int64"),
            "error": [r.get("error") for r in records],
        }
    )


def write_reference_answers(answers: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write an ``answers`` table in the reference test-answers format; a failed question keeps
    its ``error`` (an extra field the reference tool ignores)."""
    records = []
    for row in answers.itertuples(index=False):
        record = {
            "question": row.question,
            "masked_out_task_answers": list(row.test_answers),
            "conditioning_answers": list(row.conditioning_answers),
        }
        if isinstance(row.error, str):
            record["error"] = row.error
        records.append(record)
    write_json(path, records)


def read_reference_summaries(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Records ``{"question", "summaries": {key: str}}`` of a reference summaries file."""
    records = _records(path, {"question": str, "summaries": dict})
    for index, record in enumerate(records):
        for key, summary in record["summaries"].items():
            if not isinstance(summary, str):
                raise InputError(f"{path}: record {index}: summary '{key}' must be a string")
    return _unique(records, path)


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
