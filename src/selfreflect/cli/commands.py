"""The ``selfreflect`` command table: each command's words and the function that runs it.

A function is imported only when its command runs or is looked up (the lazy loading the click
documentation describes), so a command's code dependencies (:mod:`selfreflect.code_deps`) are
its own module and what that imports. The table is the command line's own: its entry
(:mod:`selfreflect.cli`) builds its groups from it and looks commands up in it, and every
module it names lies below that entry (none of them imports the command line's top).
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
    "paper-run",
    "calibrate-stopwords",
    "human-ratings",
)
DOCS = (  # selfreflect docs NAME: a page of docs/ from a benchmark's JSON, selfreflect.docs.<NAME>
    "scale",
    "paper-run",
    "performance",
    "real-model",
    "science",
    "finetuning",
    "power",
    "configs",
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
    "explorer",
    "export-answers",
    "import-answers",
    "dvc-yaml",
    "dvc-sync",
    "config-docs",
)


def _own(package: str, name: str) -> str:
    """The function NAME with _ of the module of that name in ``package``."""
    function = name.replace("-", "_")
    return f"{package}.{function}:{function}"


COMMANDS: dict[str, str] = {  # the command's words: "module:function"
    **{name: _own("selfreflect.cli", name) for name in TOP},
    **{f"report {n}": f"selfreflect.cli.report.tables:{n.replace('-', '_')}" for n in TABLES},
    **{f"report {name}": _own("selfreflect.cli.report", name) for name in REPORT},
    **{f"bench {name}": _own("selfreflect.bench", name) for name in BENCH},
    **{f"docs {name}": _own("selfreflect.docs", name) for name in DOCS},
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
        if " ".join([*named, word]) not in (*COMMANDS, *GROUPS):
            break
        named.append(word)
    return " ".join(named)
