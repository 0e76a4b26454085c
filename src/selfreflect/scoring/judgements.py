"""One judge pass per question for every summary an experiment scores (docs/protocol.md §5).

Every strategy's summary, every controlled pair's and every multiple-choice variant of a
question is measured against the same reference context (the conditioning answers), so the
pass computes that context once, and each distinct summary text once. Extra references (the
convergence study's subsamples of the conditioning answers) ride on the same summary
contexts. With a :class:`ResultCache`, a summary text judged before under the same question,
answers, judge and code is read back instead of judged, and a question whose texts are all
known runs no model at all.

A failure of the whole question (no conditioning answers, no word to mask, the reference
prompt too long) fails each of its summaries; a summary whose own prompt is too long or whose
tasks do not align fails alone.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from selfreflect.artifacts import TASK
from selfreflect.scoring.result_cache import ResultCache
from selfreflect.scoring.stopwords import IsStopword
from selfreflect.scoring.tasks import (
    ContextTasks,
    TaskError,
    question_tasks,
    reference_tasks,
    summary_tasks,
)

if TYPE_CHECKING:
    from selfreflect.scoring.judge import Judge, Judged

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
        """SelfReflect: the mean distance to the full reference context."""
        first = self.distances[0] if self.distances else []
        return sum(first) / len(first) if first else None

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


@dataclass(frozen=True)
class QuestionAnswers:
    """What a question's judgements depend on besides the summary text."""

    question: str
    test: list[str]
    conditioning: list[str]
    subsamples: list[list[str]]  # extra reference contexts (subsets of ``conditioning``)
    choices: list[str] | None = None  # a multiple-choice question's options (masking units)

    def key(self) -> list[Any]:
        return [self.question, self.test, self.conditioning, self.subsamples, self.choices]


def judge_question(
    judge: Judge,
    answers: QuestionAnswers,
    texts: Sequence[str],
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool = False,
    cache: ResultCache | None = None,
) -> dict[str, Judgement]:
    """Each distinct summary text of ``texts`` judged on one question (cache hits read back)."""
    out: dict[str, Judgement] = {}
    parse = functools.partial(
        Judgement.from_entry,
        references=1 + len(answers.subsamples),
        test_answers=len(answers.test),
        keep_tasks=keep_tasks,
    )
    for text in dict.fromkeys(texts):
        judgement = cache.get(answers.key(), text, parse) if cache else None
        if judgement is not None:
            out[text] = judgement
    todo = [text for text in dict.fromkeys(texts) if text not in out]
    if todo:
        fresh = _judge_texts(judge, answers, todo, temperature, is_stopword, keep_tasks)
        for text, judgement in fresh.items():
            if cache:
                cache.put(answers.key(), text, judgement.entry())
            out[text] = judgement
    return out


def _ints(values: Any) -> bool:
    return isinstance(values, list) and all(type(v) is int for v in values)


def _distances(values: Any) -> bool:
    """A list of total variation distances: numbers in [0, 1] (float rounding aside)."""
    return isinstance(values, list) and all(
        type(v) in (int, float) and 0.0 <= v <= 1.0 + 1e-6 for v in values
    )


def _too_long(judge: Judge, tasks: ContextTasks) -> str | None:
    longest = max(len(sequence) for sequence in tasks.sequences)
    if longest > judge.max_model_len:
        return f"prompt has {longest} tokens; max_model_len is {judge.max_model_len}"
    return None


def _judge_texts(
    judge: Judge,
    answers: QuestionAnswers,
    texts: list[str],
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool,
) -> dict[str, Judgement]:
    """``texts`` judged by the model: the reference contexts once, each text's context once."""
    fmt = judge.format
    try:
        reference, _ = question_tasks(
            fmt,
            answers.question,
            answers.test,
            answers.conditioning,
            {},
            is_stopword,
            answers.choices,
        )
        if reason := _too_long(judge, reference):
            raise TaskError(reason)
    except TaskError as err:
        return {text: Judgement([], [], error=str(err)) for text in texts}
    out, contexts = {}, {}
    for text in texts:
        try:
            tasks = summary_tasks(fmt, answers.question, "summary", text, reference)
            if reason := _too_long(judge, tasks):
                raise TaskError(reason)
            contexts[text] = tasks
        except TaskError as err:
            out[text] = Judgement([], [], error=str(err))
    if contexts:
        references = [reference] + [
            reference_tasks(fmt, answers.question, subsample, reference.words)
            for subsample in answers.subsamples
        ]
        top_k = TOP_PREDICTIONS if keep_tasks else 0
        owners = [
            word.answer for k, word in enumerate(reference.words) for _ in reference.targets(k)
        ]
        judged_references, judged = judge.cross_judge(
            references, list(contexts.values()), temperature, top_k
        )
        for text, row in zip(contexts, judged, strict=True):
            records = None
            if keep_tasks:
                records = task_records(judge.tokenizer, reference, judged_references[0], row[0])
            distances = [cell.distances.double().tolist() for cell in row]
            out[text] = Judgement(distances, owners, records)
            if not all(math.isfinite(d) for ds in distances for d in ds):
                out[text] = Judgement([], [], error=_not_finite(temperature))
    return {text: out[text] for text in texts}


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
