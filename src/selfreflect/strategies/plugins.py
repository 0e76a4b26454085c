"""User strategies: one function ``fn(ctx: Context) -> str`` named ``module.path:function``.

The module is imported with the working directory on ``sys.path``; it and the modules it imports
from there are code of its strategy's jobs (:func:`selfreflect.code_deps.plugin_files`), so an
edit reruns its summaries and what follows them. The function is called once per question; it
can run the summariser (``ctx.chat`` or the raw ``ctx.generator``) and draw fresh answers from
the subject (``ctx.fresh_answers()``). Raising :class:`QuestionFailed` fails just that question;
any other exception fails the strategy, naming it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from selfreflect.errors import StrategyError
from selfreflect.progress import progress
from selfreflect.registry import load

if TYPE_CHECKING:  # a plug-in's context names no engine: the summarize job opens the models
    from selfreflect.backends import Generator, Sampling
    from selfreflect.chat import Message
    from selfreflect.strategies.context import Batch, StrategyFn

T = TypeVar("T")


class QuestionFailed(Exception):
    """Raised by a plug-in (or its context) to fail one question with a reason."""


class Context:
    """What a plug-in gets for one question: its text, the summariser, fresh subject answers."""

    def __init__(self, batch: Batch, row: int) -> None:
        self.question: str = batch.questions[row]
        self._batch = batch
        self._row = row

    @property
    def generator(self) -> Generator:
        """The summariser's generation handle (its calls are not metered)."""
        return self._batch.models.summarizer()

    def chat(self, messages: list[Message], sampling: Sampling | None = None) -> str:
        """The summariser's first completion of ``messages``: greedy summary decoding by default."""
        batch, row = self._batch, self._row
        if sampling is None:
            return self._get(batch.summarize({row: messages}))
        generator = batch.models.summarizer()
        return self._get(batch.generate(generator, {row: messages}, lambda _: sampling))[0]

    def fresh_answers(self) -> list[str]:
        """``num_fresh_answers`` new answers of the subject to the question (T=1)."""
        return self._get(self._batch.fresh_answers([self._row]))

    def _get(self, by_row: dict[int, T]) -> T:
        if self._row not in by_row:
            raise QuestionFailed(self._batch.errors[self._row])
        return by_row[self._row]


def load_plugin(name: str, target: str) -> Callable[[Context], str]:
    """Import ``module.path:function``; an import failure names the strategy."""
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        fn = load(target)
    except Exception as err:  # importing runs the module: any error means it cannot be loaded
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        raise StrategyError(f"strategy '{name}': cannot load plug-in {target}: {reason}") from None
    if not callable(fn):
        raise StrategyError(f"strategy '{name}': plug-in {target} is not a function")
    return fn


def plugin_strategy(name: str, target: str) -> StrategyFn:
    """A batch strategy that calls the plug-in once per question."""
    fn = load_plugin(name, target)

    def run(batch: Batch) -> dict[int, str]:
        summaries = {}
        rows = batch.rows()
        for row in progress(rows, f"strategy {name}: questions", len(rows)):
            try:
                summary = fn(Context(batch, row))
            except QuestionFailed as failure:
                batch.fail(row, str(failure))
                continue
            except Exception as err:
                raise StrategyError(
                    f"strategy '{name}': plug-in {target} raised {type(err).__name__}: {err}"
                    f" (question: {batch.questions[row]!r})"
                ) from err
            if not isinstance(summary, str):
                raise StrategyError(
                    f"strategy '{name}': plug-in {target} returned {type(summary).__name__},"
                    " not a summary string"
                )
            summaries[row] = summary
        return summaries

    return run
