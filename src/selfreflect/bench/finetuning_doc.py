"""Run the SmolLM2 finetuning config and render docs/finetuning.md from its artifacts.

    selfreflect bench finetuning-doc            # run config/finetune.yaml, then render
    selfreflect bench finetuning-doc --no-run   # render from the run's artifacts as they are

The run is ``snakemake report_main_table --configfile config/finetune.yaml --cores all --resources
gpu=1`` in this checkout (its results stay in ``results/finetune``); its wall time, CPU
time and peak memory (the largest total RSS of Snakemake and its jobs,
:mod:`selfreflect.bench.resources`, as ``selfreflect bench real-run`` measures) go to
``docs/finetuning.json`` together with the training loss and the main table's rows of the
finetuned strategies. The doc and its figure ``docs/finetuning_loss.png`` are rendered from
that JSON.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import click
import numpy as np
import pandas as pd

CONFIG = "config/finetune.yaml"
DOCS = Path("docs")
FIGURE = DOCS / "finetuning_loss.png"


def measure(cores: str) -> dict:
    """Run the config's main table (and all it needs) with Snakemake; time, memory, load."""
    from selfreflect.bench.resources import sampled_run

    command = ["snakemake", "report_main_table", "--configfile", CONFIG, "--cores", cores]
    command += ["--resources", "gpu=1"]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "snakemake.log"
        usage = sampled_run(command, Path.cwd(), log)
        text = log.read_text(errors="replace")
    sys.stdout.write(text)
    jobs = Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", text))
    return {"jobs": dict(jobs), **usage}


def collect(run: dict) -> dict:
    """The measured run with what the doc shows from its artifacts: the config's sizes, the
    training loss per step of each method and the main table's rows."""
    from selfreflect import paths
    from selfreflect.config import load_config
    from selfreflect.finetune import finetuned_methods, trained_adapters

    config = load_config(CONFIG)
    name, subject = config["run"], config["subjects"][0]
    methods = finetuned_methods(config)
    finetune = f"results/{name}/finetune/{subject}"
    training_loss = paths.for_run(paths.TRAINING_LOSS, name)
    loss = {
        f"{method}-seed{seed}": pd.read_csv(
            training_loss.format(subject=subject, method=method, seed=seed), sep="\t"
        )
        for method, seed in trained_adapters(config)
    }
    main = pd.read_csv(f"reports/{name}/tables/main.csv")
    training = config["finetune"]["dataset"]
    sizes = {
        "training_dataset": config["datasets"][training],
        "training_questions": len(pd.read_parquet(f"results/{name}/{training}/questions.parquet")),
        "evaluated_questions": int(main["n_scored"].max() + main["n_failed"].max()),
        "num_answers": config["answers"]["num_answers"],
        "teacher": config["finetune"]["teacher"],
        "candidates": config["finetune"]["candidates"],
        "min_gap": config["finetune"]["min_gap"],
        "examples": {
            method: len(pd.read_parquet(f"{finetune}/{method}/data.parquet")) for method in methods
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        "Rendered by `selfreflect bench finetuning-doc` from `docs/finetuning.json`; do not edit.",
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


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--cores", default="all", show_default=True)
@click.option("--no-run", is_flag=True, help="render the existing run")
def finetuning_doc(cores: str, no_run: bool) -> None:
    from selfreflect.fileio import write_json, write_text

    json_path = DOCS / "finetuning.json"
    run = json.loads(json_path.read_text())["run"] if no_run else measure(cores)
    if run["returncode"] != 0:
        raise click.ClickException(f"{run['command']} exited with {run['returncode']}")
    result = collect(run)
    write_json(json_path, result)
    loss_figure(result["loss"], result["config"]["training"]["epochs"], FIGURE)
    write_text(DOCS / "finetuning.md", render(result))
    print(f"{run['seconds']:.0f} s, peak {run['peak_rss_mib']} MiB: docs/finetuning.md")
