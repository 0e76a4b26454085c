"""The ``selfreflect`` command table: each command's words and the function that runs it.

A function is imported only when its command runs or is looked up (the lazy loading the click
documentation describes), so a command's code dependencies (:mod:`selfreflect.code_deps`) are
its own module and what that imports. The command line (:mod:`selfreflect.cli`) builds its
groups from this table; the workflow's rules find through it the command a job runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from selfreflect.registry import load

if TYPE_CHECKING:
    import click

REPORT = (  # selfreflect report NAME: selfreflect.cli.report.<NAME with _>
    "main-table",
    "validation",
    "mc-study",
    "convergence",
    "cost-table",
    "human-agreement",
    "backend-agreement",
    "performance",
    "controlled-scores",
    "mc-scores",
    "convergence-scores",
    "alt-metrics",
    "agreement-scores",
)
BENCH = (  # selfreflect bench NAME: benchmarks (they write JSON), selfreflect.bench.<NAME with _>
    "scorer",
    "hf-generation",
    "real-run",
    "finetuning",
    "power",
    "science-record",
    "explorer",
    "explorer-screenshots",
    "scale",
    "growth",
    "calibrate-stopwords",
    "human-ratings",
)
DOCS = (  # selfreflect docs NAME: a page of docs/ from a benchmark's JSON, selfreflect.docs.<NAME>
    "scale",
    "performance",
    "real-model",
    "science",
    "finetuning",
    "power",
)
TOP = (  # selfreflect NAME: selfreflect.cli.<NAME with _>; report, bench and docs are groups
    "tiny-model",
    "convert-model",
    "questions",
    "answers",
    "merge",
    "summarize",
    "score",
    "judge",
    "strategy-scores",
    "report",
    "finetune-data",
    "finetune-train",
    "explorer",
    "export-answers",
    "import-answers",
    "dvc-yaml",
    "dvc-sync",
    "config-docs",
    "bench",
    "docs",
)


def _target(package: str, name: str) -> str:
    function = name.replace("-", "_")
    return f"{package}.{function}:{function}"


COMMANDS: dict[str, str] = {  # the command's words: "module:function"
    **{name: _target("selfreflect.cli", name) for name in TOP},
    **{f"report {name}": _target("selfreflect.cli.report", name) for name in REPORT},
    **{f"bench {name}": _target("selfreflect.bench", name) for name in BENCH},
    **{f"docs {name}": _target("selfreflect.docs", name) for name in DOCS},
}


def subcommands(group: str) -> dict[str, str]:
    """``{name: "module:function"}`` of the commands right under ``group`` (``""``: the top)."""
    prefix = f"{group} " if group else ""
    return {
        words.removeprefix(prefix): target
        for words, target in COMMANDS.items()
        if words.startswith(prefix) and " " not in words.removeprefix(prefix)
    }


def command_name(words: list[str]) -> str:
    """The leading ``words`` of ``selfreflect WORDS…`` that name its command (``"report
    main-table"``), or ``""`` where the first names none."""
    named: list[str] = []
    for word in words:
        if " ".join([*named, word]) not in COMMANDS:
            break
        named.append(word)
    return " ".join(named)


def find_command(command: str) -> click.Command:
    """The click command ``selfreflect COMMAND`` runs (``"answers"``, ``"report main-table"``)."""
    if command not in COMMANDS:
        raise ValueError(f"'selfreflect {command}': no such command")
    return load(COMMANDS[command])
