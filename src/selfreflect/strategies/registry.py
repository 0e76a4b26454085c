"""Strategies by name, checked without importing one: the built-ins are :data:`STRATEGIES`
(each a function in ``paper``, ``related`` or ``finetuned``, imported when it runs) with the
prompts each renders (:data:`PROMPTS`); plug-ins come from the config
(:mod:`selfreflect.strategies.plugins`). No strategy imports this module (nor does the
package's ``__init__``), so the table lies above what it names."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from selfreflect.config import finetuned, registered_strategy
from selfreflect.errors import ConfigError, StrategyError
from selfreflect.registry import Registry
from selfreflect.strategies.plugins import check_plugin, plugin_strategy

if TYPE_CHECKING:
    from selfreflect.strategies.context import StrategyFn

STRATEGIES = Registry(  # the built-ins (docs/protocol.md §4): fn(Batch) -> summaries
    "strategy",
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
        "finetuned_grpo": "selfreflect.strategies.finetuned:finetuned",
    },
)
PROMPTS = {  # the prompts.yaml keys a built-in renders besides the system message (its params)
    "greedy": (),
    "basic": ("basic",),
    "cot": ("cot",),
    "sample_and_summarize": ("sample_and_summarize", "answer_list_item"),
    "concatenated_answers": ("answer_list_item",),
    "twostep_cot": ("twostep_cot_brainstorm", "twostep_cot_distill"),
    "cluster_and_verbalize": (
        "cluster_verbalize_first",
        "cluster_verbalize_more",
        "cluster_verbalize_separator",
    ),
    "cluster_and_verbalize_llm": ("cluster_and_verbalize_llm", "cluster_line"),
    "sayself_rationale": ("sayself_rationale", "cluster_line"),
    "verbalized_confidence": ("verbalized_confidence",),
    "finetuned_sft": ("basic",),
    "finetuned_dpo": ("basic",),
    "finetuned_grpo": ("basic",),
}
_NOT_SETTINGS = ("strategies", "datasets", "plugins")  # which jobs exist, not how they run


def builtin_names() -> list[str]:
    return STRATEGIES.names()


def resolve(name: str, plugins: dict[str, str]) -> StrategyFn:
    """The built-in strategy ``name`` (a seeded finetuned one: its method's) or the plug-in
    the config names ``name``."""
    if registered_strategy(name) in STRATEGIES:
        return STRATEGIES.load(registered_strategy(name))
    if name in plugins:
        return plugin_strategy(name, plugins[name])
    raise StrategyError(unknown_message(name, plugins))


def unknown_message(name: str, plugins: dict[str, str], trained: bool = True) -> str:
    """``unknown strategy 'NAME' (known: …)``, listing the finetuned ones only if ``trained``
    (no teacher or candidate of a finetuning is one)."""
    known = [s for s in [*STRATEGIES.names(), *plugins] if trained or not finetuned(s)]
    return f"unknown strategy '{name}' (known: {', '.join(known)})"


def check_strategies(config: dict[str, Any], source: str = "config") -> None:
    """One-line :class:`ConfigError` for an unknown strategy (listed, named a reference of the
    main table, or the finetuning's teacher or a candidate), a plug-in hiding a built-in or a
    plug-in whose module is no file of the project or does not define its function (read, not
    imported: checking a config runs none of its code)."""
    summaries = config["summaries"]
    for name, target in summaries["plugins"].items():
        if registered_strategy(name) in STRATEGIES:
            raise ConfigError(f"{source}: summaries.plugins: '{name}' is a built-in strategy")
        try:
            check_plugin(name, target)
        except StrategyError as err:
            raise ConfigError(f"{source}: summaries.plugins.{name}: {err}") from None
    named = [("summaries.strategies", name) for name in summaries["strategies"]]
    named += [("report.plan.references", name) for name in config["report"]["plan"]["references"]]
    if versus := config["report"]["plan"].get("versus"):
        named.append(("report.plan.versus.strategy", versus["strategy"]))
        named += [("report.plan.versus.others", name) for name in versus["others"]]
    named.append(("finetune.teacher", config["finetune"]["teacher"]))  # checked, though unused
    named += [("finetune.candidates", name) for name in config["finetune"]["candidates"]]
    for key, name in named:
        trained = not key.startswith("finetune.")  # a teacher or candidate is no adapter
        known = registered_strategy(name) in STRATEGIES or name in summaries["plugins"]
        if not known or (finetuned(name) and not trained):
            message = unknown_message(name, summaries["plugins"], trained)
            raise ConfigError(f"{source}: {key}: {message}")


def strategy_prompts(name: str) -> list[str]:
    """The prompts.yaml keys strategy ``name`` renders (a plug-in's own texts are its code)."""
    return ["system", *PROMPTS.get(registered_strategy(name), ())]


def strategy_setting_keys(summaries: dict[str, Any], name: str) -> list[tuple[str, ...]]:
    """The ``summaries`` key paths one strategy depends on (not other strategies' plug-ins,
    the list of strategies or of datasets)."""
    keys = [("summaries", key) for key in summaries if key not in _NOT_SETTINGS]
    return keys + ([("summaries", "plugins", name)] if name in summaries["plugins"] else [])


def strategy_settings(summaries: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``summaries`` settings one strategy depends on (not the lists of strategies and
    datasets): what :func:`strategy_setting_keys` tracks."""
    settings = {k: copy.deepcopy(v) for k, v in summaries.items() if k not in _NOT_SETTINGS}
    settings["plugins"] = {k: v for k, v in summaries["plugins"].items() if k == name}
    return settings
