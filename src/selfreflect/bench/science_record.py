"""The science run's records (docs/science/<judge>/): what each judge's run reported.

The science run (config/science.yaml) is a workflow run made one judge at a time on a CPU.
After each, ``science-record`` keeps that judge's rows of the report tables docs/science.md
shows and the run's provenance (commit, date, sizes, analysis plan, the judge's job times) in
the repository, so the page is re-rendered and asserted on (``pytest -m science``) without
the run's results.

    selfreflect bench science-record [--config config/science.yaml] [--records docs/science]
"""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import pandas as pd

from selfreflect import paths
from selfreflect.config import answer_settings, evaluated_datasets, load_config
from selfreflect.errors import InputError
from selfreflect.fileio import write_text
from selfreflect.report.performance import read_benchmarks

TABLES = ("main", "validation", "mc_study", "backend_agreement")  # what a record keeps
RECORD = "record.json"
STUDIES = ("controlled", "mc", "convergence", "agreement")
JUDGE_JOBS = (  # each judge's jobs among the benchmark files (benchmarks/<run>/<rule>/...)
    "judge/*/*/{judge}/*.tsv",
    "merge_judgements/*/*/{judge}.tsv",
    "strategy_scores/*/*/{judge}/*.tsv",
    *(f"report_{study}_scores/*/*/{{judge}}.tsv" for study in STUDIES),
    "report_alt_metrics/*/*/{judge}.tsv",
)


def _judge_jobs(benchmarks: Path, judge: str) -> dict[str, float]:
    """How many jobs of ``judge`` ran and their summed wall and CPU seconds."""
    files = [path for job in JUDGE_JOBS for path in benchmarks.glob(job.format(judge=judge))]
    last = [pd.read_csv(path, sep="\t").iloc[-1] for path in files]  # the last of `repeat` runs
    wall = sum(float(row["s"]) for row in last)
    cpu = sum(float(row["cpu_time"]) for row in last)
    return {"jobs": len(files), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def _commit(root: Path) -> str:
    """The commit the run's code came from (a modified tree is marked ``-dirty``)."""
    described = ["git", "describe", "--always", "--dirty", "--abbrev=40"]
    return subprocess.run(described, cwd=root, capture_output=True, text=True).stdout.strip()


def record(config_path: Path, records: Path) -> list[Path]:
    """Record each judge of the run of ``config_path`` (in the project holding ``config/``)
    that its report has rows of: its tables' rows and the run's provenance, read from what
    Snakemake ran with (``logs/<run>/config.yaml``, overrides included)."""
    root, run = config_path.parents[1], load_config(config_path)["run"]
    resolved = load_config(root / paths.RESOLVED_CONFIG.format(run=run))
    tables = {name: root / paths.TABLES.format(run=run) / f"{name}.csv" for name in TABLES}
    read = {name: pd.read_csv(path) for name, path in tables.items() if path.is_file()}
    if "main" not in read:
        raise InputError(f"{tables['main']}: missing; run the science workflow first")
    questions = {
        dataset: len(pd.read_parquet(root / paths.QUESTIONS.format(run=run, dataset=dataset)))
        for dataset in evaluated_datasets(resolved)
    }
    written = []
    for judge in dict.fromkeys(read["main"]["judge"]):
        folder = records / judge
        for name, table in read.items():
            rows = table[table["judge"] == judge]
            write_text(folder / f"{name}.csv", rows.to_csv(index=False))
        provenance = {
            "judge": judge,
            "recorded": datetime.now(UTC).strftime("%Y-%m-%d"),
            "commit": _commit(root),
            "config": f"config/{config_path.name}",
            "subjects": resolved["subjects"],
            "questions": questions,
            "answers": {d: answer_settings(resolved, d)["num_answers"] for d in questions},
            "strategies": resolved["summaries"]["strategies"],
            "pair_types": resolved["report"]["pair_types"],
            "scoring": {k: resolved["scoring"][k] for k in ("backend", "temperature", "stopwords")},
            "plan": resolved["report"]["plan"],
            "time": _judge_jobs(root / paths.BENCHMARKS.format(run=run), judge),
            "run_time": _run_time(root / paths.BENCHMARKS.format(run=run)),
        }
        write_text(folder / RECORD, json.dumps(provenance, indent=2) + "\n")
        written.append(folder)
    return written


def _run_time(benchmarks: Path) -> dict[str, float]:
    """Every job of the run in this working tree: how many, summed wall and CPU seconds."""
    jobs = read_benchmarks([benchmarks])
    sums = {"wall_s": round(float(jobs["wall_s"].sum()), 1)}
    return {"jobs": len(jobs), **sums, "cpu_s": round(float(jobs["cpu_s"].sum()), 1)}


def read_records(
    records: Path, plan: dict[str, Any], judges: list[str]
) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """Every judge's provenance (``judges``' order first) and the records' tables, each
    concatenated over judges; a record made under another plan than ``plan`` is refused,
    naming the settings that differ."""
    found = {path.parent.name: path for path in records.glob(f"*/{RECORD}")}
    order = [j for j in judges if j in found] + sorted(set(found) - set(judges))
    provenance, tables = {}, {name: [] for name in TABLES}
    for judge in order:
        made = json.loads(found[judge].read_text(encoding="utf-8"))
        keys = plan.keys() | made["plan"].keys()
        if differ := sorted(k for k in keys if plan.get(k) != made["plan"].get(k)):
            raise InputError(
                f"{found[judge]}: plan: made under another analysis plan than the config's "
                f"({', '.join(differ)}); run that judge's report again under the config's plan"
            )
        provenance[judge] = made
        for name in TABLES:
            path = found[judge].parent / f"{name}.csv"
            if path.is_file() and path.stat().st_size > 1:
                tables[name].append(pd.read_csv(path))
    frames = {name: pd.concat(parts, ignore_index=True) for name, parts in tables.items() if parts}
    return provenance, frames


CONFIG = click.option(
    "--config", type=click.Path(dir_okay=False), default="config/science.yaml", show_default=True
)
RECORDS = click.option(
    "--records", type=click.Path(file_okay=False), default="docs/science", show_default=True
)


@click.command(help="Keep each judge's science report and provenance under --records.")
@CONFIG
@RECORDS
def science_record(config: str, records: str) -> None:
    for folder in record(Path(config).resolve(), Path(records)):
        print(f"recorded {folder}")
