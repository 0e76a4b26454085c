"""The one loader of ``"module.path:attribute"`` targets, and :class:`Registry`, a table of them.

A registry maps a name to where its implementation lives, imported on first use, so listing
the names (the config's checks, the CLI's choices) imports no implementation. Each table lives
beside the function that loads from it, above the implementations it names, and none of them
imports it back: the engines (:data:`selfreflect.backends.registry.BACKENDS`,
:data:`selfreflect.scoring.registry.JUDGES`) and the built-in strategies
(:data:`selfreflect.strategies.registry.STRATEGIES`). The command line's lazy commands
(:mod:`selfreflect.cli.commands`) are loaded by :func:`load` too. (The config's strategy
plug-ins are the project's files, checked before they are imported:
:mod:`selfreflect.strategies.plugins`.)
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
