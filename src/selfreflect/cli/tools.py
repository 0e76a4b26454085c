"""The table of the commands no workflow stage runs: ``selfreflect bench NAME`` (benchmarks,
which write JSON) and ``selfreflect docs NAME`` (pages of docs/ from that JSON).

The command line's entry loads this table by its name (:data:`selfreflect.cli.commands.TOOLS`)
when one of these groups runs or is listed, so it is no code dependency of a stage: adding a
benchmark or a page reruns no job (``tests/test_bench.py``).
"""

from __future__ import annotations

from selfreflect.cli.commands import own

BENCH = (  # selfreflect bench NAME: selfreflect.bench.<NAME with _>
    "scorer",
    "device-run",
    "hf-generation",
    "real-run",
    "finetuning",
    "power",
    "science-record",
    "explorer",
    "explorer-screenshots",
    "scale",
    "judge-memory",
    "judge-batching",
    "contexts",
    "growth",
    "paper-run",
    "calibrate-stopwords",
    "human-ratings",
)
DOCS = (  # selfreflect docs NAME: selfreflect.docs.<NAME with _>
    "scale",
    "paper-run",
    "performance",
    "real-model",
    "science",
    "finetuning",
    "power",
    "configs",
)
TOOLS: dict[str, str] = {  # the command's words: "module:function"
    **{f"bench {name}": own("selfreflect.bench", name) for name in BENCH},
    **{f"docs {name}": own("selfreflect.docs", name) for name in DOCS},
}
