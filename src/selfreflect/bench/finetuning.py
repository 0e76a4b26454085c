"""Run a finetuning config and record it: docs/finetuning/<run>.json.

    selfreflect bench finetuning                          # run config/finetune.yaml, record it
    selfreflect bench finetuning --config config/finetune-grpo.yaml
    selfreflect bench finetuning --no-run                 # record the run's artifacts as they are

The run is ``snakemake report_main_table report_cost_table --configfile <config> --cores all
--resources gpu=1`` in this checkout (its results stay in ``results/<run>``); its wall time, CPU
time and peak memory (the largest total RSS of Snakemake and its jobs,
:mod:`selfreflect.bench.resources`, as ``selfreflect bench real-run`` measures) go to the
record together with the config's sizes, each job's time from Snakemake's benchmark files, the
training loss (and, for GRPO, the reward and its cost per step), the summaries' lengths and the
main table's rows; the per-question scores the main table was built from go beside it
(docs/finetuning/<run>.scores.parquet), so that ``selfreflect docs finetuning --check``
recomputes the table's intervals and tests. ``--no-run`` keeps the invocation a record already
holds; a run that spanned sittings under plain Snakemake has none, and its jobs' times are its
cost.
``selfreflect docs finetuning`` renders docs/finetuning.md and its figures from the records.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import click
import pandas as pd

CONFIG = "config/finetune.yaml"
RECORDS = Path("docs") / "finetuning"  # one record per finetuning run: <run>.json
TARGETS = ["report_main_table", "report_cost_table"]
# GRPO's per-step log (DVCLive metrics beside the loss): the reward, its spread and cost
GRPO_METRICS = ["reward", "reward_std", "reward_cpu_s", "reward_cpu_s_per_summary", "step_time"]
GRPO_METRICS += ["unscored", "summary_words"]


def record_path(run: str) -> Path:
    """Where the run ``run`` is recorded."""
    return RECORDS / f"{run}.json"


def rows_path(run: str) -> Path:
    """The per-question scores the run's main table was built from, beside its record."""
    return RECORDS / f"{run}.scores.parquet"


def command(config: str, cores: str) -> list[str]:
    """The Snakemake invocation that runs ``config``'s finetuning evidence."""
    return ["snakemake", *TARGETS, "--configfile", config, "--cores", cores, "--resources", "gpu=1"]


def measure(config: str, cores: str) -> dict:
    """Run the config's main and cost tables (and all they need) with Snakemake; time, memory,
    load."""
    from selfreflect.bench.resources import sampled_run

    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "snakemake.log"
        usage = sampled_run([*command(config, cores), "--rerun-incomplete"], Path.cwd(), log)
        text = log.read_text(errors="replace")
    sys.stdout.write(text)
    jobs = Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\w+)\)", text))
    return {"jobs": dict(jobs), **usage}


def unmeasured(config: str) -> dict:
    """The run entry of a record whose run no invocation measured (it spanned sittings)."""
    date = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return {"command": " ".join(command(config, "all")), "date": date, "returncode": 0}


def training_log(folder: str) -> list[dict]:
    """GRPO's metrics per optimiser step from its DVCLive folder, one dict per step."""
    from selfreflect import paths

    metrics = Path(folder) / paths.LOSS.rsplit("/", 1)[0]
    frames = [
        pd.read_csv(metrics / f"{name}.tsv", sep="\t").set_index("step")[name]
        for name in GRPO_METRICS
        if (metrics / f"{name}.tsv").is_file()
    ]
    return _records(pd.concat(frames, axis=1).reset_index()) if frames else []


def collect(run: dict, config_path: str, config: dict) -> dict:
    """The measured run with what the doc shows from its artifacts: the config's sizes and
    models, the analysis plan, the training loss per step of each adapter (``sft-seed0``),
    GRPO's reward per step, the summaries' mean length and the main table's rows."""
    from selfreflect import paths
    from selfreflect.finetune import finetuned_methods, judge_name, trained_adapters
    from selfreflect.provenance import git_commit
    from selfreflect.report.performance import performance_table, read_benchmarks

    name, subject = config["run"], config["subjects"][0]
    finetune = f"results/{name}/finetune/{subject}"
    adapters = trained_adapters(config)
    log = paths.for_run(paths.TRAINING_LOG, name)
    logs = {(m, s): log.format(subject=subject, method=m, seed=s) for m, s in adapters}
    loss = {
        f"{m}-seed{s}": pd.read_csv(f"{folder}/{paths.LOSS}", sep="\t")
        for (m, s), folder in logs.items()
    }
    main = pd.read_csv(f"reports/{name}/tables/main.csv")
    cost = pd.read_csv(f"reports/{name}/tables/cost.csv")
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
        "grpo": config["finetune"]["grpo"] if "grpo" in finetuned_methods(config) else None,
        "max_summary_tokens": config["summaries"]["max_tokens"],
        "examples": {
            method: len(pd.read_parquet(f"{finetune}/{method}/data.parquet"))
            for method in finetuned_methods(config)
            if method != "grpo"
        },
        "training": config["finetune"]["training"],
        "plan": config["report"]["plan"],
        "baseline": config["report"]["baseline"],
    }
    jobs = performance_table(read_benchmarks([f"benchmarks/{name}", "benchmarks/models"]))
    return {
        "config_path": config_path,
        "commit": git_commit(),  # the checkout's: the run's code where it ran here
        "run": run,
        "jobs": _records(jobs),
        "config": sizes,
        "loss": {adapter: frame.to_dict("records") for adapter, frame in loss.items()},
        "rewards": {
            f"{m}-seed{s}": training_log(folder) for (m, s), folder in logs.items() if m == "grpo"
        },
        "summary_words": dict(zip(cost["strategy"], cost["summary_words"], strict=True)),
        "main": _records(main),
    }


def per_question(config: dict) -> pd.DataFrame:
    """The per-question scores the run's main table was built from (every evaluation judge,
    dataset, subject and strategy), as its report reads them."""
    from selfreflect import paths
    from selfreflect.config import summarized_datasets
    from selfreflect.report.catalog import report_for

    files = [
        paths.SCORES.format(
            run=config["run"], dataset=dataset, subject=subject, judge=judge, strategy=strategy
        )
        for dataset in summarized_datasets(config)
        for subject in config["subjects"]
        for judge in config["judges"]
        for strategy in config["summaries"]["strategies"]
    ]
    return report_for("main").read(files)


def _records(frame: pd.DataFrame) -> list[dict]:
    """The rows of ``frame`` as dicts, with None (JSON null) for missing values."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


@click.command(help=__doc__.split("\n\n")[0])
@click.option(
    "--config",
    "config_path",
    default=CONFIG,
    show_default=True,
    type=click.Path(exists=True, dir_okay=False),
    help="the finetuning config to run and record",
)
@click.option("--cores", default="all", show_default=True)
@click.option("--no-run", is_flag=True, help="record the existing run")
def finetuning(config_path: str, cores: str, no_run: bool) -> None:
    from selfreflect.config import load_config
    from selfreflect.fileio import atomic_path, read_json, write_json

    config = load_config(config_path)
    record = record_path(config["run"])
    if not no_run:
        run = measure(config_path, cores)
    elif record.is_file():
        run = read_json(record)["run"]
    else:
        run = unmeasured(config_path)
    if run["returncode"] != 0:
        raise click.ClickException(f"{run['command']} exited with {run['returncode']}")
    result, rows = collect(run, config_path, config), per_question(config)
    with atomic_path(rows_path(record.stem)) as tmp:
        rows.to_parquet(tmp, index=False)
    write_json(record, result)
    measured = (
        f"{run['seconds']:.0f} s, peak {run['peak_rss_mib']} MiB: " if "seconds" in run else ""
    )
    print(f"{measured}{record}; render it with")
    print("selfreflect docs finetuning")
