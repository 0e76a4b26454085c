"""Named implementations, imported on first use: generation backends, judge backends, dataset
kinds and the built-in summary strategies.

A registry maps a name to ``"module.path:attribute"``, which :func:`load` imports (the one
loader of such targets: the command line's lazy commands and the config's strategy plug-ins
use it too). The config schema's enums, the CLI's choices and the strategy names a config may
list are a registry's names (:func:`selfreflect.config.validate_config` checks them), so
listing them imports no implementation.
"""

from __future__ import annotations

import importlib
from typing import Any

from selfreflect.errors import InputError


def load(target: str) -> Any:
    """The attribute ``"module.path:attribute"`` names, its module imported now."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


class Registry:
    """Names of one kind of implementation and where each lives."""

    def __init__(self, kind: str, targets: dict[str, str]) -> None:
        self.kind = kind
        self._targets = dict(targets)

    def names(self) -> list[str]:
        return list(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def load(self, name: str) -> Any:
        """The implementation registered as ``name``."""
        if name not in self._targets:
            known = ", ".join(self._targets)
            raise InputError(f"unknown {self.kind} '{name}' (known: {known})")
        return load(self._targets[name])


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
STRATEGIES = Registry(  # built-in summary strategies (docs/protocol.md §4): fn(Batch) -> summaries
    "strategy",  # the prompts each renders: selfreflect.strategies.registry.PROMPTS
    {
        "greedy": "selfreflect.strategies.paper:greedy",
        "basic": "selfreflect.strategies.paper:basic",
        "cot": "selfreflect.strategies.paper:cot",
        "sample_and_summarize": "selfreflect.strategies.paper:sample_and_summarize",
        "concatenated_answers": "selfreflect.strategies.paper:concatenated_answers",
        "twostep_cot": "selfreflect.strategies.paper:twostep_cot",
        "cluster_and_verbalize": "selfreflect.strategies.related:cluster_and_verbalize",
        "cluster_and_verbalize_llm": "selfreflect.strategies.related:cluster_and_verbalize_llm",
        "sayself_rationale": "selfreflect.strategies.related:sayself_rationale",
        "verbalized_confidence": "selfreflect.strategies.related:verbalized_confidence",
        "finetuned_sft": "selfreflect.strategies.finetuned:finetuned",
        "finetuned_dpo": "selfreflect.strategies.finetuned:finetuned",
    },
)
