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
from selfreflect.strategies.text import after_reasoning


@dataclass
class Models:
    """Zero-argument openers of the summariser and the subject (opened on first use)."""

    summarizer: Callable[[], Generator]
    subject: Callable[[], Generator]
    thinking: bool = False  # the summariser has a thinking mode (its spec's ``thinking``)


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
        **template_kwargs: Any,
    ) -> dict[int, list[str]]:
        """Complete ``chats`` (by row) in one call; failed rows are recorded and left out."""
        rows = list(chats)
        if not rows:
            return {}
        start = time.perf_counter()
        generations = generator.chat(
            [chats[r] for r in rows], [sampling(r) for r in rows], **template_kwargs
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
        """``num_fresh_answers`` new answers per question from the subject (SPEC §4)."""
        questions = self.rows()
        wanted = questions if rows is None else [r for r in rows if r in questions]
        chats = {r: question_chat(questions[r]) for r in wanted}
        settings = self.settings

        def sampling(row: int) -> Sampling:
            return Sampling(
                n=settings["num_fresh_answers"],
                temperature=settings["fresh_temperature"],
                max_tokens=settings["fresh_max_tokens"],
                seed=self.seeds[row],
            )

        return self.generate(self.models.subject(), chats, sampling)

    def summarize(
        self, chats: Mapping[int, list[Message]], thinking: bool = False
    ) -> dict[int, str]:
        """The summariser's completion of each chat (SPEC §4 decoding), by row.

        Greedy, or with ``thinking`` on a thinking summariser, sampled in thinking mode and
        cut to the text after the reasoning block; a block that never closes fails the row.
        """
        generator = self.models.summarizer()
        thinking = thinking and self.models.thinking
        template_kwargs = {"enable_thinking": thinking} if self.models.thinking else {}
        texts = self.generate(
            generator, chats, self._summary_sampling(generator, thinking), **template_kwargs
        )
        if not thinking:
            return {row: outputs[0] for row, outputs in texts.items()}
        summaries = {}
        for row, outputs in texts.items():
            summary = after_reasoning(outputs[0])
            if summary is None:
                self.fail(row, "thinking: the reasoning block never closed (no </think>)")
            else:
                summaries[row] = summary
        return summaries

    def _summary_sampling(self, generator: Generator, thinking: bool) -> Callable[[int], Sampling]:
        base = {"max_tokens": self.settings["max_tokens"]}
        if not generator.has_chat_template:
            base["stop"] = (". ",)
        if thinking:
            base.update(self.settings["thinking"])
        return lambda row: Sampling(seed=self.seeds[row], **base)
