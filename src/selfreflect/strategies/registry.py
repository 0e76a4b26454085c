"""Strategies by name: built-ins register with :func:`register`, plug-ins come from the config."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from selfreflect.config import registered_strategy
from selfreflect.errors import ConfigError
from selfreflect.strategies.context import StrategyError, StrategyFn
from selfreflect.strategies.plugins import load_plugin, plugin_strategy

_BUILTIN: dict[str, StrategyFn] = {}
_PROMPTS: dict[str, tuple[str, ...]] = {}
_NOT_SETTINGS = ("strategies", "datasets", "plugins")  # which jobs exist, not how they run


def register(name: str, prompts: tuple[str, ...] = ()) -> Callable[[StrategyFn], StrategyFn]:
    """Decorator: make ``fn`` the built-in strategy ``name``, rendering the prompts.yaml keys
    ``prompts`` (besides the system message; its jobs rerun when one of them changes)."""

    def add(fn: StrategyFn) -> StrategyFn:
        if name in _BUILTIN:
            raise ValueError(f"strategy '{name}' is registered twice")
        _BUILTIN[name] = fn
        _PROMPTS[name] = prompts
        return fn

    return add


def builtin_names() -> list[str]:
    return list(_BUILTIN)


def resolve(name: str, plugins: dict[str, str]) -> StrategyFn:
    """The built-in strategy ``name`` (a seeded finetuned one: its method's) or the plug-in
    the config names ``name``."""
    if (builtin := _BUILTIN.get(registered_strategy(name))) is not None:
        return builtin
    if name in plugins:
        return plugin_strategy(name, plugins[name])
    raise StrategyError(unknown_message(name, plugins))


def unknown_message(name: str, plugins: dict[str, str]) -> str:
    known = ", ".join([*_BUILTIN, *plugins])
    return f"unknown strategy '{name}' (known: {known})"


def check_strategies(config: dict[str, Any], source: str = "config") -> None:
    """One-line :class:`ConfigError` for an unknown strategy (listed, named a reference of the
    main table, or the finetuning's teacher or a candidate), a plug-in hiding a built-in or a
    plug-in that cannot be imported."""
    summaries = config["summaries"]
    for name, target in summaries["plugins"].items():
        if registered_strategy(name) in _BUILTIN:
            raise ConfigError(f"{source}: summaries.plugins: '{name}' is a built-in strategy")
        try:
            load_plugin(name, target)
        except StrategyError as err:
            raise ConfigError(f"{source}: summaries.plugins.{name}: {err}") from None
    named = [("summaries.strategies", name) for name in summaries["strategies"]]
    named += [("report.plan.references", name) for name in config["report"]["plan"]["references"]]
    named.append(("finetune.teacher", config["finetune"]["teacher"]))  # checked, though unused
    named += [("finetune.candidates", name) for name in config["finetune"]["candidates"]]
    for key, name in named:
        if registered_strategy(name) not in _BUILTIN and name not in summaries["plugins"]:
            raise ConfigError(f"{source}: {key}: {unknown_message(name, summaries['plugins'])}")


def strategy_prompts(name: str) -> list[str]:
    """The prompts.yaml keys strategy ``name`` renders (a plug-in's own texts are its code)."""
    return ["system", *_PROMPTS.get(registered_strategy(name), ())]


def strategy_setting_keys(summaries: dict[str, Any], name: str) -> list[tuple[str, ...]]:
    """The ``summaries`` key paths one strategy depends on (not other strategies' plug-ins,
    the list of strategies or of datasets)."""
    keys = [("summaries", key) for key in summaries if key not in _NOT_SETTINGS]
    return keys + ([("summaries", "plugins", name)] if name in summaries["plugins"] else [])


def strategy_settings(summaries: dict[str, Any], name: str) -> dict[str, Any]:
    """The ``summaries`` settings one strategy depends on (not the list of other strategies)."""
    settings = copy.deepcopy(summaries)
    del settings["strategies"]
    settings["plugins"] = {k: v for k, v in summaries["plugins"].items() if k == name}
    return settings
