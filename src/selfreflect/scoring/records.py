"""Judgement records (docs/protocol.md §5): what one summary text scored on one question.

A :class:`Judgement` holds each task's distance to each reference context, each task's
held-out answer and, when kept, the task records an explorer shows (the masked word, the
target token, the judge's top predictions given the summary and given the reference). The
judge pass builds them from the forward passes (:func:`judgements`); the cache stores them as
their :meth:`Judgement.entry` and reads them back, checked, with :meth:`Judgement.from_entry`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from selfreflect.artifacts import TASK
from selfreflect.scoring import metric

if TYPE_CHECKING:
    from selfreflect.scoring.contexts import ContextTasks, QuestionContexts
    from selfreflect.scoring.forwards import Judged

TOP_PREDICTIONS = 5  # the judge's most likely tokens kept per task and context
_TASK_FIELDS = frozenset(TASK.names)  # what a kept task record holds


@dataclass(frozen=True)
class Judgement:
    """One summary text judged on one question: each task's distance to each reference
    context (``[reference][task]``, the full conditioning answers first), the task records
    against the full reference (when kept), or why it could not be judged."""

    distances: list[list[float]]
    owners: list[int]  # each task's held-out answer (index among the test answers)
    records: list[dict[str, Any]] | None = None
    error: str | None = None

    @property
    def score(self) -> float | None:
        """SelfReflect (:func:`~selfreflect.scoring.metric.score`) against the full reference
        context; None when it has no task."""
        first = self.distances[0] if self.distances else []
        return metric.score(first) if first else None

    def entry(self) -> dict[str, Any]:
        return {
            "distances": self.distances,
            "owners": self.owners,
            "records": self.records,
            "error": self.error,
        }

    @classmethod
    def from_entry(
        cls, entry: Any, references: int, test_answers: int, keep_tasks: bool = False
    ) -> Judgement:
        """The judgement an :meth:`entry` holds, checked to have its shape with ``references``
        reference contexts and ``test_answers`` held-out answers (a failed one: none, and no
        tasks), its task records where ``keep_tasks``; ValueError says what is wrong."""
        if not isinstance(entry, dict) or set(entry) != {"distances", "owners", "records", "error"}:
            raise ValueError(
                "not a judgement: its fields are not distances, owners, records, error"
            )
        distances, owners, records, error = (
            entry[field] for field in ("distances", "owners", "records", "error")
        )
        if error is not None and not isinstance(error, str):
            raise ValueError("error is neither null nor a string")
        if error is not None and (owners or records):
            raise ValueError("a failed judgement holds tasks")
        if not _ints(owners) or not all(0 <= owner < test_answers for owner in owners):
            raise ValueError(f"owners are not indices of the {test_answers} test answers")
        expected = 0 if error is not None else references
        if not isinstance(distances, list) or len(distances) != expected:
            raise ValueError(f"distances is not a list of {expected} reference contexts")
        tasks = len(owners)
        if not all(_distances(row) and len(row) == tasks for row in distances):
            raise ValueError(f"distances are not lists of {tasks} numbers in [0, 1]")
        if records is not None and not (
            isinstance(records, list)
            and len(records) == tasks
            and all(isinstance(record, dict) and set(record) == _TASK_FIELDS for record in records)
        ):
            raise ValueError(f"records is neither null nor a list of {tasks} task records")
        if keep_tasks and error is None and records is None:
            raise ValueError("its task records were not kept")
        return cls(distances, owners, records, error)


def _ints(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int for v in values)


def _distances(values: Any) -> bool:
    """A list of total variation distances: numbers in [0, 1] (float rounding aside)."""
    return isinstance(values, list) and all(
        type(v) in (int, float) and 0.0 <= v <= 1.0 + 1e-6 for v in values
    )


def judgements(
    tokenizer: Any,
    contexts: QuestionContexts,
    references: Sequence[Judged],
    summaries: Sequence[Sequence[Judged]],
    temperature: float,
    keep_tasks: bool,
) -> dict[str, Judgement]:
    """The judgement of each text of ``contexts``: the failed ones' reasons, and each judged
    one's distances to each reference context, its task records where ``keep_tasks``; a text
    whose distances are not all finite fails. ``references`` and ``summaries`` are the forwards
    of :meth:`~selfreflect.scoring.forwards.Judge.cross_judge` (``summaries[i][reference]`` for
    the i-th text of ``contexts.summaries``)."""
    out = {text: Judgement([], [], error=reason) for text, reason in contexts.failed.items()}
    for text, row in zip(contexts.summaries, summaries, strict=True):
        distances = [cell.distances.double().tolist() for cell in row]
        if not all(math.isfinite(d) for ds in distances for d in ds):
            out[text] = Judgement([], [], error=_not_finite(temperature))
            continue
        records = None
        if keep_tasks:
            records = task_records(tokenizer, contexts.references[0], references[0], row[0])
        out[text] = Judgement(distances, contexts.owners, records)
    return out


def _not_finite(temperature: float) -> str:
    """Why a summary whose distances are not all finite numbers fails."""
    return f"the judge's distances are not finite (NaN or inf) at temperature {temperature:g}"


def task_records(
    tokenizer: Any, tasks: ContextTasks, reference: Judged, summary: Judged
) -> list[dict[str, Any]]:
    """One record per task: the held-out answer (index), the masked word (its index in the
    answer, its text), the target token, the distance, and the judge's top tokens with their
    probabilities given the summary and given the reference context."""
    decode = _token_decoder(tokenizer)
    records = []
    for k, word in enumerate(tasks.words):
        for token in tasks.targets(k):
            i = len(records)
            records.append(
                {
                    "answer": word.answer,
                    "position": word.position,
                    "word": word.word,
                    "token": decode(token),
                    "distance": float(summary.distances[i]),
                    "summary_top": [decode(t) for t in summary.top_tokens[i].tolist()],
                    "summary_p": summary.top_probs[i].tolist(),
                    "reference_top": [decode(t) for t in reference.top_tokens[i].tolist()],
                    "reference_p": reference.top_probs[i].tolist(),
                }
            )
    return records


def _token_decoder(tokenizer: Any) -> Callable[[int], str]:
    """Token id -> its text, cached (a question's top predictions repeat)."""
    return functools.lru_cache(maxsize=None)(lambda token: tokenizer.decode([token]))
