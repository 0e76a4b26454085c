"""Render docs/scale.md from what ``selfreflect bench scale`` recorded (docs/scale.json).

selfreflect bench scale-doc
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import pandas as pd

RECORD = Path("docs") / "scale.json"
DOC = Path("docs") / "scale.md"
MEMORY_BUDGET_MIB = 4 * 1024  # the peak each job must stay under at the paper's size


def rule_table(record: dict[str, Any]) -> pd.DataFrame:
    """Per rule: jobs, total and longest wall time, CPU time, largest peak memory, outputs."""
    jobs = pd.DataFrame(record["jobs"])
    table = jobs.groupby("rule").agg(
        jobs=("rule", "size"),
        wall_s=("wall_s", "sum"),
        longest_job_s=("wall_s", "max"),
        cpu_s=("cpu_s", "sum"),
        peak_rss_mib=("peak_rss_mib", "max"),
    )
    outputs = pd.DataFrame(record["outputs"]).T
    table = table.join(outputs.rename(columns={"files": "output_files", "mib": "output_mib"}))
    counts = ["jobs", "peak_rss_mib", "output_files"]
    table[counts] = table[counts].astype(int)
    return table.sort_values("peak_rss_mib", ascending=False)


def markdown(record: dict[str, Any]) -> str:
    """docs/scale.md: the synthetic run's size, each rule's time and memory, the plans."""
    table = rule_table(record)
    peak_rule = table["peak_rss_mib"].idxmax()
    peak = int(table["peak_rss_mib"].max())
    verdict = "under" if peak < MEMORY_BUDGET_MIB else "over"
    judgements = {p: m for p, m in record["inputs"].items() if "/judgements/" in p}
    plans = "\n".join(
        f"| {plan['shards']} | {plan['jobs']} | {plan['seconds']:g} |" for plan in record["plans"]
    )
    return f"""# The paper's size, after the judge

Rendered by `selfreflect bench scale-doc` from `{RECORD}`, which `selfreflect bench scale`
recorded on {record["date"]} ({record["cpus"]} CPUs, Snakemake with `--cores {record["cores"]}`).

`selfreflect bench scale` writes, without a model, schema-valid artifacts of `{record["config"]}`'s
run up to its judge pass (`selfreflect.bench.synthetic`): {record["questions"]} questions per
dataset, N = {record["answers"]} test and conditioning answers, {record["strategies"]} strategies,
{record["pair_types"]} controlled pair types, the multiple-choice study and convergence on
{record["convergence_questions"]} questions. Each strategy's judgement rows keep every scoring
task of its summary, as the judge pass keeps them for the explorer. Snakemake then plans only the
{len(record["planned"])} rules after the judge ({sum(record["planned"].values())} jobs) and runs
them in {record["run_seconds"]:g} s; writing the inputs took {record["generate_seconds"]:g} s.
The judgement shards given to the merges: {", ".join(f"{m:g} MiB" for m in judgements.values())}.

**Peak memory: {peak} MiB ({peak_rule}), {verdict} the 4 GiB each job must stay under at the
paper's size.** Time and memory per rule, from each job's Snakemake benchmark file (peak:
the largest job's resident memory):

{table.to_markdown(floatfmt="g")}

## Planning the paper's run

The dry run of `{record["config"]}` at its own size, with one judge and answer shard (one GPU)
and with eight:

| shards | jobs | seconds to plan |
|---:|---:|---:|
{plans}
"""


@click.command("scale-doc")
def scale_doc() -> None:
    """Render docs/scale.md from docs/scale.json (selfreflect bench scale)."""
    from selfreflect.fileio import write_text

    write_text(DOC, markdown(json.loads(RECORD.read_text())))
