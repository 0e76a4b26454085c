"""Summary strategies (docs/protocol.md §4), registered by name.

Built-ins: the paper's ``greedy``, ``basic``, ``cot``, ``sample_and_summarize``,
``concatenated_answers``, ``twostep_cot`` (module ``paper``) and, from related work,
``cluster_and_verbalize``, ``cluster_and_verbalize_llm``, ``sayself_rationale``,
``verbalized_confidence`` (module ``related``); ``finetuned_sft``, ``finetuned_dpo`` and
``finetuned_grpo`` (module ``finetuned``: a LoRA adapter's one pass). Users add strategies as
plug-ins (``summaries.plugins`` in the config, see :mod:`selfreflect.strategies.plugins`).

This package's face is what a plug-in uses (:class:`Context`, :class:`QuestionFailed`,
:class:`StrategyError`). Strategies by name (the built-ins' table, their prompts and settings,
checked without importing a strategy or an engine) are :mod:`selfreflect.strategies.registry`'s,
which no strategy imports; running strategies on models is
:mod:`selfreflect.strategies.runner`'s (the ``summarize`` command's).
"""

from selfreflect.errors import StrategyError
from selfreflect.strategies.plugins import Context, QuestionFailed

__all__ = ["Context", "QuestionFailed", "StrategyError"]
