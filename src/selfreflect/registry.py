"""Named implementations, imported on first use: generation backends, judge backends and
dataset kinds (strategies have their own registry, :mod:`selfreflect.strategies.registry`).

A registry maps a name to ``"module.path:attribute"``. The config schema's enums and the CLI's
choices are its names (:func:`selfreflect.config.validate_config` checks them), so listing
them imports no engine.
"""

from __future__ import annotations

import importlib
from typing import Any

from selfreflect.errors import InputError


class Registry:
    """Names of one kind of implementation and where each lives."""

    def __init__(self, kind: str, targets: dict[str, str]) -> None:
        self.kind = kind
        self._targets = dict(targets)

    def names(self) -> list[str]:
        return list(self._targets)

    def load(self, name: str) -> Any:
        """The implementation registered as ``name``."""
        if name not in self._targets:
            known = ", ".join(self._targets)
            raise InputError(f"unknown {self.kind} '{name}' (known: {known})")
        module, _, attribute = self._targets[name].partition(":")
        return getattr(importlib.import_module(module), attribute)


BACKENDS = Registry(  # Generator subclasses, constructed from a model's spec
    "generation backend",
    {
        "vllm": "selfreflect.backends.vllm_engine:VllmGenerator",
        "hf": "selfreflect.backends.hf_engine:HfGenerator",
        "openai": "selfreflect.backends.openai_engine:OpenaiGenerator",
    },
)
JUDGES = Registry(  # Judge subclasses, loaded with Judge.open(spec, scoring settings, llm)
    "judge backend",
    {
        "hf": "selfreflect.scoring.hf_judge:HfJudge",
        "vllm": "selfreflect.scoring.vllm_judge:VllmJudge",
        "reference": "selfreflect.scoring.reference_judge:ReferenceJudge",
    },
)
DATASET_KINDS = Registry(  # questions.Preset: where a kind's records are and which fields
    "dataset kind",
    {
        name: f"selfreflect.questions:{name.upper()}"
        for name in ["natural_questions", "trivia_qa", "simpleqa", "mmlu", "local"]
    },
)
