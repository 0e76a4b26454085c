"""Run the SmolLM2 finetuning config and record it: docs/finetuning.json.

    selfreflect bench finetuning            # run config/finetune.yaml, then record
    selfreflect bench finetuning --no-run   # record the run's artifacts as they are

The run is ``snakemake report_main_table --configfile config/finetune.yaml --cores all --resources
gpu=1`` in this checkout (its results stay in ``results/finetune``); its wall time, CPU
time and peak memory (the largest total RSS of Snakemake and its jobs,
:mod:`selfreflect.bench.resources`, as ``selfreflect bench real-run`` measures) go to
``docs/finetuning.json`` together with the config's sizes, the training loss and the main
table's rows. ``selfreflect docs finetuning`` renders docs/finetuning.md and its figure
``docs/finetuning_loss.png`` from that JSON.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

import click
import pandas as pd

CONFIG = "config/finetune.yaml"
JSON = Path("docs") / "finetuning.json"


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


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--cores", default="all", show_default=True)
@click.option("--no-run", is_flag=True, help="record the existing run")
def finetuning(cores: str, no_run: bool) -> None:
    from selfreflect.fileio import read_json, write_json

    run = read_json(JSON)["run"] if no_run else measure(cores)
    if run["returncode"] != 0:
        raise click.ClickException(f"{run['command']} exited with {run['returncode']}")
    write_json(JSON, collect(run))
    print(f"{run['seconds']:.0f} s, peak {run['peak_rss_mib']} MiB: {JSON}; render it with")
    print("selfreflect docs finetuning")
