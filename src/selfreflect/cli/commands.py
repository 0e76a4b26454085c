"""The ``selfreflect`` command table: each workflow command's words and the function that
runs it.

A function is imported only when its command runs or is looked up (the lazy loading the click
documentation describes), so a command's code dependencies (:mod:`selfreflect.code_deps`) are
its own module and what that imports, with the command line's entry (:mod:`selfreflect.cli`),
which builds its groups from this table and so imports it: editing it reruns every stage. The
commands no stage runs (``bench``, ``docs``) have their own table, :mod:`selfreflect.cli.tools`,
which the entry loads by name only when they run. Every module named lies below that entry
(none of them imports the command line's top).
"""

from __future__ import annotations

GROUPS = ("report", "bench", "docs")  # selfreflect GROUP NAME (:mod:`selfreflect.cli`)
TABLES = (  # selfreflect report NAME: the catalog's tables, selfreflect.cli.report.tables
    "main-table",
    "validation",
    "mc-study",
    "convergence",
    "cost-table",
    "human-agreement",
    "backend-agreement",
)
REPORT = (  # selfreflect report NAME: selfreflect.cli.report.<NAME with _>
    "performance",
    "controlled-scores",
    "mc-scores",
    "convergence-scores",
    "alt-metrics",
    "agreement-scores",
)
TOP = (  # selfreflect NAME: selfreflect.cli.<NAME with _>
    "tiny-model",
    "convert-model",
    "questions",
    "answers",
    "merge",
    "summarize",
    "score",
    "judge",
    "strategy-scores",
    "finetune-data",
    "finetune-train",
    "cluster-answers",
    "explorer",
    "export-answers",
    "import-answers",
    "dvc-yaml",
    "dvc-sync",
    "config-docs",
)


def own(package: str, name: str) -> str:
    """``"module:function"`` of the function NAME with _ of the module of that name in
    ``package``."""
    function = name.replace("-", "_")
    return f"{package}.{function}:{function}"


COMMANDS: dict[str, str] = {  # the command's words: "module:function"
    **{name: own("selfreflect.cli", name) for name in TOP},
    **{f"report {n}": f"selfreflect.cli.report.tables:{n.replace('-', '_')}" for n in TABLES},
    **{f"report {name}": own("selfreflect.cli.report", name) for name in REPORT},
}
TOOLS = "selfreflect.cli.tools:TOOLS"  # the bench and docs groups' table, loaded by name


def subcommands(group: str, table: dict[str, str] = COMMANDS) -> dict[str, str]:
    """``{name: "module:function"}`` of the commands of ``table`` right under ``group``
    (``""``: the top)."""
    prefix = f"{group} " if group else ""
    return {
        words.removeprefix(prefix): target
        for words, target in table.items()
        if words.startswith(prefix) and " " not in words.removeprefix(prefix)
    }


def command_name(words: list[str]) -> str:
    """The leading ``words`` of ``selfreflect WORDS…`` that name its command (``"report
    main-table"``), or ``""`` where the first names none."""
    named: list[str] = []
    for word in words:
        if " ".join([*named, word]) not in (*COMMANDS, *GROUPS):
            break
        named.append(word)
    return " ".join(named)
