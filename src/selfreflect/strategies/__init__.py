"""Summary strategies (docs/protocol.md §4), registered by name.

Built-ins: the paper's ``greedy``, ``basic``, ``cot``, ``sample_and_summarize``,
``concatenated_answers``, ``twostep_cot`` (module ``paper``) and, from related work,
``cluster_and_verbalize``, ``cluster_and_verbalize_llm``, ``sayself_rationale``,
``verbalized_confidence`` (module ``related``); ``finetuned_sft`` and ``finetuned_dpo`` (module
``finetuned``: a LoRA adapter's one pass). Users add strategies as plug-ins
(``summaries.plugins`` in the config, see :mod:`selfreflect.strategies.plugins`).
"""

from selfreflect.strategies import finetuned, paper, related  # noqa: F401 - registers built-ins
from selfreflect.strategies.context import Batch, Models
from selfreflect.strategies.plugins import Context, QuestionFailed
from selfreflect.strategies.registry import (
    StrategyError,
    builtin_names,
    check_strategies,
    register,
    resolve,
    strategy_prompts,
    strategy_setting_keys,
    strategy_settings,
)
from selfreflect.strategies.runner import open_models, summarize

__all__ = [
    "Batch",
    "Context",
    "Models",
    "QuestionFailed",
    "StrategyError",
    "builtin_names",
    "check_strategies",
    "open_models",
    "register",
    "resolve",
    "strategy_prompts",
    "strategy_setting_keys",
    "strategy_settings",
    "summarize",
]
