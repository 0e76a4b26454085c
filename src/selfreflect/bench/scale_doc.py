"""Render docs/scale.md from what ``selfreflect bench scale`` recorded (docs/scale.json),
what ``selfreflect bench growth`` recorded (docs/growth.json) and the GPU scorer benchmarks
(docs/benchmarks/*.json): the paper's size after the judge, the growth of the real run, and
the paper run's judge pass predicted.

selfreflect bench scale-doc [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from selfreflect.fileio import read_json, read_yaml

RECORD = Path("docs") / "scale.json"
GROWTH = Path("docs") / "growth.json"
BENCHMARKS = Path("docs") / "benchmarks"
DOC = Path("docs") / "scale.md"
MEMORY_BUDGET_MIB = 4 * 1024  # the peak each job must stay under at the paper's size
LINEAR = (0.8, 1.2)  # a rule's log-log slope of CPU time against questions counted as linear
PAPER = {"questions": 1000, "answers": 50, "strategies": 6, "gpus": (1, 8)}


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
    embedder = read_yaml(Path(record["config"]))["summaries"]["cluster"]["embedder"]
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
them in {record["run_seconds"]:g} s (load average {record["load_average"]:g} at its end: other
work on the machine lengthens the wall times, not the CPU times or memory); writing the inputs
took {record["generate_seconds"]:g} s.
The judgement shards given to the merges: {", ".join(f"{m:g} MiB" for m in judgements.values())}.

**Peak memory: {peak} MiB ({peak_rule}), {verdict} the 4 GiB each job must stay under at the
paper's size.** Time and memory per rule, from each job's Snakemake benchmark file (peak:
the largest job's resident memory):

{table.to_markdown(floatfmt="g")}

Most of the explorer's CPU time is spent grouping each question's conditioning answers by meaning
with the config's embedder (`summaries.cluster.embedder: {embedder}`), on the CPU: the explorer's
job holds no GPU. `selfreflect bench explorer` (docs/explorer_scale.json) builds its explorer
with the `string` embedder, so its build time is the page's writing alone.

## Planning the paper's run

The dry run of `{record["config"]}` at its own size, with one judge and answer shard (one GPU)
and with eight:

| shards | jobs | seconds to plan |
|---:|---:|---:|
{plans}
"""


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


def gpu_throughput(batch_size: int, answers: int) -> tuple[float, str]:
    """The `hf` judge's FLOP/s on a GPU at ``answers`` conditioning answers, from the recorded
    scorer benchmark of Qwen2.5-7B's shape with the paper's batch size (else the fastest)."""
    records = [read_json(path) for path in sorted(BENCHMARKS.glob("*.json"))]
    gpu = [
        (record, case)
        for record in records
        if record.get("device", "").startswith("cuda")
        and record["settings"]["preset"] == "qwen2.5-7b"
        for case in record["cases"]
        if case["conditioning"] == answers
    ]
    matching = [pair for pair in gpu if pair[0]["settings"]["batch_size"] == batch_size] or gpu
    record, case = max(matching, key=lambda pair: pair[1]["judges"]["hf"]["flop_per_s"])
    source = f"{record['device_name']}, batch size {record['settings']['batch_size']}"
    return case["judges"]["hf"]["flop_per_s"], source


def prediction(work: dict[str, Any]) -> dict[str, Any]:
    """The paper's judge pass (PAPER: questions, N, strategies) on one GPU: seconds per
    question for the reference context and each strategy's, from the FLOPs per question at
    the paper's N and the GPU's measured FLOP/s."""
    case = next(c for c in work["cases"] if c["answers"] == PAPER["answers"])
    flop_per_s, source = gpu_throughput(work["batch_size"], PAPER["answers"])
    reference = case["reference"]["flops"] / flop_per_s
    per_strategy = case["summary"]["flops"] / flop_per_s
    per_question = reference + PAPER["strategies"] * per_strategy
    return {
        "case": case,
        "flop_per_s": flop_per_s,
        "source": source,
        "reference_s": reference,
        "strategy_s": per_strategy,
        "question_s": per_question,
        "hours": {g: PAPER["questions"] * per_question / g / 3600 for g in PAPER["gpus"]},
        "strategy_hours": PAPER["questions"] * per_strategy / 3600,
    }


def growth_markdown(growth: dict[str, Any]) -> str:
    """docs/scale.md's growth and prediction sections."""
    table = growth_table(growth)
    sizes = growth["sizes"]
    questions = [size["questions"] for size in sizes]
    answers = sizes[0]["answers"]
    kinds = table["growth"].value_counts()
    totals = " · ".join(
        f"{s['questions']} questions: {sum(j['cpu_s'] for j in s['jobs']):.0f} CPU s, "
        f"{s['judge_forward_tokens'] / s['questions']:,.0f} judge tokens per question"
        for s in sizes
    )
    work = growth["judge_work"]
    rows = "\n".join(
        f"| {c['answers']} | {c['tasks']:.0f} | {c['reference']['tokens']:,.0f} | "
        f"{c['summary']['tokens']:,.0f} | {c['reference']['flops']:.3g} | "
        f"{c['summary']['flops']:.3g} |"
        for c in work["cases"]
    )
    p = prediction(work)
    hours = ", ".join(f"{h:.1f} h on {g} GPU{'s' if g > 1 else ''}" for g, h in p["hours"].items())
    return f"""
## How the real run grows

`selfreflect bench growth` ran `{growth["config"]}` (the paper's DAG on the tiny model: every
rule, its strategies and studies) at {", ".join(map(str, questions))} questions per dataset,
N = {answers}, on {growth["cpus"]} CPUs (recorded {growth["date"]}; `{GROWTH}`). Per rule, CPU
seconds at each size and their growth exponent (the slope of log CPU time against log
questions: 1 is linear; {LINEAR[0]:g} to {LINEAR[1]:g} counts as linear here), then the largest
size's wall time, peak memory and output size. Totals: {totals}.

{table.to_markdown(floatfmt="g")}

{", ".join(f"{n} rules grow {kind}ly" for kind, n in kinds.items())}. A sublinear rule is
dominated by what it costs whatever its size (a process start, a model load); at the paper's
size only its linear part remains.

## The paper's judge pass, predicted

The judge's work per question with Qwen2.5's tokenizer and prompts
(`{work["tokenizer_model"]}` of `{work["config"]}`) on the original tool's real example answers,
cycled to N held-out and N conditioning answers ({work["questions"]} questions, no model run):
the masked-word tasks, the tokens the `hf` judge computes per question (the prefix once, then
one token tree per batch of {work["batch_size"]} masked words) for the reference context and
for one summary's context, and their forward FLOPs with `{work["predicted_model"]}`'s shape
(layer matmuls per token, attention per attended key, the LM head per task):

| N | tasks | reference tokens | summary tokens | reference FLOPs | summary FLOPs |
|---:|---:|---:|---:|---:|---:|
{rows}

At the GPU throughput the scorer benchmark measured for this shape at
{PAPER["answers"]} conditioning answers ({p["flop_per_s"] / 1e12:.0f} TFLOP/s, {p["source"]};
docs/performance.md), one question of the paper's run takes {p["reference_s"]:.1f} s for the
reference context and {p["strategy_s"]:.1f} s per strategy: {p["question_s"]:.1f} s with
{PAPER["strategies"]} strategies. The judge pass of {PAPER["questions"]} questions then takes
**{hours}** (judge shards, one per GPU), {p["strategy_hours"]:.1f} h of it per strategy on one
GPU. Not included: sampling the answers and summaries (vLLM), the controlled pairs' and the
convergence study's judge work, and the studies after the judge (their CPU time and memory are
in the first section).
"""


def render() -> str:
    return markdown(read_json(RECORD)) + growth_markdown(read_json(GROWTH))


@click.command("scale-doc")
@click.option("--check", is_flag=True, help="Fail if docs/scale.md differs from its render.")
def scale_doc(check: bool) -> None:
    """Render docs/scale.md from docs/scale.json, docs/growth.json and docs/benchmarks."""
    from selfreflect.fileio import write_text

    text = render()
    if check:
        if DOC.read_text() != text:
            raise click.ClickException(
                f"{DOC} differs from its render: selfreflect bench scale-doc"
            )
        return
    write_text(DOC, text)
