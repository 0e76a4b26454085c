"""docs/paper_run.md from what ``selfreflect bench paper-run`` recorded (docs/paper_run.json):
the paper's whole run predicted, per rule, on 1 and 8 GPUs.

    selfreflect docs paper-run [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from selfreflect.docs import fill, publish, render
from selfreflect.docs.tables import table
from selfreflect.fileio import read_json

RECORD = Path("docs") / "paper_run.json"
DOC = Path("docs") / "paper_run.md"
README = Path("README.md")  # its span `paper-run`: the whole run's prediction in one line


def span(bound: dict[str, float], unit: float = 60, digits: int = 1) -> str:
    """An estimate and its bounds, in ``unit`` (minutes)."""
    parts = [bound[key] / unit for key in ("estimate", "low", "high")]
    return f"{parts[0]:.{digits}f} ({parts[1]:.{digits}f}–{parts[2]:.{digits}f})"


def hours(bound: dict[str, float]) -> str:
    return span(bound, 3600) + " h"


def rule_rows(record: dict[str, Any]) -> list[list[Any]]:
    """Per rule: where it runs, its jobs and minutes on each number of GPUs."""
    rows = []
    for rule, entry in record["rules"].items():
        row = [rule, entry["kind"].upper()]
        for gpus in map(str, record["gpus"]):
            row += [entry["jobs"][gpus], span(entry["seconds"][gpus])]
        rows.append(row)
    return rows


def context_rows(work: dict[str, Any]) -> list[list[Any]]:
    """Per context kind of the judge's work: datasets, questions, contexts per question and
    PFLOPs in all."""
    return [
        [
            kind,
            ", ".join(entry["datasets"]),
            entry["questions"],
            span(entry["contexts_per_question"], 1),
            span(entry["flops"], 1e15, 0),
        ]
        for kind, entry in work.items()
    ]


def forward_fill(work: dict[str, Any]) -> str:
    """How full the judge's forwards are over the context kinds of ``work``: the range of their
    estimates (their low and high bounds: the example questions'); ``""`` where forwards are
    cut by batch size."""
    fills = [entry["forward_fill"] for entry in work.values() if "forward_fill" in entry]
    if not fills:
        return ""
    estimates = sorted({f"{fill['estimate']:.0%}" for fill in fills})
    low, high = min(fill["low"] for fill in fills), max(fill["high"] for fill in fills)
    return f"{'–'.join(dict.fromkeys([estimates[0], estimates[-1]]))} ({low:.0%}–{high:.0%})"


def generation_rows(work: dict[str, Any]) -> list[list[Any]]:
    """Per job kind of the sampling: tokens generated and prompted per question."""
    return [
        [name, span(tokens["generated"], 1, 0), span(tokens["prompt"], 1, 0)]
        for name, tokens in work.items()
    ]


def text(record: dict[str, Any]) -> str:
    """docs/paper_run.md from the recorded prediction."""
    gpus = [str(g) for g in record["gpus"]]
    header = ["rule", "runs on"]
    for g in gpus:
        header += [
            f"jobs, {g} GPU{'s' if g != '1' else ''}",
            f"minutes, {g} GPU{'s' if g != '1' else ''}",
        ]
    rules = record["rules"]
    summaries = {"answers (per question, each dataset)": rules["answers"]["work"]["per question"]}
    summaries |= rules["summarize"]["work"]
    work = {**rules["judge"]["work"], **rules["report_alt_metrics"]["work"]}
    return render(
        "paper_run.md.j2",
        RECORD=RECORD,
        record=record,
        rates=record["rates"],
        hours=hours,
        span=span,
        totals={g: hours(record["totals"][g]) for g in gpus},
        rules=table(header, rule_rows(record), "ll" + "rr" * len(gpus)),
        contexts=table(
            ["context kind", "datasets", "questions", "contexts per question", "PFLOPs"],
            context_rows(work),
            "llrrr",
        ),
        filled={
            rule: forward_fill(rules[rule]["work"]) for rule in ("judge", "report_alt_metrics")
        },
        generation=table(
            ["job", "tokens generated", "tokens prompted"], generation_rows(summaries), "lrr"
        ),
    )


@click.command()
@click.option("--check", is_flag=True, help="Fail if docs/paper_run.md differs from its render.")
def paper_run(check: bool) -> None:
    """Render docs/paper_run.md and README.md's prediction line from docs/paper_run.json."""
    record = read_json(RECORD)
    publish(DOC, text(record), check, "docs paper-run")
    totals = {gpus: hours(total) for gpus, total in record["totals"].items()}
    line = render("paper_run_readme.md.j2", totals=totals, DOC=DOC)
    publish(
        README,
        fill(README.read_text(encoding="utf-8"), {"paper-run": line}),
        check,
        "docs paper-run",
    )
