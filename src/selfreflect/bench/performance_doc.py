"""Render the measured figures into docs/performance.md and README.md.

The scorer's figures come from the runs that ``selfreflect bench scorer --json`` recorded under
docs/benchmarks/: the latest CPU run and the latest CUDA run (by date), never the best one. The
real-model run's time and memory come from docs/real_model.json (``selfreflect bench
real-run``). Each figure lives between ``<!-- rendered: NAME -->`` and ``<!-- /rendered -->``;
the text around the markers is kept as written.

    selfreflect bench performance-doc          # rewrite the rendered spans
    selfreflect bench performance-doc --check  # exit 1 if a span is stale
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from selfreflect.fileio import read_json

RUNS = Path("docs") / "benchmarks"
REAL_RUN = Path("docs") / "real_model.json"
EXPLORER = Path("docs") / "explorer_scale.json"
# the Quick start run measured before the shared judge pass (one judge job per strategy and
# study), and with it while the controlled pairs still grouped answers by string
EARLIER_RUNS = (
    Path("docs") / "real_model_before_judge_pass.json",
    Path("docs") / "real_model_judge_pass_string_pairs.json",
)
DOCS = [Path("docs") / "performance.md", Path("README.md")]
SPAN = re.compile(r"(<!-- rendered: ([\w-]+) -->\n).*?(<!-- /rendered -->)", re.DOTALL)


def latest_runs(folder: Path = RUNS) -> dict[str, dict]:
    """The latest recorded run per device kind (``cpu``, ``cuda``)."""
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        run = read_json(path)
        kind = "cuda" if run["device"].startswith("cuda") else "cpu"
        if kind not in out or run["date"] > out[kind]["date"]:
            out[kind] = run
    return out


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, the first column left-aligned and the others right-aligned."""
    align = ["---", *["---:"] * (len(header) - 1)]
    lines = [header, align, *rows]
    return "".join("| " + " | ".join(line) + " |\n" for line in lines)


def provenance(run: dict) -> str:
    commit = f", commit `{run['commit']}`" if run.get("commit") else ""
    load = run.get("load_average")
    busy = f", load average {load:.1f} at the start" if load is not None else ""
    return (
        f"Run of {run['date'][:10]} on {run['device_name']} ({run['settings']['dtype']}, "
        f"torch {run['torch']}{commit}{busy}):\n\n    {run['command']}\n\n"
    )


def saving(tokens: dict[str, float]) -> str:
    """How many fewer tokens per task the token tree computes than the padded rows before it."""
    return f"{1 - tokens['hf'] / tokens['hf_padded_rows']:.0%}"


def speed_section(run: dict) -> str:
    """Per number of conditioning answers: rates, speed-ups, matmul share, agreement."""
    judges = [name for name in ("hf", "reference", "vllm") if name in run["cases"][0]["judges"]]
    peak = run.get("peak_bf16_flop_per_s")
    header = ["conditioning answers", "longest sequence"]
    header += ["tokens/task `hf` (before, saving; distinct)"]
    header += [f"`{name}` tasks/s" for name in judges]
    header += [f"`hf` / `{name}`" for name in judges[1:]]
    header += ["`hf` GFLOP/s", "share of matmul FLOP/s"]
    header += ["share of bf16 peak"] if peak else []
    header += ["max task difference"]
    rows = []
    for case in run["cases"]:
        result, tokens = case["judges"], case["tokens_per_task"]
        hf = result["hf"]
        row = [
            str(case["conditioning"]),
            str(case["longest_sequence"]),
            f"{tokens['hf']:.1f} ({tokens['hf_padded_rows']:.1f}, {saving(tokens)} fewer; "
            f"{tokens['distinct']:.1f})",
        ]
        row += [f"{result[name]['tasks_per_s']:.3g}" for name in judges]
        row += [f"{hf['tasks_per_s'] / result[name]['tasks_per_s']:.1f}x" for name in judges[1:]]
        row += [f"{hf['flop_per_s'] / 1e9:.1f}", f"{hf['matmul_share']:.0%}"]
        row += [f"{hf['flop_per_s'] / peak:.0%}"] if peak else []
        row += [f"{max(case['agreement'].values()):.1e}"]
        rows.append(row)
    settings = run["settings"]
    tasks = ", ".join(f"{name} {run['cases'][0]['judges'][name]['tasks']}" for name in judges)
    return (
        provenance(run) + f"`{settings['preset']}` shape, {settings['questions']} question(s) x "
        f"{settings['answers']} held-out answer(s), one summary, batch size "
        f"{settings['batch_size']}; tasks timed per case: {tasks}.\n\n" + table(header, rows)
    )


def tokens_section(run: dict) -> str:
    """Tokens computed per task by each algorithm, counted on every example question."""
    header = ["held-out answers", "conditioning answers", "tasks", "`reference`"]
    header += ["`hf` before (padded rows)", "`hf` (token tree)", "fewer than before"]
    header += ["distinct tokens"]
    rows = []
    for count in run["token_counts"]:
        tokens = count["tokens_per_task"]
        rows.append(
            [
                str(count["answers"]),
                str(count["conditioning"]),
                str(count["tasks"]),
                f"{tokens['reference']:.0f}",
                f"{tokens['hf_padded_rows']:.1f}",
                f"{tokens['hf']:.1f}",
                saving(tokens),
                f"{tokens['distinct']:.1f}",
            ]
        )
    return f"Batch size {run['settings']['batch_size']}.\n\n" + table(header, rows)


def readme_section(run: dict) -> str:
    """The README's speed figure: the latest CPU run's first case."""
    case = run["cases"][0]
    judges = case["judges"]
    speedup = judges["hf"]["tasks_per_s"] / judges["reference"]["tasks_per_s"]
    return (
        f"Latest recorded scorer benchmark ({run['date'][:10]}, {run['settings']['preset']} "
        f"shape on {run['device']}, {case['conditioning']} conditioning answers): `hf` "
        f"{speedup:.1f}× `reference`.\n"
    )


def real_run_section(run: dict) -> str:
    """The README's figure of the Quick start run (``selfreflect bench real-run``)."""
    install = run["install_seconds"]
    before = (
        "the install before it was not part of this measurement"
        if install is None
        else f"it follows {install / 60:.1f} min of install into a new environment, "
        f"{(install + run['seconds']) / 60:.1f} min in all"
    )
    return (
        f"Measured on a {run['cpus']}-core machine with {run['memory_gib']} GiB "
        f"({run['date'][:10]}, mean load {run['mean_load']}): the Snakemake run takes "
        f"{run['seconds'] / 60:.1f} min ({run['cpu_seconds'] / 60:.1f} min of CPU time), "
        f"peak memory {run['peak_rss_mib']} MiB (all its processes); {before}. Details: "
        "[docs/real_model.md](docs/real_model.md).\n"
    )


def explorer_section(record: dict) -> str:
    """The explorer benchmark's sizes and times (``selfreflect bench explorer``)."""
    build = record["build"]
    opened = ", ".join(
        f"{seconds:g} s (question {index + 1})"
        for index, seconds in zip(record["opened"], record["question_seconds"], strict=True)
    )
    return (
        f"Measured {build['date']} on {build['cpus']} cores (mean load {build['mean_load']}):"
        f" {record['questions']} questions, {record['strategies']} strategies, N ="
        f" {record['answers']}; {record['files']} files, {record['total_mib']:g} MiB in all, the"
        f" largest {record['largest_file_mib']:g} MiB (`index.html`: {record['index_mib']:g}"
        f" MiB). The build took {build['seconds']:g} s ({build['cpu_seconds']:g} s of CPU, peak"
        f" {build['peak_rss_mib']} MiB, `{record['embedder']}` embedder); the question table"
        f" showed after {record['table_seconds']:g} s, a question's page after {opened}.\n"
    )


def per_rule_lines(result: dict) -> list[str]:
    """The run's per-rule table (summed over each rule's jobs, from Snakemake's benchmark
    files) and the judge's forward tokens per artifact kind."""
    lines = [
        "Summed over each rule's jobs from their Snakemake benchmark files (jobs run side by "
        "side, so the wall times add up to more than the run's):",
        "",
        "| rule | jobs | wall s | CPU s | peak MiB (one job) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for row in result["per_rule"]:
        peak = row["peak_rss_mib"]
        memory = "–" if peak != peak else f"{peak:.0f}"  # NaN: too short to sample
        times = f"{row['wall_s']:.0f} | {row['cpu_s']:.0f}"
        lines.append(f"| {row['rule']} | {row['jobs']} | {times} | {memory} |")
    if result.get("judge_tokens"):
        lines += ["", "Tokens the judge model computed:", "", "| artifacts | tokens |"]
        lines.append("| --- | ---: |")
        tokens = result["judge_tokens"]
        lines += [f"| {row['kind']} | {row['judge_forward_tokens']:,} |" for row in tokens]
    return lines


def laptop_rules_section(run: dict) -> str:
    """docs/performance.md's per-rule table of the Quick start run (its benchmark files)."""
    if not run.get("per_rule"):
        return "No per-rule measurement of the Quick start run has been recorded yet.\n"
    head = f"Measured {run['date']} on {run['cpus']} cores (mean load {run['mean_load']}). "
    return head + "\n".join(per_rule_lines(run)) + "\n"


def judge_pass_section(before: dict, string_pairs: dict, after: dict) -> str:
    """docs/performance.md's comparison of the Quick start run before the shared judge pass
    (one judge job per strategy and study), with it (controlled pairs still grouping answers
    by string) and now (pairs grouped by meaning: fewer pairs where SmolLM2's answers hold no
    real majority)."""

    def total(run: dict) -> int:
        return next(r["judge_forward_tokens"] for r in run["judge_tokens"] if r["kind"] == "total")

    runs = (before, string_pairs, after)
    rows = [
        ("workflow wall time (s)", [run["seconds"] for run in runs]),
        ("CPU time (s)", [run["cpu_seconds"] for run in runs]),
        ("judge forward tokens", [total(run) for run in runs]),
    ]
    lines = [
        "Each run on 2 cores: "
        + "; ".join(f"{run['date']} (mean load {run['mean_load']})" for run in runs)
        + ".",
        "",
        "| | one job per strategy and study | one judge pass | and pairs grouped by meaning "
        "| change |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name, (a, b, c) in rows:
        lines.append(
            f"| {name} | {a:,.0f} | {b:,.0f} | {c:,.0f} | {b / a - 1:+.0%}, {c / a - 1:+.0%} |"
        )
    return "\n".join(lines) + "\n"


def sections(
    runs: dict[str, dict], real_run: dict, earlier: tuple[dict, dict], explorer: dict
) -> dict[str, str]:
    """The text of every rendered span."""
    cpu = runs["cpu"]
    gpu = runs.get("cuda")
    return {
        "laptop-rules": laptop_rules_section(real_run),
        "judge-pass": judge_pass_section(*earlier, real_run),
        "tokens": tokens_section(cpu),
        "cpu": speed_section(cpu),
        "gpu": speed_section(gpu) if gpu else "No GPU run has been recorded yet.\n",
        "readme": readme_section(cpu),
        "real-model-run": real_run_section(real_run),
        "explorer-scale": explorer_section(explorer),
    }


def render(text: str, spans: dict[str, str]) -> str:
    return SPAN.sub(lambda m: m[1] + spans[m[2]] + m[3], text)


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--check", is_flag=True, help="only check that nothing is stale")
def performance_doc(check: bool) -> None:
    from selfreflect.fileio import write_text

    earlier = tuple(read_json(path) for path in EARLIER_RUNS)
    spans = sections(
        latest_runs(),
        read_json(REAL_RUN),
        earlier,
        read_json(EXPLORER),
    )
    stale = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        new = render(text, spans)
        if new != text:
            stale.append(path)
            if not check:
                write_text(path, new)
    if check and stale:
        names = ", ".join(map(str, stale))
        raise click.ClickException(f"{names}: stale; run selfreflect bench performance-doc")
    print(f"rewrote {', '.join(map(str, stale))}" if stale else "up to date")
