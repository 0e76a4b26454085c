"""docs/scale.md from what ``selfreflect bench scale`` recorded (docs/scale.json at the paper's
size, docs/scale_10x.json at ten times its questions), what
``selfreflect bench growth`` recorded (docs/growth.json) and the GPU scorer benchmarks
(its judge work per question), and what ``selfreflect bench judge-memory`` recorded
(docs/judge_memory.json): the paper's size after the judge, the growth of the real run and the
judge job's memory, pointing to docs/paper_run.md (docs/paper_run.json) for the whole run
predicted.

    selfreflect docs scale [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from selfreflect.artifacts import ROW_GROUP_ROWS
from selfreflect.config import read_config_file
from selfreflect.docs import publish, render
from selfreflect.docs.tables import table
from selfreflect.fileio import read_json, read_yaml
from selfreflect.paths import DEFAULT_CONFIG

RECORD = Path("docs") / "scale.json"
TEN_TIMES = Path("docs") / "scale_10x.json"  # the same run at ten times the paper's questions
GROWTH = Path("docs") / "growth.json"
PAPER_RUN = Path("docs") / "paper_run.json"
JUDGE_MEMORY = Path("docs") / "judge_memory.json"
DOC = Path("docs") / "scale.md"
MEMORY_BUDGET_MIB = 4 * 1024  # the peak each job must stay under, at any size
PEAK_GROWTH_LIMIT = 1.5  # a job's peak at ten times the questions, at most this times the paper's
RESOLVED = 2  # a cost per question is measured where its growth is this many largest residuals


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
    rules[counts] = rules[counts].astype("Int64")  # a rule whose outputs --summary lists none: <NA>
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


def growth_between(paper: dict[str, Any], larger: dict[str, Any]) -> pd.DataFrame:
    """Per rule, the synthetic run at the paper's size beside the same run at a larger size:
    peak memory of each and their ratio, CPU seconds of each, the CPU cost per question and the
    fixed cost that the two sizes give (two points: no residual), and the output MiB of each."""
    small, big = rule_table(paper), rule_table(larger)
    q0, q1 = paper["questions"], larger["questions"]
    per_question = (big["cpu_s"] - small["cpu_s"]) / (q1 - q0)
    frame = pd.DataFrame(
        {
            f"peak_mib@{q0}": small["peak_rss_mib"],
            f"peak_mib@{q1}": big["peak_rss_mib"],
            "peak_ratio": (big["peak_rss_mib"] / small["peak_rss_mib"]).round(2),
            f"cpu_s@{q0}": small["cpu_s"],
            f"cpu_s@{q1}": big["cpu_s"],
            "cpu_s_per_question": per_question.round(3),
            "fixed_cpu_s": (small["cpu_s"] - q0 * per_question).round(1),
            f"output_mib@{q0}": small["output_mib"],
            f"output_mib@{q1}": big["output_mib"],
        }
    )
    return frame.sort_values(f"peak_mib@{q1}", ascending=False)


def ten_times_text(paper: dict[str, Any], larger: dict[str, Any]) -> str:
    """docs/scale.md's section on the run at ten times the paper's questions: beside the
    paper-size run rule by rule where both records ran the same jobs, else on its own."""
    alone = rule_table(larger)
    rules = growth_between(paper, larger)
    differ = sorted(set(paper.get("planned", {})) ^ set(larger.get("planned", {})))
    return render(
        "scale_ten_times.md.j2",
        TEN_TIMES=TEN_TIMES,
        record=larger,
        paper=paper,
        rules=rules,
        alone=alone,
        comparable=not differ,
        differ=differ,
        over_budget=alone.index[alone["peak_rss_mib"] >= MEMORY_BUDGET_MIB].tolist(),
        over_growth=rules.index[rules["peak_ratio"] > PEAK_GROWTH_LIMIT].tolist(),
        PEAK_GROWTH_LIMIT=PEAK_GROWTH_LIMIT,
        largest=alone["peak_rss_mib"].idxmax(),
        peak=int(alone["peak_rss_mib"].max()),
    )


def linear_fit(sizes: list[float], values: list[float]) -> tuple[float, float, float]:
    """The least-squares fixed cost and cost per question of ``values`` against ``sizes``, and
    the largest residual, each to 1e-9 s: the last bits of a least-squares solve differ between
    numpy builds, and moved a printed digit of the page (6.05 s printed as 6.0 or 6.1)."""
    per_question, fixed = np.polyfit(sizes, values, 1)
    residuals = np.asarray(values) - (fixed + per_question * np.asarray(sizes))
    largest = np.abs(residuals).max()
    return round(float(fixed), 9), round(float(per_question), 9), round(float(largest), 9)


def resolved(fits: pd.DataFrame, questions: list[int]) -> pd.Series:
    """Whether each rule's cost per question is measured: its fitted growth over the sizes
    exceeds :data:`RESOLVED` times the fit's largest residual."""
    growth = fits["s_per_question"] * (max(questions) - min(questions))
    return growth > RESOLVED * fits["largest_residual_s"]


def paper_questions() -> int:
    """The paper config's questions per dataset (one judge shard on one GPU)."""
    return read_config_file(Path(DEFAULT_CONFIG))["questions"]["num_questions"]


def growth_table(growth: dict[str, Any], predicted_at: int) -> pd.DataFrame:
    """Per rule: CPU seconds at each size, their fit as a fixed cost plus a cost per question
    (with the largest residual) and what it predicts at ``predicted_at`` questions, the
    largest size's wall seconds, peak memory and output MiB."""
    sizes = growth["sizes"]
    questions = [size["questions"] for size in sizes]
    cpu = pd.DataFrame(
        {
            f"cpu_s@{size['questions']}": pd.DataFrame(size["jobs"]).groupby("rule")["cpu_s"].sum()
            for size in sizes
        }
    ).fillna(0.0)
    fits = [linear_fit(questions, list(row)) for row in cpu.to_numpy()]
    cpu["fixed_s"], cpu["s_per_question"], cpu["largest_residual_s"] = zip(*fits, strict=True)
    predicted = cpu["fixed_s"] + predicted_at * cpu["s_per_question"]
    measured = resolved(cpu, questions)
    cpu[f"predicted_s@{predicted_at}"] = predicted.round().astype(object).where(measured, None)
    largest = pd.DataFrame(sizes[-1]["jobs"]).groupby("rule")
    cpu[f"wall_s@{questions[-1]}"] = largest["wall_s"].sum()
    cpu[f"peak_rss_mib@{questions[-1]}"] = largest["peak_rss_mib"].max().astype(int)
    outputs = pd.DataFrame(sizes[-1]["outputs"]).T["mib"]
    cpu[f"output_mib@{questions[-1]}"] = outputs.reindex(cpu.index)
    rounded = {"fixed_s": 1, "s_per_question": 2, "largest_residual_s": 1}
    cpu = cpu.round(rounded)
    return cpu.sort_values(cpu.columns[len(sizes) - 1], ascending=False)


def growth_context(growth: dict[str, Any], predicted_at: int) -> dict[str, Any]:
    """The growth and prediction sections, predicted at ``predicted_at`` questions."""
    rules = growth_table(growth, predicted_at)
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
        "unresolved": rules.index[rules[f"predicted_s@{predicted_at}"].isna()].tolist(),
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
    questions = paper_questions()
    context = growth_context(growth, questions)
    constants = {"GROWTH": GROWTH, "PAPER_QUESTIONS": questions, "RESOLVED": RESOLVED}
    return render("scale_growth.md.j2", **constants, **context)


def judge_text(record: dict[str, Any]) -> str:
    """docs/scale.md's section on the judge job's memory per shard size."""
    header = ["questions in the shard", "rows", "scoring tasks", "peak MiB", "wall s", "CPU s"]
    rows = [
        [s["shard_questions"], f"{s['rows']:,}", f"{s['tasks']:,}", s["peak_rss_mib"],
         f"{s['seconds']:g}", f"{s['cpu_seconds']:g}"]
        for s in record["shards"]
    ]  # fmt: skip
    smallest, largest = record["shards"][0], record["shards"][-1]
    added = largest["shard_questions"] - smallest["shard_questions"]
    per_question = (largest["peak_rss_mib"] - smallest["peak_rss_mib"]) / added
    rows_per_question = largest["rows"] / largest["shard_questions"]
    full_group = ROW_GROUP_ROWS / rows_per_question  # questions whose rows fill a row group
    bound = largest["peak_rss_mib"] + max(per_question, 0) * max(
        full_group - largest["shard_questions"], 0
    )
    verdict = (
        f"From {smallest['shard_questions']} to {largest['shard_questions']} questions the peak "
        f"grew by {per_question:.1f} MiB per question. The job holds up to a row group of "
        f"{ROW_GROUP_ROWS:,} rows (about {full_group:.0f} questions at "
        f"{rows_per_question:.1f} rows per question) before it writes them to disk, so the peak "
        f"should stop growing there, at about "
        f"{bound:,.0f} MiB for a shard of any size, "
        f"{'under' if bound < MEMORY_BUDGET_MIB else 'over'} the 4 GiB each job must stay under. "
        f"That bound is read from the code; both sizes measured here are below it."
    )
    return render(
        "scale_judge.md.j2",
        JUDGE_MEMORY=JUDGE_MEMORY,
        record=record,
        largest=largest["shard_questions"],
        shards=table(header, rows, align="rrrrrr"),
        verdict=verdict,
    )


def text() -> str:
    """docs/scale.md from its records."""
    paper = read_json(RECORD)
    pages = run_text(paper) + ten_times_text(paper, read_json(TEN_TIMES))
    return pages + growth_text(read_json(GROWTH)) + judge_text(read_json(JUDGE_MEMORY))


@click.command()
@click.option("--check", is_flag=True, help="Fail if docs/scale.md differs from its render.")
def scale(check: bool) -> None:
    """Render docs/scale.md from docs/scale.json, docs/scale_10x.json, docs/growth.json,
    docs/paper_run.json and docs/judge_memory.json."""
    publish(DOC, text(), check, "docs scale")
