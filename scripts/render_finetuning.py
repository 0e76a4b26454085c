"""Run the SmolLM2 finetuning config and render docs/finetuning.md from its artifacts.

    python3 scripts/render_finetuning.py            # run config/finetune.yaml, then render
    python3 scripts/render_finetuning.py --no-run   # render from the run's artifacts as they are

The run is ``snakemake main_table --configfile config/finetune.yaml --cores 1 --resources
gpu=1`` in this checkout (its results stay in ``results/finetune``); its wall time, CPU
time and peak memory (the largest total RSS of Snakemake and its jobs, sampled every 0.2 s, as
``scripts/measure_real_run.py`` measures) go to ``docs/finetuning.json`` together with the
training loss and the main table's rows of the finetuned strategies. The doc and its figure
``docs/finetuning_loss.png`` are rendered from that JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import psutil
from measure_real_run import tree_rss

REPO = Path(__file__).resolve().parents[1]
CONFIG = "config/finetune.yaml"
DOCS = REPO / "docs"
FIGURE = DOCS / "finetuning_loss.png"


def measure(cores: str) -> dict:
    """Run the config's main table (and all it needs) with Snakemake; time, memory, load."""
    command = ["snakemake", "main_table", "--configfile", CONFIG, "--cores", cores]
    command += ["--resources", "gpu=1"]
    start = time.perf_counter()
    process = psutil.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = Path(tempfile.mkstemp(suffix=".log")[1])
    peak, loads = 0, []
    with output.open("wb") as log:
        reader = threading.Thread(target=shutil.copyfileobj, args=(process.stdout, log))
        reader.start()
        while process.poll() is None:
            peak = max(peak, tree_rss(process))
            loads.append(os.getloadavg()[0])
            time.sleep(0.2)
        reader.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = output.read_text(errors="replace")
    output.unlink()
    sys.stdout.write(text)
    return {
        "jobs": dict(Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", text))),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": " ".join(command),
        "returncode": process.returncode,
        "seconds": round(time.perf_counter() - start, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        "peak_rss_mib": round(peak / 2**20),
        "mean_load": round(sum(loads) / max(len(loads), 1), 1),
        "cpus": os.cpu_count(),
    }


def collect(run: dict) -> dict:
    """The measured run with what the doc shows from its artifacts: the config's sizes, the
    training loss per step of each method and the main table's rows."""
    from selfreflect.config import FINETUNED, load_config

    config = load_config(REPO / CONFIG)
    name, subject = config["run"], config["subjects"][0]
    methods = [FINETUNED[s] for s in config["summaries"]["strategies"] if s in FINETUNED]
    finetune = f"results/{name}/finetune/{subject}"
    loss = {
        method: pd.read_csv(REPO / f"reports/{name}/finetune/{subject}/{method}/loss.tsv", sep="\t")
        for method in methods
    }
    main = pd.read_csv(REPO / f"reports/{name}/tables/main.csv")
    training = config["finetune"]["dataset"]
    sizes = {
        "training_dataset": config["datasets"][training],
        "training_questions": len(
            pd.read_parquet(REPO / f"results/{name}/{training}/questions.parquet")
        ),
        "evaluated_questions": int(main["n_scored"].max() + main["n_failed"].max()),
        "num_answers": config["answers"]["num_answers"],
        "teacher": config["finetune"]["teacher"],
        "candidates": config["finetune"]["candidates"],
        "min_gap": config["finetune"]["min_gap"],
        "examples": {
            method: len(pd.read_parquet(REPO / f"{finetune}/{method}/data.parquet"))
            for method in methods
        },
        "training": config["finetune"]["training"],
    }
    rows = main.astype(object).where(main.notna(), None).to_dict("records")
    return {
        "run": run,
        "config": sizes,
        "loss": {method: frame.to_dict("records") for method, frame in loss.items()},
        "main": rows,
    }


def epoch_means(loss: list[dict], epochs: int) -> list[float]:
    """The mean training loss of each epoch (its equal share of the steps)."""
    steps = pd.DataFrame(loss)["loss"].to_numpy()
    return [float(part.mean()) for part in np.array_split(steps, epochs)]


def loss_figure(loss: dict[str, list[dict]], epochs: int, path: Path) -> None:
    """Each method's training loss per optimiser step and its mean per epoch, a small PNG."""
    figure, panels = plt.subplots(
        1, len(loss), figsize=(4.5 * len(loss), 2.6), dpi=100, squeeze=False
    )
    for axes, (method, steps) in zip(panels[0], loss.items(), strict=True):
        frame = pd.DataFrame(steps)
        axes.plot(frame["step"], frame["loss"], marker="o", markersize=3, label="step")
        per_epoch = len(frame) / epochs
        centres = [per_epoch * (e + 0.5) + 0.5 for e in range(epochs)]
        axes.plot(centres, epoch_means(steps, epochs), marker="s", label="epoch mean")
        axes.set(
            xlabel="optimiser step",
            ylabel=f"{method.upper()} loss",
            title=f"finetuned_{method}: training loss",
        )
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _interval(row: dict, estimate: str, low: str, high: str) -> str:
    if row.get(estimate) is None:
        return "–"
    return f"{row[estimate]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"


def _p(value: float | None) -> str:
    return "–" if value is None else ("<0.001" if value < 0.001 else f"{value:.3f}")


def _verdict(row: dict, other: str, prefix: str, alpha: float = 0.05) -> str:
    """One sentence on a finetuned strategy against ``other`` from its paired test."""
    diff, p = row.get(f"{prefix}diff"), row.get(f"{prefix}p_value")
    if diff is None or p is None:
        return f"no paired test against {other}"
    side = "lower (better)" if diff < 0 else "higher (worse)"
    significance = "significant" if p < alpha else "not significant"
    return f"{abs(diff):.3f} {side} than {other} (Wilcoxon p = {_p(p)}, {significance} at 5 %)"


def _training_source(dataset: dict) -> str:
    part = dataset.get("part")
    if not part:
        return f"`{dataset['path']}`, never evaluated"
    return (
        f"of `{dataset['path']}`: the train part of its split by question id, share"
        f" {part['share']}, seed {part['seed']}; the evaluated ones are drawn from the rest"
    )


def render(result: dict) -> str:
    """docs/finetuning.md from the collected run."""
    run, sizes, rows = result["run"], result["config"], result["main"]
    training = sizes["training"]
    examples = sizes["examples"]
    taught = {
        "sft": f"with SFT, to write the teacher's (`{sizes['teacher']}`) summaries"
        f" ({examples.get('sft')} examples)",
        "dpo": "with DPO, to prefer the lower-scored summary of each pair of its candidate"
        f" strategies' ({', '.join(sizes['candidates'])}) summaries, scored with SelfReflect"
        f" ({examples.get('dpo')} pairs, score gap at least {sizes['min_gap']})",
    }
    methods = list(result["loss"])
    lines = [
        "# Finetuned summarisers on SmolLM2 (measured)",
        "",
        "Rendered by `scripts/render_finetuning.py` from `docs/finetuning.json`; do not edit.",
        "",
        f"`{run['command']}` on {run['date']}: SmolLM2-135M-Instruct learns, as a LoRA adapter"
        f" (rank {training['lora']['rank']}) trained for {training['epochs']} epochs on"
        f" {sizes['training_questions']} training questions"
        f" ({_training_source(sizes['training_dataset'])}):",
        "",
        *[f"- `finetuned_{method}`: {taught[method]};" for method in methods],
        "",
        "each finetuned strategy then summarises"
        f" {sizes['evaluated_questions']} evaluated questions in one greedy pass, scored against"
        f" N = {sizes['num_answers']} held-out answers with SmolLM2 as the judge.",
        "",
        "![Training loss per step](finetuning_loss.png)",
        "",
        *[
            f"{method.upper()}: training loss over {len(result['loss'][method])} optimiser steps"
            f" (batch size {training['batch_size']}), mean per epoch: "
            + ", ".join(f"{m:.3f}" for m in epoch_means(result["loss"][method], training["epochs"]))
            + "."
            for method in methods
        ],
        "",
        "## SelfReflect scores (lower is better)",
        "",
        "Mean with 95 % bootstrap CI over the questions every strategy scored; paired differences",
        "with their CI and Wilcoxon p-value (the main table, `reports/finetune/tables/main.csv`).",
        "",
        "| strategy | n | score | vs greedy | p | vs teacher | p |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        score = _interval(row, "mean", "ci_low", "ci_high")
        lines.append(
            f"| {row['strategy']} | {row['n_scored']} | {score}"
            f" | {_interval(row, 'diff', 'diff_low', 'diff_high')} | {_p(row['p_value'])}"
            f" | {_interval(row, 'teacher_diff', 'teacher_diff_low', 'teacher_diff_high')}"
            f" | {_p(row.get('teacher_p_value'))} |"
        )
    lines.append("")
    for row in rows:
        if row.get("teacher"):
            lines.append(
                f"`{row['strategy']}` scores {_verdict(row, 'greedy', '')}, and"
                f" {_verdict(row, row['teacher'], 'teacher_')}."
            )
    lines += [
        "",
        "## Time and memory",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| Snakemake wall time | {run['seconds'] / 60:.1f} min ({run['seconds']:.0f} s) |",
        f"| CPU time, all processes | {run['cpu_seconds'] / 60:.1f} min |",
        f"| peak memory (RSS of Snakemake and all its jobs) | {run['peak_rss_mib']} MiB |",
        f"| exit status | {run['returncode']} |",
        f"| CPU cores / mean 1-min load average | {run['cpus']} / {run['mean_load']} |",
        "",
        "The jobs Snakemake ran (a rerun with some outputs in place runs fewer): "
        + ", ".join(f"{rule} {count}" for rule, count in run["jobs"].items())
        + f". A load average above {run['cpus']} means other work shared the cores (the wall",
        "time is then longer than on an idle machine; the CPU time is not).",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", default="1")
    parser.add_argument("--no-run", action="store_true", help="render the existing run")
    args = parser.parse_args()
    json_path = DOCS / "finetuning.json"
    run = json.loads(json_path.read_text())["run"] if args.no_run else measure(args.cores)
    if run["returncode"] != 0:
        sys.exit(f"error: {run['command']} exited with {run['returncode']}")
    result = collect(run)
    json_path.write_text(json.dumps(result, indent=2) + "\n")
    loss_figure(result["loss"], result["config"]["training"]["epochs"], FIGURE)
    (DOCS / "finetuning.md").write_text(render(result))
    print(f"{run['seconds']:.0f} s, peak {run['peak_rss_mib']} MiB: docs/finetuning.md")


if __name__ == "__main__":
    main()
