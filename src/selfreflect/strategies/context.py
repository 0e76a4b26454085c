"""What a strategy is given: question texts, the models and settings, never test answers.

A :class:`Batch` holds every question of one job. Strategies run each step for all questions
in one batched backend call, keyed by row; a row whose generation fails is recorded with its
reason and drops out of later steps. Token counts and seconds of every call are metered per row.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from selfreflect.backends import Generator, Sampling
from selfreflect.chat import Message, question_chat


@dataclass
class Models:
    """Zero-argument openers of the summariser and the subject (opened on first use)."""

    summarizer: Callable[[], Generator]
    subject: Callable[[], Generator]
    thinking: bool = False  # the summariser runs in thinking mode (its spec's ``thinking``)


@dataclass
class Cost:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class Batch:
    """The questions of one job. ``seeds`` are per-question sampling seeds (not answers)."""

    questions: Sequence[str]
    seeds: Sequence[int]
    models: Models
    settings: dict[str, Any]  # the validated ``summaries`` config section
    errors: dict[int, str] = field(default_factory=dict)
    costs: dict[int, Cost] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # e.g. the embedder used; -> metadata

    def rows(self) -> dict[int, str]:
        """Question text by row, for the rows that have not failed."""
        return {r: q for r, q in enumerate(self.questions) if r not in self.errors}

    def fail(self, row: int, reason: str) -> None:
        self.errors.setdefault(row, reason)

    def generate(
        self,
        generator: Generator,
        chats: Mapping[int, list[Message]],
        sampling: Callable[[int], Sampling],
        thinking: bool = False,
    ) -> dict[int, list[str]]:
        """Complete ``chats`` (by row) in one call; failed rows are recorded and left out."""
        rows = list(chats)
        if not rows:
            return {}
        start = time.perf_counter()
        generations = generator.chat(
            [chats[r] for r in rows], [sampling(r) for r in rows], thinking=thinking
        )
        share = (time.perf_counter() - start) / len(rows)
        texts = {}
        for row, generation in zip(rows, generations, strict=True):
            cost = self.costs.setdefault(row, Cost())
            cost.prompt_tokens += generation.prompt_tokens
            cost.completion_tokens += generation.completion_tokens
            cost.seconds += share
            if generation.error is not None:
                self.fail(row, generation.error)
            else:
                texts[row] = generation.texts
        return texts

    def fresh_answers(self, rows: Sequence[int] | None = None) -> dict[int, list[str]]:
        """``num_fresh_answers`` new answers per question from the subject (docs/protocol.md
        §4), with thinking off; a base model's stop at ``". "``."""
        questions = self.rows()
        wanted = questions if rows is None else [r for r in rows if r in questions]
        chats = {r: question_chat(questions[r]) for r in wanted}
        settings = self.settings
        subject = self.models.subject()

        def sampling(row: int) -> Sampling:
            return Sampling(
                n=settings["num_fresh_answers"],
                temperature=settings["fresh_temperature"],
                max_tokens=settings["fresh_max_tokens"],
                stop=subject.format.summary_stop,
                seed=self.seeds[row],
            )

        return self.generate(subject, chats, sampling)

    def summarize(self, chats: Mapping[int, list[Message]]) -> dict[int, str]:
        """The summariser's completion of each chat (docs/protocol.md §4 decoding), by row.

        Greedy with thinking off; a summariser with ``thinking`` on samples every chat in
        thinking mode and keeps the text after its reasoning (as ``fidelity`` says; a row whose
        reasoning cannot be removed fails).
        """
        generator = self.models.summarizer()
        thinking = self.models.thinking
        sampling = self._summary_sampling(generator, thinking)
        texts = self.generate(generator, chats, sampling, thinking=thinking)
        if not thinking:
            return {row: outputs[0] for row, outputs in texts.items()}
        summaries = {}
        for row, outputs in texts.items():
            summary = generator.format.after_reasoning(outputs[0])
            if summary is None:
                self.fail(row, "thinking: the reasoning block never closed (no </think>)")
            else:
                summaries[row] = summary
        return summaries

    def _summary_sampling(self, generator: Generator, thinking: bool) -> Callable[[int], Sampling]:
        base: dict[str, Any] = {"max_tokens": self.settings["max_tokens"]}
        base["stop"] = generator.format.summary_stop
        if thinking:
            base.update(self.settings["thinking"])
        return lambda row: Sampling(seed=self.seeds[row], **base)


StrategyFn = Callable[[Batch], dict[int, str]]
"""A strategy: summaries by row for the questions of a batch (failed rows via ``batch.fail``)."""
