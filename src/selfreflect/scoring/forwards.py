"""The judge's forward passes: next-token logits at the target positions of a question's
contexts, behind one small interface.

A backend (``hf_judge``, ``vllm_judge``, ``reference_judge``) implements :meth:`Judge.logits`
(and optionally :meth:`Judge.prepare`, per-context state such as a prefix KV cache);
:meth:`Judge.cross_judge` walks a question's contexts in batches of masked words, so at most one
batch of vocabulary vectors per context is alive at a time, and keeps each task's distance
(:mod:`~selfreflect.scoring.metric`) and, if asked, the judge's top predictions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from selfreflect.families import PromptFormat
from selfreflect.scoring import metric
from selfreflect.scoring.contexts import ContextTasks


@dataclass(frozen=True)
class Judged:
    """A context's tasks as the judge saw them: each task's distance (n,) and the judge's
    ``k`` most likely next tokens with their probabilities (n, k) at temperature T."""

    distances: torch.Tensor
    top_tokens: torch.Tensor
    top_probs: torch.Tensor

    @staticmethod
    def cat(parts: Sequence[Judged]) -> Judged:
        """The parts' tasks in order, copied to the CPU at once (one sync per context, not
        one per batch: a batch's results stay on the device while the next is computed)."""
        return Judged(
            torch.cat([part.distances for part in parts]).cpu(),
            torch.cat([part.top_tokens for part in parts]).cpu(),
            torch.cat([part.top_probs for part in parts]).cpu(),
        )


def _judged(p: torch.Tensor, q: torch.Tensor, top_k: int) -> Judged:
    """Tasks with distributions ``p``, measured against the reference context's ``q``."""
    tokens, probs = metric.top_predictions(p, top_k)
    return Judged(metric.total_variation(p, q), tokens, probs)


class Judge(ABC):
    """A loaded judge model. ``batch_size`` counts masked words per step (None: all at once);
    ``forward_tokens`` counts the tokens the model has computed (prefills and trees),
    ``forwards`` the steps."""

    name: str
    tokenizer: Any
    format: PromptFormat  # renders the scoring chats (thinking off) for the judge's family
    max_model_len: int
    batch_size: int | None = None
    forward_tokens: int = 0
    forwards: int = 0

    def prepare(self, tasks: ContextTasks) -> Any:
        """State reused for every batch of one context (default: the tasks themselves)."""
        return tasks

    @abstractmethod
    def logits(self, state: Any, rows: range) -> torch.Tensor:
        """Logits (or log-probabilities) predicting every target token of sequences ``rows``.

        Rows follow the sequences in order and each sequence's targets in order; shape (n, V).
        """

    def spans(self, tasks: ContextTasks) -> list[range]:
        """The sequences of each forward over ``tasks``: ``batch_size`` at a time."""
        total = len(tasks.sequences)
        step = self.batch_size or max(total, 1)
        return [range(begin, min(begin + step, total)) for begin in range(0, total, step)]

    def batches(
        self, tasks: ContextTasks, spans: list[range] | None = None
    ) -> Iterator[torch.Tensor]:
        """The logits of ``tasks``' sequences, a forward per span (default: :meth:`spans`;
        one prepared state per context); each (n, V)."""
        state = self.prepare(tasks)
        for rows in self.spans(tasks) if spans is None else spans:
            self.forwards += 1
            yield self.logits(state, rows)

    def distances(
        self, reference: ContextTasks, summaries: Sequence[ContextTasks], temperature: float
    ) -> list[torch.Tensor]:
        """Per summary, the distance of each task to the reference context's; each (n,) on CPU."""
        return [judged.distances for judged in self.judge(reference, summaries, temperature)[1]]

    def judge(
        self,
        reference: ContextTasks,
        summaries: Sequence[ContextTasks],
        temperature: float,
        top_k: int = 0,
    ) -> tuple[Judged, list[Judged]]:
        """The reference context's and each summary's tasks as the judge saw them (on CPU).

        Distances are to the reference context's distributions (the reference's own are 0).
        """
        references, judged = self.cross_judge([reference], summaries, temperature, top_k)
        return references[0], [row[0] for row in judged]

    def cross_judge(
        self,
        references: Sequence[ContextTasks],
        summaries: Sequence[ContextTasks],
        temperature: float,
        top_k: int = 0,
    ) -> tuple[list[Judged], list[list[Judged]]]:
        """Each reference context's tasks as the judge saw them, and each summary's measured
        against each reference, ``[summary][reference]`` (on CPU, copied once the question's
        forwards are done). Every context's logits are computed once, batch by batch; top
        predictions are kept for the first reference and every summary. Every context's
        forwards hold the first reference's :meth:`spans`, so batches align task by task."""
        ref_parts: list[list[Judged]] = [[] for _ in references]
        parts: list[list[list[Judged]]] = [[[] for _ in references] for _ in summaries]
        with torch.inference_mode():
            spans = self.spans(references[0]) if references else []
            summary_batches = [self.batches(tasks, spans) for tasks in summaries]
            reference_batches = [self.batches(tasks, spans) for tasks in references]
            for logits in zip(*reference_batches, strict=True):
                qs = [metric.distributions(x, temperature) for x in logits]
                for i, q in enumerate(qs):
                    ref_parts[i].append(_judged(q, q, top_k if i == 0 else 0))
                for row, batches in zip(parts, summary_batches, strict=True):
                    p = metric.distributions(next(batches), temperature)
                    tokens, probs = metric.top_predictions(p, top_k)
                    for cell, q in zip(row, qs, strict=True):
                        cell.append(Judged(metric.total_variation(p, q), tokens, probs))
        return (
            [Judged.cat(part) for part in ref_parts],
            [[Judged.cat(cell) for cell in row] for row in parts],
        )

    @classmethod
    @abstractmethod
    def open(cls, spec: dict[str, Any], settings: dict[str, Any], llm: Any = None) -> Judge:
        """Load the judge of a ``models`` entry with ``scoring`` settings
        (:func:`selfreflect.scoring.registry.open_judge`)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the model (optional)."""

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
