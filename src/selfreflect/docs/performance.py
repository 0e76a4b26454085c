"""The measured figures of docs/performance.md and README.md.

The scorer's figures come from the runs that ``selfreflect bench scorer --json`` recorded under
docs/benchmarks/: the latest CPU run and the latest CUDA run (by date) in full, never the best
one, and every speed or share of peak quoted elsewhere as the range across all recorded runs of
that device and shape, each run named with its batch size. A run records each rate as the median
of its timed repeats with their range; the records from before repeats (one timing per case) are
read as one repeat and marked as single timings. The
real-model run's time and memory come from docs/real_model.json (``selfreflect bench
real-run``). Each figure lives between ``<!-- rendered: NAME -->`` and ``<!-- /rendered -->``
(its template: ``templates/performance/NAME.md.j2``); the text around the markers is kept as
written.

    selfreflect docs performance          # rewrite the rendered spans
    selfreflect docs performance --check  # exit 1 if a span is stale
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from statistics import median
from typing import Any

import click

from selfreflect.bench.judge_batching import COMPILE_RULE, meets_compile_rule, setting_text
from selfreflect.bench.scorer import Cut, cut, cut_text, device_runs, recorded, spread
from selfreflect.docs import fill, render
from selfreflect.docs.tables import table
from selfreflect.fileio import read_json

REAL_RUN = Path("docs") / "real_model.json"
EXPLORER = Path("docs") / "explorer_scale.json"
BATCHING = Path("docs") / "judge_batching.json"  # selfreflect bench judge-batching
CONTEXTS = Path("docs") / "contexts.json"  # selfreflect bench contexts
# the Quick start run (its config of then: answers of up to 24 tokens) measured before the shared
# judge pass (one judge job per strategy and study), with it while the controlled pairs still
# grouped answers by string, and with them grouped by meaning
EARLIER_RUNS = (
    Path("docs") / "real_model_before_judge_pass.json",
    Path("docs") / "real_model_judge_pass_string_pairs.json",
    Path("docs") / "real_model_pairs_by_meaning.json",
)
DOCS = [Path("docs") / "performance.md", Path("README.md")]
# ``bench device-run --device cpu`` records: the smoke DAG at a real model's shape on this CPU
CPU_DAGS = Path("docs") / "benchmarks" / "cpu-dag"
# ``bench real-run`` records of README command 1, with and without Snakemake's ``--set-threads``
CPU_THREADS = Path("docs") / "benchmarks" / "cpu-threads"


def latest_runs(runs: list[dict]) -> dict[str, dict]:
    """The latest of ``runs`` (oldest first) per device kind (``cpu``, ``cuda``)."""
    return {("cuda" if run["device"].startswith("cuda") else "cpu"): run for run in runs}


def extent(values: list[float], spec: str) -> str:
    """The range of ``values``, e.g. ``24–29%`` (one figure where both ends format alike)."""
    low, high = f"{min(values):{spec}}", f"{max(values):{spec}}"
    return low if low == high else f"{low}–{high}"


def hf_values(run: dict, key: str) -> list[float]:
    """Every case's range ends of `hf`'s ``key``: its slowest and fastest repeat."""
    return [v for case in run["cases"] for v in case["judges"]["hf"]["range"][key]]


def speedups(run: dict) -> list[float]:
    """Per case, `hf`'s median tasks/s over `reference`'s."""
    return [
        case["judges"]["hf"]["tasks_per_s"] / case["judges"]["reference"]["tasks_per_s"]
        for case in run["cases"]
    ]


def timing(run: dict) -> str:
    """How the run timed each case."""
    repeats = run["settings"]["repeats"]
    if repeats == 1:
        return "single timing"
    return f"median of {repeats}"


def grouped(runs: list[dict], key: Callable[[dict], Any]) -> dict[Any, list[dict]]:
    """``runs`` by ``key``, each group in the order of ``runs``."""
    out: dict[Any, list[dict]] = {}
    for run in runs:
        out.setdefault(key(run), []).append(run)
    return out


def groups(runs: list[dict]) -> dict[tuple[str, str], list[dict]]:
    """``runs`` by device and model shape (``device_name``, ``preset``)."""
    return grouped(runs, lambda run: (run["device_name"], run["settings"]["preset"]))


def batch_sizes(runs: list[dict]) -> str:
    """The batch sizes (and token budgets) of ``runs``, e.g. ``32, 64 and 128``."""
    sizes = [cut_text(key) for key in sorted({cut(run, exact=False) for run in runs})]
    return " and ".join([", ".join(sizes[:-1]), sizes[-1]] if len(sizes) > 1 else sizes)


def saving(tokens: dict[str, float]) -> str:
    """How many fewer tokens per task the token tree computes than the padded rows before it."""
    return f"{1 - tokens['hf'] / tokens['hf_padded_rows']:.0%}"


def speed(run: dict) -> str:
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
        row += [spread(result[name], "tasks_per_s", ".3g") for name in judges]
        row += [f"{hf['tasks_per_s'] / result[name]['tasks_per_s']:.1f}x" for name in judges[1:]]
        row += [spread(hf, "flop_per_s", ".1f", 1e9), spread(hf, "matmul_share", ".0%")]
        row += [spread(hf, "peak_share", ".0%")] if peak else []
        row += [f"{max(case['agreement'].values()):.1e}"]
        rows.append(row)
    tasks = ", ".join(f"{name} {run['cases'][0]['judges'][name]['tasks']}" for name in judges)
    speeds = table(header, rows, align="l" + "r" * (len(header) - 1))
    cuts = cut_text(cut(run), named=True)
    return render("performance/speed.md.j2", run=run, tasks=tasks, speed=speeds, cuts=cuts)


def host_waits(result: dict) -> str:
    """The host's waits for the GPU during one `hf` pass, with its forwards (``–`` where not
    counted: before the count, or off a GPU)."""
    syncs = result.get("host_syncs")
    return "–" if syncs is None else f"{syncs['syncs']} ({syncs['forwards']} forwards)"


def device_scorer(records: list[dict]) -> str:
    """Each ``bench device-run`` record's scorer runs side by side, on the same inputs: per
    setting and case `hf`'s tasks/s, its speed-up over the record's first setting (the paper
    config's batch size) on that case, its warm-up (a compiled decoder's compilation), its
    shares and the host's waits; then the settings that failed, and what the GPU rule decides
    (``device_run.verdicts``)."""
    from selfreflect.bench.device_run import RULE, verdicts

    header = ["recorded", "held-out x conditioning answers", "forwards cut by"]
    header += ["tokens/task `hf`", "`hf` tasks/s", "over the first setting", "warm-up s"]
    header += ["host waits"]
    header += ["share of matmul FLOP/s", "share of bf16 peak", "max task difference"]
    rows, gains = [], {}
    for record in records:
        runs = record["scorer"]
        first = {c["conditioning"]: c["judges"]["hf"]["tasks_per_s"] for c in runs[0]["cases"]}
        for run in runs:
            for case in run["cases"]:
                hf = case["judges"]["hf"]
                gain = hf["tasks_per_s"] / first[case["conditioning"]]
                if run is not runs[0]:
                    gains.setdefault(cut(run, exact=False), []).append(gain)
                rows.append(
                    [
                        run["date"][:16].replace("T", " "),
                        f"{run['settings']['answers']} x {case['conditioning']}",
                        cut_text(cut(run), named=True),
                        f"{case['tokens_per_task']['hf']:.1f}",
                        spread(hf, "tasks_per_s", ".3g"),
                        f"{gain:.2f}x",
                        f"{hf['warmup_seconds']:.3g}" if "warmup_seconds" in hf else "–",
                        host_waits(hf),
                        spread(hf, "matmul_share", ".0%"),
                        spread(hf, "peak_share", ".0%") if "peak_share" in hf else "–",
                        f"{max(case['agreement'].values()):.1e}",
                    ]
                )
    summary = [
        {
            "cut": cut_text(key, named=True),
            "range": extent(ratios, ".2f"),
            "cases": len(ratios),
            "met": sum(ratio >= 2 for ratio in ratios),
        }
        for key, ratios in sorted(gains.items())
    ]
    failed = [
        {
            "record": Path(record["source"]).name,
            "cut": cut_text(cut(failure), named=True),
            "error": failure["error"],
            "message": next(iter(failure["message"].strip().splitlines()), ""),
        }
        for record in records
        for failure in record.get("failed", [])
    ]
    decided = [
        verdict
        | {"record": Path(record["source"]).name, "cut": cut_text(verdict["cut"], named=True)}
        for record in records
        for verdict in verdicts(record)
    ]
    comparison = table(header, rows, align="lllrrrrrrrr")
    return render(
        "performance/device-scorer.md.j2",
        table=comparison,
        gains=summary,
        failed=failed,
        rule=RULE,
        verdicts=decided,
    )


def device_dag(records: list[dict]) -> str:
    """The latest ``bench device-run`` whose smoke DAG finished: its rules' times on the
    device."""
    finished = [record for record in records if (record["dag"] or {}).get("returncode") == 0]
    if not finished:
        return "No smoke DAG run by `bench device-run` has finished here yet.\n"
    record = finished[-1]
    dag = record["dag"]
    return render(
        "performance/device-dag.md.j2",
        record=record,
        predicted=predicted_table(dag.get("predicted") or []),
        rate_cut=cut_text(cut(record["dag_rate"]), named=True) if "dag_rate" in record else "",
        **per_rule(dag),
    )


def predicted_table(rows: list[dict]) -> str:
    """Each judge rule's wall time beside the prediction's judge term at the DAG's size (``""``
    where the record has none: those from before ``bench device-run`` predicted it)."""
    header = ["rule", "jobs", "forward tokens", "at tokens/s", "predicted s", "wall s", "rest s"]
    cells = [
        [
            row["rule"],
            row["jobs"],
            f"{row['forward_tokens']:,}",
            f"{row['tokens_per_s']:,.0f}",
            f"{row['compute_s']:.1f}",
            f"{row['wall_s']:.1f}",
            f"{row['rest_s']:.1f}",
        ]
        for row in rows
    ]
    return table(header, cells, align="lrrrrrr") if cells else ""


def runs_table(runs: list[dict]) -> str:
    """Every recorded run, by device, shape and batch size: `hf`'s rates and shares over all
    its cases and repeats, its speed-up over `reference` over its cases."""
    header = ["device", "shape", "recorded", "forwards cut by", "questions x held-out answers"]
    header += ["timing per case", "`hf` tasks/s", "`hf` / `reference`"]
    header += ["share of matmul FLOP/s", "share of bf16 peak", "host waits per pass"]
    rows = [
        [
            run["device_name"],
            f"`{run['settings']['preset']}`",
            run["date"][:10],
            cut_text(cut(run)),
            f"{run['settings']['questions']} x {run['settings']['answers']}",
            timing(run),
            extent(hf_values(run, "tasks_per_s"), ".3g"),
            extent(speedups(run), ".1f") + "x",
            extent(hf_values(run, "matmul_share"), ".0%"),
            extent(hf_values(run, "peak_share"), ".0%") if run.get("peak_bf16_flop_per_s") else "–",
            ", ".join(dict.fromkeys(host_waits(case["judges"]["hf"]) for case in run["cases"])),
        ]
        for group in groups(runs).values()
        for run in sorted(group, key=lambda r: (cut(r), r["date"]))
    ]
    return table(header, rows, align="lllrrlrrrrr") + "\n"


def gpu_targets(runs: list[dict]) -> str:
    """The GPU targets against the range of every recorded run of each device of known bf16
    peak and shape."""
    cuda = {k: group for k, group in groups(runs).items() if group[0].get("peak_bf16_flop_per_s")}
    summaries = [
        {
            "device": device,
            "preset": preset,
            "runs": group,
            "batch_sizes": batch_sizes(group),
            "single": sum(run["settings"]["repeats"] == 1 for run in group),
            "speedup": extent([s for run in group for s in speedups(run)], ".0f"),
            "peak": extent([v for run in group for v in hf_values(run, "peak_share")], ".0%"),
            "matmul": extent([v for run in group for v in hf_values(run, "matmul_share")], ".0%"),
            "per_batch": [
                (
                    cut_text(key, named=True),
                    extent([v for r in same for v in hf_values(r, "peak_share")], ".0%"),
                )
                for key, same in by_batch_size(group)
            ],
            "cases": sum(len(run["cases"]) for run in group),
            "speedup_met": sum(s >= 10 for run in group for s in speedups(run)),
            "peak_met": sum(
                case["judges"]["hf"]["peak_share"] >= 0.5 for run in group for case in run["cases"]
            ),
        }
        for (device, preset), group in cuda.items()
    ]
    return render("performance/gpu-targets.md.j2", groups=summaries, first=against_first(runs))


def against_first(runs: list[dict]) -> dict[str, Any] | None:
    """The first recorded GPU run of the paper's judge shape at the paper config's batch size
    (the judge as the work on its GPU cost found it) beside the latest later run of each of its
    cases, cut as the paper config cuts forwards now and at that batch size: `hf`'s tasks/s
    and their ratio to the first run's; None before such a run."""
    from selfreflect.bench.growth import PREDICTED_MODEL
    from selfreflect.bench.paper_run import same_cut
    from selfreflect.config import load_config
    from selfreflect.paths import DEFAULT_CONFIG

    scoring = load_config(DEFAULT_CONFIG)["scoring"]
    batch = {"batch_size": scoring["batch_size"], "token_budget": None}
    gpu = [
        run
        for run in runs
        if run["device"].startswith("cuda") and run["settings"]["preset"] == PREDICTED_MODEL
    ]
    first = next((run for run in gpu if same_cut(cut(run), batch)), None)
    if first is None:
        return None

    def key(run: dict, case: dict) -> tuple[int, int, int]:
        return run["settings"]["questions"], run["settings"]["answers"], case["conditioning"]

    header = [
        "questions x held-out x conditioning answers",
        f"{first['device_name']}, `hf` tasks/s",
    ]
    columns, met, compared = [], 0, 0
    for setting in (scoring, batch):
        later = [r for r in gpu if r["date"] > first["date"] and same_cut(cut(r), setting)]
        latest = {key(r, case): (r, case) for r in later for case in r["cases"]}  # oldest first
        column = []
        for case in first["cases"]:
            run, match = latest.get(key(first, case), (None, None))
            if match is None:
                column.append("–")
                continue
            ratio = match["judges"]["hf"]["tasks_per_s"] / case["judges"]["hf"]["tasks_per_s"]
            met, compared = met + (ratio >= 2), compared + 1
            tasks = match["judges"]["hf"]["tasks_per_s"]
            column.append(f"{tasks:.3g} ({ratio:.1f}x, {run['device_name']} {run['date'][:10]})")
        columns.append(column)
        budget = setting.get("token_budget")
        header.append(
            f"latest at token budget {budget}"
            if budget
            else f"latest at batch size {batch['batch_size']}"
        )
    rows = [
        [" x ".join(map(str, key(first, case))), f"{case['judges']['hf']['tasks_per_s']:.3g}"]
        + [column[i] for column in columns]
        for i, case in enumerate(first["cases"])
    ]
    return {
        "run": first,
        "table": table(header, rows, align="lrrr"),
        "met": met,
        "compared": compared,
        "peak": extent(hf_values(first, "peak_share"), ".0%"),
    }


def by_batch_size(runs: list[dict]) -> list[tuple[Cut, list[dict]]]:
    """``runs`` grouped by how they cut forwards (:func:`cut`, budgets ``auto`` derived as
    one), batch sizes first."""
    return sorted(grouped(runs, lambda run: cut(run, exact=False)).items())


def tokens(run: dict) -> str:
    """Tokens computed per task by each algorithm, counted on every example question."""
    header = ["held-out answers", "conditioning answers", "tasks", "`reference`"]
    header += ["`hf` before (padded rows)", "`hf` (token tree)", "fewer than before"]
    header += ["distinct tokens"]
    rows = [
        [
            count["answers"],
            count["conditioning"],
            count["tasks"],
            f"{count['tokens_per_task']['reference']:.0f}",
            f"{count['tokens_per_task']['hf_padded_rows']:.1f}",
            f"{count['tokens_per_task']['hf']:.1f}",
            saving(count["tokens_per_task"]),
            f"{count['tokens_per_task']['distinct']:.1f}",
        ]
        for count in run["token_counts"]
    ]
    counts = table(header, rows, align="l" + "r" * (len(header) - 1))
    return render("performance/tokens.md.j2", run=run, tokens=counts)


def readme(runs: list[dict]) -> str:
    """The README's speed figure: `hf`'s speed-up over `reference`, its range over every
    recorded run of each device and shape, with their batch sizes."""
    summaries = [
        {
            "device": device,
            "preset": preset,
            "runs": len(group),
            "batch_sizes": batch_sizes(group),
            "speedup": extent([s for run in group for s in speedups(run)], ".1f"),
        }
        for (device, preset), group in groups(runs).items()
    ]
    return render("performance/readme.md.j2", groups=summaries)


def per_rule(result: dict) -> dict[str, str]:
    """The run's per-rule table (summed over each rule's jobs, from Snakemake's benchmark
    files) and the judge's forward tokens per artifact kind (``""`` if not recorded): the
    context of ``templates/per_rule.md.j2``."""
    header = ["rule", "jobs", "wall s", "CPU s", "peak MiB (one job)"]
    rows = [
        [
            row["rule"],
            row["jobs"],
            f"{row['wall_s']:.0f}",
            f"{row['cpu_s']:.0f}",
            "–" if row["peak_rss_mib"] != row["peak_rss_mib"] else f"{row['peak_rss_mib']:.0f}",
        ]  # NaN peak: too short to sample
        for row in result.get("per_rule") or []
    ]
    tokens = [
        [row["kind"], f"{row['judge_forward_tokens']:,}"]
        for row in result.get("judge_tokens") or []
    ]
    return {
        "rule_table": table(header, rows, align="lrrrr") if rows else "",
        "token_table": table(["artifacts", "tokens"], tokens, align="lr") if tokens else "",
    }


def judge_pass(before: dict, string_pairs: dict, after: dict) -> str:
    """docs/performance.md's comparison of the Quick start run before the shared judge pass
    (one judge job per strategy and study), with it (controlled pairs still grouping answers
    by string) and after (pairs grouped by meaning: fewer pairs where SmolLM2's answers hold no
    real majority), all three on one config."""

    def total(run: dict) -> int:
        return next(r["judge_forward_tokens"] for r in run["judge_tokens"] if r["kind"] == "total")

    runs = (before, string_pairs, after)
    measures = {
        "workflow wall time (s)": [run["seconds"] for run in runs],
        "CPU time (s)": [run["cpu_seconds"] for run in runs],
        "judge forward tokens": [total(run) for run in runs],
    }
    header = ["measure", "one job per strategy and study", "one judge pass"]
    header += ["and pairs grouped by meaning", "change"]
    rows = [
        [name, f"{a:,.0f}", f"{b:,.0f}", f"{c:,.0f}", f"{b / a - 1:+.0%}, {c / a - 1:+.0%}"]
        for name, (a, b, c) in measures.items()
    ]
    comparison = table(header, rows, align="lrrrr")
    return render("performance/judge-pass.md.j2", runs=runs, comparison=comparison)


def judge_batching(record: dict) -> str:
    """docs/performance.md's judge pass with its forwards cut by masked words and by tokens,
    and compiled (``selfreflect bench judge-batching``), each setting against the first."""
    first = record["settings"][0]
    rows = [
        [
            setting_text(row),
            f"{row['forwards']:,}",
            f"{row['tokens']:,}",
            f"{row['first_pass']['cpu_s']:.1f}",
            "{:.1f} ({:.1f}-{:.1f})".format(row["cpu_s"], *row["cpu_s_range"]),
            "{:.1f} ({:.1f}-{:.1f})".format(row["wall_s"], *row["wall_s_range"]),
            f"{first['cpu_s'] / row['cpu_s']:.2f}x",
            f"{row['max_score_difference']:.1e}",
        ]
        for row in record["settings"]
    ]
    header = ["forwards cut by", "forwards", "tokens computed", "first pass CPU s", "CPU s"]
    header += ["wall s", f"CPU speed-up over {setting_text(first)}", "largest score change"]
    comparison = table(header, rows, align="lrrrrrrr")
    compiled = [
        {
            "setting": setting_text(row),
            "first_pass": row["first_pass"]["cpu_s"],
            "job_ratio": row["first_pass"]["cpu_s"] / first["cpu_s"],
            "later_ratio": row["cpu_s"] / first["cpu_s"],
            "met": meets_compile_rule(row, first),
        }
        for row in record["settings"]
        if row.get("compiled")
    ]
    return render(
        "performance/judge-batching.md.j2",
        record=record,
        comparison=comparison,
        first=setting_text(first),
        compiled=compiled,
        rule=COMPILE_RULE,
    )


def cpu_threads(records: list[dict]) -> str:
    """README command 1 run as it is and with the model jobs' threads set
    (``bench real-run -- --set-threads …``; ``records`` in the order they ran, the settings
    taking turns): per setting the median and range of the run's wall and CPU time and of its
    judge rule's wall time (summed over the rule's jobs), and whether every run's main table is
    the first run's."""
    if not records:
        return "No run with the model jobs' threads set has been recorded yet.\n"

    def judge_seconds(record: dict) -> float:
        return next(row["wall_s"] for row in record["per_rule"] if row["rule"] == "judge")

    def summary(values: list[float]) -> str:
        return f"{median(values):.0f} ({extent(values, '.0f')})"

    settings = grouped(records, lambda record: " ".join(record.get("snakemake_args", [])))
    first = median(run["seconds"] for run in settings[""])  # the command as is
    header = ["Snakemake arguments added", "runs", "wall s", "wall time, as is = 1", "CPU s"]
    header += ["judge rule wall s", "main table as the first run's"]
    rows = [
        [
            f"`{added}`" if added else "none (as is: the README's command)",
            len(runs),
            summary([run["seconds"] for run in runs]),
            f"{median(run['seconds'] for run in runs) / first:.2f}x",
            summary([run["cpu_seconds"] for run in runs]),
            summary([judge_seconds(run) for run in runs]),
            "yes" if all(run["main_table"] == records[0]["main_table"] for run in runs) else "no",
        ]
        for added, runs in settings.items()
    ]
    comparison = table(header, rows, align="lrrrrrl")
    load = extent([record["mean_load"] for record in records], ".1f")
    return render(
        "performance/cpu-threads.md.j2", records=records, load=load, comparison=comparison
    )


def contexts(record: dict) -> str:
    """The judge's host time to tokenize the example questions' contexts, whole and with their
    shared head once (``selfreflect bench contexts``), per N."""

    def seconds(times: dict) -> str:
        return f"{times['median']:.2f} ({extent([times['min'], times['max']], '.2f')})"

    rows = [
        [
            case["answers"],
            case["contexts"],
            f"{case['texts']:,}",
            f"{case['tokens']:,}",
            seconds(case["cpu_s"]["whole"]),
            seconds(case["cpu_s"]["shared_head"]),
            f"{case['speedup']:.1f}x",
            "yes" if case["identical"] else "no",
        ]
        for case in record["cases"]
    ]
    header = ["N", "contexts", "texts", "tokens", "whole: CPU s", "shared head: CPU s"]
    header += ["speed-up", "same token ids"]
    return (
        f"Measured {record['date']} on {record['machine']} (load average "
        f"{record['load_average']} at the start) with the tokenizer and prompts of "
        f"`{record['tokenizer_model']}`; median of {record['repeats']} passes (range) after an "
        "untimed one, the two ways taking turns.\n\n" + table(header, rows, align="rrrrrrrl") + "\n"
    )


def spans(
    runs: list[dict],
    real_run: dict,
    earlier: tuple[dict, dict, dict],
    explorer: dict,
    batching: dict,
    devices: list[dict],
    cpu_dags: Sequence[dict] = (),
    threads: Sequence[dict] = (),
) -> dict[str, str]:
    """The text of every rendered span; ``runs``: the recorded scorer runs, oldest first;
    ``devices``: the ``bench device-run`` records of lent devices, ``cpu_dags`` those of this
    CPU (:data:`CPU_DAGS`), oldest first; ``threads``: README command 1's runs with and without
    its model jobs' threads set (:data:`CPU_THREADS`), in the order they ran."""
    latest = latest_runs(runs)
    cpu, gpu = latest["cpu"], latest.get("cuda")
    opened = ", ".join(
        f"{seconds:g} s (question {index + 1})"
        for index, seconds in zip(explorer["opened"], explorer["question_seconds"], strict=True)
    )
    return {
        "laptop-rules": render(
            "performance/laptop-rules.md.j2", run=real_run, **per_rule(real_run)
        ),
        "judge-pass": judge_pass(*earlier),
        "judge-batching": judge_batching(batching),
        "tokens": tokens(cpu),
        "cpu": speed(cpu),
        "gpu": speed(gpu) if gpu else "No GPU run has been recorded yet.\n",
        "runs": runs_table(runs),
        "device-scorer": device_scorer(devices),
        "device-dag": device_dag(devices),
        "cpu-dag": device_dag(list(cpu_dags)),
        "cpu-threads": cpu_threads(list(threads)),
        "gpu-targets": gpu_targets(runs),
        "readme": readme(runs),
        "real-model-run": render("performance/real-model-run.md.j2", run=real_run),
        "explorer-scale": render(
            "performance/explorer-scale.md.j2", record=explorer, opened=opened
        ),
    }


def pages() -> dict[Path, str]:
    """Each page with rendered spans (``DOCS``) as its spans render now."""
    earlier = tuple(read_json(path) for path in EARLIER_RUNS)
    records = (read_json(REAL_RUN), earlier, read_json(EXPLORER), read_json(BATCHING))
    threads = [read_json(path) for path in sorted(CPU_THREADS.glob("*.json"))]
    rendered = spans(recorded(), *records, device_runs(), device_runs(CPU_DAGS), threads)
    rendered["contexts"] = contexts(read_json(CONTEXTS))
    return {path: fill(path.read_text(encoding="utf-8"), rendered) for path in DOCS}


@click.command(help="Render the measured spans of docs/performance.md and README.md.")
@click.option("--check", is_flag=True, help="only check that nothing is stale")
def performance(check: bool) -> None:
    from selfreflect.fileio import write_text

    stale = {path: text for path, text in pages().items() if path.read_text("utf-8") != text}
    if check and stale:
        names = ", ".join(map(str, stale))
        raise click.ClickException(f"{names}: stale; run selfreflect docs performance")
    for path, text in stale.items():
        write_text(path, text)
    print(f"rewrote {', '.join(map(str, stale))}" if stale else "up to date")
