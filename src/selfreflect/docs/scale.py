"""docs/scale.md from what ``selfreflect bench scale`` recorded (docs/scale.json), what
``selfreflect bench growth`` recorded (docs/growth.json) and the GPU scorer benchmarks
(its judge work per question): the paper's size after the judge and the growth of the real run,
pointing to docs/paper_run.md (docs/paper_run.json) for the whole run predicted.

    selfreflect docs scale [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from selfreflect.docs import publish, render
from selfreflect.docs.tables import table
from selfreflect.fileio import read_json, read_yaml

RECORD = Path("docs") / "scale.json"
GROWTH = Path("docs") / "growth.json"
PAPER_RUN = Path("docs") / "paper_run.json"
DOC = Path("docs") / "scale.md"
MEMORY_BUDGET_MIB = 4 * 1024  # the peak each job must stay under at the paper's size
LINEAR = (0.8, 1.2)  # a rule's log-log slope of CPU time against questions counted as linear


def rule_table(record: dict[str, Any]) -> pd.DataFrame:
    """Per rule: jobs, total and longest wall time, CPU time, largest peak memory, outputs."""
    jobs = pd.DataFrame(record["jobs"])
    rules = jobs.groupby("rule").agg(
        jobs=("rule", "size"),
        wall_s=("wall_s", "sum"),
        longest_job_s=("wall_s", "max"),
        cpu_s=("cpu_s", "sum"),
        peak_rss_mib=("peak_rss_mib", "max"),
    )
    outputs = pd.DataFrame(record["outputs"]).T
    rules = rules.join(outputs.rename(columns={"files": "output_files", "mib": "output_mib"}))
    counts = ["jobs", "peak_rss_mib", "output_files"]
    rules[counts] = rules[counts].astype(int)
    return rules.sort_values("peak_rss_mib", ascending=False)


def run_context(record: dict[str, Any]) -> dict[str, Any]:
    """The synthetic run's size, each rule's time and memory, the plans."""
    rules = rule_table(record)
    peak = int(rules["peak_rss_mib"].max())
    judgements = [m for p, m in record["inputs"].items() if "/judgements/" in p]
    plans = [[plan["shards"], plan["jobs"], f"{plan['seconds']:g}"] for plan in record["plans"]]
    return {
        "record": record,
        "rules": rules,
        "peak": peak,
        "peak_rule": rules["peak_rss_mib"].idxmax(),
        "verdict": "under" if peak < MEMORY_BUDGET_MIB else "over",
        "judgement_mib": ", ".join(f"{m:g} MiB" for m in judgements),
        "embedder": read_yaml(Path(record["config"]))["summaries"]["cluster"]["embedder"],
        "plans": table(["shards", "jobs", "seconds to plan"], plans, align="rrr"),
    }


def slope(sizes: list[float], values: list[float]) -> float:
    """The least-squares slope of log(values) against log(sizes): 1 is linear growth."""
    x, y = np.log(sizes), np.log(np.maximum(values, 1e-9))
    return float(np.polyfit(x, y, 1)[0])


def growth_kind(exponent: float) -> str:
    if exponent < LINEAR[0]:
        return "sublinear"
    return "linear" if exponent <= LINEAR[1] else "superlinear"


def growth_table(growth: dict[str, Any]) -> pd.DataFrame:
    """Per rule: CPU seconds at each size, their growth exponent and kind, the largest size's
    wall seconds, peak memory and output MiB."""
    sizes = growth["sizes"]
    questions = [size["questions"] for size in sizes]
    cpu = pd.DataFrame(
        {
            f"cpu_s@{size['questions']}": pd.DataFrame(size["jobs"]).groupby("rule")["cpu_s"].sum()
            for size in sizes
        }
    ).fillna(0.0)
    cpu["exponent"] = [slope(questions, list(row)) for row in cpu.to_numpy()]
    cpu["growth"] = cpu["exponent"].map(growth_kind)
    largest = pd.DataFrame(sizes[-1]["jobs"]).groupby("rule")
    cpu[f"wall_s@{questions[-1]}"] = largest["wall_s"].sum()
    cpu[f"peak_rss_mib@{questions[-1]}"] = largest["peak_rss_mib"].max().astype(int)
    outputs = pd.DataFrame(sizes[-1]["outputs"]).T["mib"]
    cpu[f"output_mib@{questions[-1]}"] = outputs.reindex(cpu.index)
    return cpu.round({"exponent": 2}).sort_values(cpu.columns[len(sizes) - 1], ascending=False)


def growth_context(growth: dict[str, Any]) -> dict[str, Any]:
    """The growth and prediction sections."""
    rules = growth_table(growth)
    sizes = growth["sizes"]
    work = growth["judge_work"]
    header = ["N", "tasks", "reference tokens", "summary tokens", "reference FLOPs"]
    rows = [
        [
            c["answers"],
            f"{c['tasks']:.0f}",
            f"{c['reference']['tokens']:,.0f}",
            f"{c['summary']['tokens']:,.0f}",
            f"{c['reference']['flops']:.3g}",
            f"{c['summary']['flops']:.3g}",
        ]
        for c in work["cases"]
    ]
    paper = read_json(PAPER_RUN)
    return {
        "growth": growth,
        "growth_rules": rules,
        "questions": [size["questions"] for size in sizes],
        "answers": sizes[0]["answers"],
        "totals": " · ".join(
            f"{s['questions']} questions: {sum(j['cpu_s'] for j in s['jobs']):.0f} CPU s, "
            f"{s['judge_forward_tokens'] / s['questions']:,.0f} judge tokens per question"
            for s in sizes
        ),
        "kinds": ", ".join(
            f"{n} rules grow {kind}ly" for kind, n in rules["growth"].value_counts().items()
        ),
        "work": work,
        "work_table": table([*header, "summary FLOPs"], rows, align="rrrrrr"),
        "judge": {g: paper["rules"]["judge"]["seconds"][g]["estimate"] / 3600 for g in ("1", "8")},
        "whole": {g: paper["totals"][g]["estimate"] / 3600 for g in ("1", "8")},
    }


def run_text(record: dict[str, Any]) -> str:
    """docs/scale.md's first sections: the synthetic run of ``record``."""
    return render("scale.md.j2", RECORD=RECORD, **run_context(record))


def growth_text(growth: dict[str, Any]) -> str:
    """docs/scale.md's growth and prediction sections."""
    return render("scale_growth.md.j2", GROWTH=GROWTH, LINEAR=LINEAR, **growth_context(growth))


def text() -> str:
    """docs/scale.md from its records."""
    return run_text(read_json(RECORD)) + growth_text(read_json(GROWTH))


@click.command()
@click.option("--check", is_flag=True, help="Fail if docs/scale.md differs from its render.")
def scale(check: bool) -> None:
    """Render docs/scale.md from docs/scale.json, docs/growth.json and docs/paper_run.json."""
    publish(DOC, text(), check, "docs scale")
