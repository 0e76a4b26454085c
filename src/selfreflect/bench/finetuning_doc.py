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
    command += ["--resources", "gpu=1", "--rerun-incomplete"]
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "snakemake.log"
        usage = sampled_run(command, Path.cwd(), log)
        text = log.read_text(errors="replace")
    sys.stdout.write(text)
    jobs = Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", text))
    return {"jobs": dict(jobs), **usage}


def collect(run: dict) -> dict:
    """The measured run with what the doc shows from its artifacts: the config's sizes and
    models, the analysis plan, the training loss per step of each adapter (``sft-seed0``) and
    the main table's rows."""
    from selfreflect import paths
    from selfreflect.config import load_config
    from selfreflect.finetune import finetuned_methods, judge_name, trained_adapters
    from selfreflect.report.performance import performance_table, read_benchmarks

    config = load_config(CONFIG)
    name, subject = config["run"], config["subjects"][0]
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
        "subject": subject,
        "preference_judge": judge_name(config),
        "evaluation_judges": config["judges"],
        "training_dataset": config["datasets"][training],
        "training_questions": len(pd.read_parquet(f"results/{name}/{training}/questions.parquet")),
        "evaluated_questions": int(main["n_scored"].max() + main["n_failed"].max()),
        "num_answers": config["answers"]["num_answers"],
        "teacher": config["finetune"]["teacher"],
        "candidates": config["finetune"]["candidates"],
        "min_gap": config["finetune"]["min_gap"],
        "examples": {
            method: len(pd.read_parquet(f"{finetune}/{method}/data.parquet"))
            for method in finetuned_methods(config)
        },
        "training": config["finetune"]["training"],
        "plan": config["report"]["plan"],
    }
    jobs = performance_table(read_benchmarks([f"benchmarks/{name}", "benchmarks/models"]))
    return {
        "run": run,
        "jobs": _records(jobs),
        "config": sizes,
        "loss": {adapter: frame.to_dict("records") for adapter, frame in loss.items()},
        "main": _records(main),
    }


def _records(frame: pd.DataFrame) -> list[dict]:
    """The rows of ``frame`` as dicts, with None (JSON null) for missing values."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def by_method(loss: dict[str, list[dict]]) -> dict[str, dict[int, list[dict]]]:
    """The loss per adapter (``sft-seed2``) grouped by method, then seed."""
    from selfreflect.config import finetuned

    grouped: dict[str, dict[int, list[dict]]] = {}
    for adapter, steps in loss.items():
        method, seed = finetuned(f"finetuned_{adapter}")
        grouped.setdefault(method, {})[seed] = steps
    return grouped


def epoch_means(loss: list[dict], epochs: int) -> list[float]:
    """The mean training loss of each epoch (its equal share of the steps)."""
    steps = pd.DataFrame(loss)["loss"].to_numpy()
    return [float(part.mean()) for part in np.array_split(steps, epochs)]


def loss_figure(loss: dict[str, list[dict]], epochs: int, path: Path) -> None:
    """Each method's training loss per optimiser step, one line per seed, a small PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = by_method(loss)
    figure, panels = plt.subplots(
        1, len(methods), figsize=(4.5 * len(methods), 2.6), dpi=100, squeeze=False
    )
    for axes, (method, seeds) in zip(panels[0], methods.items(), strict=True):
        for seed, steps in seeds.items():
            frame = pd.DataFrame(steps)
            axes.plot(frame["step"], frame["loss"], marker="o", markersize=2, label=f"seed {seed}")
        axes.set(
            xlabel="optimiser step",
            ylabel=f"{method.upper()} loss",
            title=f"{method.upper()}: training loss ({epochs} epochs)",
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


def _verdict(row: dict, other: str, prefix: str) -> str:
    """One clause on a finetuned strategy against ``other``: its difference and the table's
    verdict (the plan's corrected test)."""
    diff, verdict = row.get(f"{prefix}diff"), row.get(f"{prefix}verdict")
    if diff is None or verdict is None:
        return f"has no paired test against {other}"
    side = "lower (better)" if diff < 0 else "higher (worse)"
    return (
        f"is {abs(diff):.3f} {side} than {other} (adjusted p = {_p(row[f'{prefix}p_adjusted'])}:"
        f" {verdict})"
    )


def _training_source(dataset: dict) -> str:
    part = dataset.get("part")
    if not part:
        return f"`{dataset['path']}`, never evaluated"
    unit = "question template" if part.get("by") == "template" else "question id"
    return (
        f"of `{dataset['path']}`: the train part of its split by {unit}, share"
        f" {part['share']}, seed {part['seed']}; the evaluated questions are the rest"
    )


def detectable_difference(rows: list[dict], plan: dict, prefix: str = "") -> float | None:
    """The paired difference the table would call significant with 80 % power, roughly: the
    median standard error of the finetuned strategies' differences (from their bootstrap
    intervals, taken as 95 % normal ones) times the z-values of the strictest Holm step (the
    family's size) and of the power."""
    from scipy.stats import norm

    tested = [r for r in rows if r.get("teacher") and r.get(f"{prefix}diff") is not None]
    if not tested:
        return None
    errors = [(r[f"{prefix}diff_high"] - r[f"{prefix}diff_low"]) / (2 * 1.96) for r in tested]
    family = [r for r in rows if r.get(f"{prefix}p_value") is not None]
    level = plan["level"] / len(family)
    return float(np.median(errors) * (norm.ppf(1 - level / 2) + norm.ppf(0.8)))


def _verdict_counts(rows: list[dict], prefix: str) -> str:
    counts = Counter(r[f"{prefix}verdict"] for r in rows if r.get(f"{prefix}verdict"))
    return ", ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items()))


def render(result: dict) -> str:
    """docs/finetuning.md from the collected run."""
    run, sizes, rows = result["run"], result["config"], result["main"]
    training, plan, examples = sizes["training"], sizes["plan"], sizes["examples"]
    adapters = {method: list(seeds) for method, seeds in by_method(result["loss"]).items()}
    taught = {
        "sft": f"with SFT, to write the teacher's (`{sizes['teacher']}`) summaries"
        f" ({examples.get('sft')} examples)",
        "dpo": "with DPO, to prefer the lower-scored summary of each pair of its candidate"
        f" strategies' ({', '.join(sizes['candidates'])}) summaries, scored with SelfReflect by"
        f" `{sizes['preference_judge']}` ({examples.get('dpo')} pairs, score gap at least"
        f" {sizes['min_gap']})",
    }
    finetuned = [row for row in rows if row.get("teacher")]
    greedy_mde = detectable_difference(rows, plan)
    teacher_mde = detectable_difference(rows, plan, "teacher_")
    judges = ", ".join(f"`{judge}`" for judge in sizes["evaluation_judges"])
    lines = [
        f"# Finetuned summarisers on {sizes['subject']} (measured)",
        "",
        "Rendered by `selfreflect bench finetuning-doc` from `docs/finetuning.json`; do not edit.",
        "",
        f"`{run['command']}` on {run['date']}: the subject `{sizes['subject']}` learns LoRA"
        f" adapters (rank {training['lora']['rank']}, {training['epochs']} epochs, learning rate"
        f" {training['learning_rate']}) on {sizes['training_questions']} training questions"
        f" ({_training_source(sizes['training_dataset'])}):",
        "",
        *[
            f"- `finetuned_{method}-seed<k>`, seeds {', '.join(map(str, seeds))}: {taught[method]};"
            for method, seeds in adapters.items()
        ],
        "",
        f"each adapter then summarises {sizes['evaluated_questions']} evaluated questions in one"
        f" greedy pass, scored against N = {sizes['num_answers']} held-out answers by {judges},"
        " a judge that took no part in training.",
        "",
        "![Training loss per step](finetuning_loss.png)",
        "",
        "| adapter | optimiser steps | mean loss per epoch |",
        "| --- | --- | --- |",
        *[
            f"| {adapter} | {len(steps)} | "
            + ", ".join(f"{m:.3f}" for m in epoch_means(steps, training["epochs"]))
            + " |"
            for adapter, steps in result["loss"].items()
        ],
        "",
        "## SelfReflect scores (lower is better)",
        "",
        "Mean with 95 % bootstrap CI over the questions every strategy scored; paired differences",
        "with their CI and Wilcoxon p-value (the main table, `reports/finetune/tables/main.csv`).",
        f"The p-values are {plan['correction'].capitalize()}-adjusted within each family: every"
        " strategy against greedy is one family, every finetuned strategy against its teacher",
        f"another; a verdict is an adjusted p below {plan['level']:g} (intervals unadjusted).",
        "",
        "| strategy | n | score | vs greedy | p | adjusted p | verdict"
        " | vs teacher | p | adjusted p | verdict |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        score = _interval(row, "mean", "ci_low", "ci_high")
        lines.append(
            f"| {row['strategy']} | {row['n_scored']} | {score}"
            f" | {_interval(row, 'diff', 'diff_low', 'diff_high')} | {_p(row['p_value'])}"
            f" | {_p(row.get('p_adjusted'))} | {row.get('verdict') or '–'}"
            f" | {_interval(row, 'teacher_diff', 'teacher_diff_low', 'teacher_diff_high')}"
            f" | {_p(row.get('teacher_p_value'))} | {_p(row.get('teacher_p_adjusted'))}"
            f" | {row.get('teacher_verdict') or '–'} |"
        )
    lines.append("")
    lines += [
        f"- `{row['strategy']}` {_verdict(row, 'greedy', '')}, and"
        f" {_verdict(row, row['teacher'], 'teacher_')}."
        for row in finetuned
    ]
    lines += [
        "",
        f"Over the {len(finetuned)} adapters: against greedy {_verdict_counts(finetuned, '')};"
        f" against the teacher {_verdict_counts(finetuned, 'teacher_')}.",
        "",
        "## What this run can and cannot show",
        "",
        f"- **Size.** {sizes['evaluated_questions']} evaluated questions and"
        f" N = {sizes['num_answers']} answers each. With these questions' spread, a difference"
        " from greedy is called significant with 80 % power only from about"
        f" {_number(greedy_mde)} (from the teacher: {_number(teacher_mde)}), estimated from"
        " the differences' bootstrap intervals at the family's strictest Holm step. A smaller"
        ' effect would be missed; a "not significant" verdict is no evidence of no effect.',
        f"- **Seeds.** The {_seed_counts(adapters)} per method show how much an adapter depends"
        " on its"
        " training run's randomness; the evaluated questions are the same for all of them, so"
        " the seeds do not add independent evidence about the questions.",
        _split_note(sizes["training_dataset"]),
        f"- **Models.** One small subject (`{sizes['subject']}`) and one small evaluation judge;"
        f" the result says nothing about the paper's 7B models. {_judges_apart(sizes)}",
        "",
        "## Time and memory",
        "",
        "Every job of the run, from Snakemake's benchmark files (each job's last completed run:"
        " a run resumed over several sittings counts each job once), slowest rule first:",
        "",
        "| rule | jobs | wall min | CPU min | peak MiB |",
        "| --- | --- | --- | --- | --- |",
        *[
            f"| {job['rule']} | {job['jobs']} | {_number(job['wall_s'] / 60, 1)}"
            f" | {_number(job['cpu_s'] / 60, 1)} | {_number(job['peak_rss_mib'], 0)} |"
            for job in result["jobs"]
        ],
        "",
        "The invocation that finished the run (after a stopped one, it ran only the jobs left):",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| Snakemake wall time | {run['seconds'] / 60:.1f} min ({run['seconds']:.0f} s) |",
        f"| CPU time, all processes | {run['cpu_seconds'] / 60:.1f} min |",
        f"| peak memory (RSS of Snakemake and all its jobs) | {run['peak_rss_mib']} MiB |",
        f"| exit status | {run['returncode']} |",
        f"| CPU cores / mean 1-min load average | {run['cpus']} / {run['mean_load']} |",
        "",
        "Jobs it ran: "
        + ", ".join(f"{rule} {count}" for rule, count in run["jobs"].items())
        + f". A load average above {run['cpus']} means other work shared the cores (the wall",
        "time is then longer than on an idle machine; the CPU time is not).",
    ]
    return "\n".join(lines) + "\n"


def _split_note(dataset: dict) -> str:
    if (dataset.get("part") or {}).get("by") == "template":
        return (
            "- **Held-out templates.** No question template is on both sides of the split, so an"
            " improvement cannot come from memorising a pattern's answers; it can still come from"
            " the format of the teacher's summaries."
        )
    return (
        "- **Split by question.** A question template may sit on both sides of the split, so an"
        " improvement may come from memorising a pattern's answers."
    )


def _seed_counts(adapters: dict[str, list[int]]) -> str:
    counts = sorted({len(seeds) for seeds in adapters.values()})
    return " or ".join(map(str, counts)) + " seed" + ("" if counts == [1] else "s")


def _judges_apart(sizes: dict) -> str:
    if sizes["preference_judge"] in sizes["evaluation_judges"]:
        return (
            f"The preference judge `{sizes['preference_judge']}` also evaluates, so DPO may win"
            " by fitting the judge that scores it."
        )
    return "The preference judge is not the evaluation judge, so DPO cannot win by fitting it."


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--cores", default="all", show_default=True)
@click.option("--no-run", is_flag=True, help="render the existing run")
def finetuning_doc(cores: str, no_run: bool) -> None:
    from selfreflect.fileio import read_json, write_json, write_text

    json_path = DOCS / "finetuning.json"
    run = read_json(json_path)["run"] if no_run else measure(cores)
    if run["returncode"] != 0:
        raise click.ClickException(f"{run['command']} exited with {run['returncode']}")
    result = collect(run)
    write_json(json_path, result)
    loss_figure(result["loss"], result["config"]["training"]["epochs"], FIGURE)
    write_text(DOCS / "finetuning.md", render(result))
    print(f"{run['seconds']:.0f} s, peak {run['peak_rss_mib']} MiB: docs/finetuning.md")
