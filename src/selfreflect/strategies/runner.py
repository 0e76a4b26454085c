"""Run one strategy on every question of a questions table: the ``summaries`` rows.

Strategies get the question texts only (the questions table has no answers), per-question
seeds, the models and the ``summaries`` settings. A question that fails keeps its row with
``error`` set; a strategy that fails as a whole raises :class:`StrategyError` naming it.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import pandas as pd

from selfreflect.backends import Generator
from selfreflect.backends.registry import open_generator
from selfreflect.config import model_spec
from selfreflect.errors import SelfReflectError, StrategyError
from selfreflect.seeds import question_seed
from selfreflect.strategies.context import Batch, Cost, Models
from selfreflect.strategies.registry import resolve


def fresh_seed(run_seed: int, question_id: str) -> int:
    """The fresh answers' seed of a question: never the seed of its held-out answers."""
    return question_seed(run_seed, f"fresh:{question_id}")


def summarizer_name(config: dict[str, Any], subject: str) -> str:
    return config["summarizer"] or subject


def open_models(
    config: dict[str, Any], subject: str, stack: ExitStack, adapter: str | None = None
) -> Models:
    """Openers of the summariser (with the LoRA ``adapter``, if one) and the subject, each
    loaded on first use and closed by ``stack``; when both name the same weights (path and
    endpoint, no adapter) one engine serves both."""
    specs = {
        "summarizer": {**model_spec(config, summarizer_name(config, subject)), "adapter": adapter},
        "subject": model_spec(config, subject),
    }
    same = adapter is None and all(
        specs["summarizer"][k] == specs["subject"][k] for k in ("path", "base_url")
    )
    loaded: dict[str, Generator] = {}

    def opener(role: str):
        def get() -> Generator:
            key = "summarizer" if same else role
            if key not in loaded:
                loaded[key] = stack.enter_context(open_generator(specs[key]))
            return loaded[key]

        return get

    return Models(opener("summarizer"), opener("subject"), specs["summarizer"]["thinking"])


def summarize(
    strategy: str,
    questions: pd.DataFrame,
    models: Models,
    config: dict[str, Any],
    summarizer: str,
) -> pd.DataFrame:
    """One ``summaries`` row per question of ``questions`` (columns ``id``, ``question``);
    ``attrs`` holds what the strategy noted it used (e.g. the clustering ``embedder``)."""
    settings = config["summaries"]
    fn = resolve(strategy, settings["plugins"])
    batch = Batch(
        questions=list(questions["question"]),
        seeds=[fresh_seed(config["seed"], qid) for qid in questions["id"]],
        models=models,
        settings=settings,
    )
    try:
        summaries = fn(batch)
    except StrategyError:
        raise
    except SelfReflectError as err:
        raise StrategyError(f"strategy '{strategy}': {err}") from err
    except Exception as err:
        message = f"{type(err).__name__}: {err}".replace("\n", " ")
        raise StrategyError(f"strategy '{strategy}' failed: {message}") from err
    rows = []
    for row, (qid, question) in enumerate(questions[["id", "question"]].itertuples(index=False)):
        cost = batch.costs.get(row, Cost())
        summary = summaries.get(row)
        rows.append(
            {
                "id": qid,
                "question": question,
                "strategy": strategy,
                "summary": summary,
                "summarizer": summarizer,
                "prompt_tokens": cost.prompt_tokens,
                "completion_tokens": cost.completion_tokens,
                "seconds": cost.seconds,
                "error": None if summary is not None else batch.errors.get(row, "no summary"),
            }
        )
    table = pd.DataFrame(rows)
    table.attrs.update(batch.notes)
    return table
