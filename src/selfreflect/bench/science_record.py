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
from selfreflect.fileio import atomic_dir, read_json
from selfreflect.report.performance import read_benchmarks

TABLES = ("main", "validation", "mc_study", "backend_agreement")  # what a record keeps
REQUIRED = {  # the columns docs/science.md reads of each table; main and validation must exist
    "main": [
        "judge",
        "dataset",
        "strategy",
        "family",
        "mean",
        "ci_low",
        "ci_high",
        "diff",
        "diff_low",
        "diff_high",
        "p_value",
        "p_adjusted",
        "verdict",
        "n_failed",
    ],
    "validation": [
        "judge",
        "dataset",
        "pair_type",
        "metric",
        "n_correct",
        "n_pairs",
        "fraction",
        "ci_low",
        "ci_high",
        "p_value_vs_chance",
        "p_adjusted_vs_chance",
        "verdict_vs_chance",
        "mcnemar_p_value",
        "mcnemar_p_adjusted",
    ],
}
OPTIONAL = {
    "mc_study": [
        "judge",
        "dataset",
        "n_rho",
        "n_rho_skipped",
        "median_rho",
        "median_rho_low",
        "median_rho_high",
        "p_value",
        "verdict",
        "pooled_rho",
        "pooled_p_value",
        "pooled_verdict",
        "decided_by",
        "tracks_w1",
        "n_truth_agree",
        "n_truth_checked",
        "truth_check",
        "truth",
    ],
    "backend_agreement": ["judge", "backend", "n_summaries", "max_abs_diff", "mean_abs_diff"],
}
RECORD = "record.json"
OWNER = "selfreflect bench science-record"
_COUNT = {"type": "integer", "minimum": 0}
_SECONDS = {
    "type": "object",
    "required": ["jobs", "wall_s", "cpu_s"],
    "properties": {"jobs": _COUNT, "wall_s": {"type": "number"}, "cpu_s": {"type": "number"}},
}
RECORD_SCHEMA = {  # what docs/science.md reads of a record.json
    "type": "object",
    "required": ["judge", "recorded", "commit", "subjects", "questions", "answers", "plan", "time"],
    "properties": {
        "judge": {"type": "string"},
        "recorded": {"type": "string"},
        "commit": {"type": "string"},
        "subjects": {"type": "array", "items": {"type": "string"}},
        "questions": {"type": "object", "additionalProperties": _COUNT},
        "answers": {"type": "object", "additionalProperties": _COUNT},
        "plan": {"type": "object"},
        "time": _SECONDS,
    },
}
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
    Snakemake ran with (``logs/<run>/config.yaml``, overrides included). A judge's folder is
    replaced whole, so no table of an earlier record stays beside the new ones."""
    root, run = config_path.parents[1], load_config(config_path)["run"]
    resolved = load_config(root / paths.RESOLVED_CONFIG.format(run=run))
    folder = root / paths.TABLES.format(run=run)
    read = {
        name: read_table_csv(folder / f"{name}.csv")
        for name in TABLES
        if name in REQUIRED or (folder / f"{name}.csv").is_file()
    }
    questions = {
        dataset: len(pd.read_parquet(root / paths.QUESTIONS.format(run=run, dataset=dataset)))
        for dataset in evaluated_datasets(resolved)
    }
    benchmarks = root / paths.BENCHMARKS.format(run=run)
    commit, run_time = _commit(root), _run_time(benchmarks)
    written = []
    for judge in dict.fromkeys(read["main"]["judge"]):
        if judge not in resolved["judges"]:
            raise InputError(
                f"{folder / 'main.csv'}: judge: '{judge}' is not one of the run's judges"
                f" ({', '.join(resolved['judges'])})"
            )
        provenance = {
            "judge": judge,
            "recorded": datetime.now(UTC).strftime("%Y-%m-%d"),
            "commit": commit,
            "config": f"config/{config_path.name}",
            "subjects": resolved["subjects"],
            "questions": questions,
            "answers": {d: answer_settings(resolved, d)["num_answers"] for d in questions},
            "strategies": resolved["summaries"]["strategies"],
            "pair_types": resolved["report"]["pair_types"],
            "scoring": {k: resolved["scoring"][k] for k in ("backend", "temperature", "stopwords")},
            "plan": resolved["report"]["plan"],
            "time": _judge_jobs(benchmarks, judge),
            "run_time": run_time,
        }
        with atomic_dir(records / judge, OWNER) as tmp:
            for name, table in read.items():
                rows = table[table["judge"] == judge]
                (tmp / f"{name}.csv").write_text(rows.to_csv(index=False), encoding="utf-8")
            (tmp / RECORD).write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
        written.append(records / judge)
    return written


def _run_time(benchmarks: Path) -> dict[str, float]:
    """Every job of the run in this working tree: how many, summed wall and CPU seconds."""
    jobs = read_benchmarks([benchmarks])
    sums = {"wall_s": round(float(jobs["wall_s"].sum()), 1)}
    return {"jobs": len(jobs), **sums, "cpu_s": round(float(jobs["cpu_s"].sum()), 1)}


def read_table_csv(path: Path) -> pd.DataFrame:
    """A report table, with the columns the page reads (:data:`REQUIRED`, :data:`OPTIONAL`);
    one line naming the file otherwise."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        table = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as err:  # pandas' parser errors are ValueErrors
        raise InputError(
            f"{path}: not a readable CSV table ({' '.join(str(err).split())})"
        ) from None
    if missing := [c for c in {**REQUIRED, **OPTIONAL}[path.stem] if c not in table]:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    return table


def _read_record(path: Path) -> dict[str, Any]:
    """A judge's ``record.json``, checked against :data:`RECORD_SCHEMA`."""
    from jsonschema import Draft202012Validator

    made = read_json(path)
    if error := next(iter(Draft202012Validator(RECORD_SCHEMA).iter_errors(made)), None):
        where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
        raise InputError(f"{path}: {where.lstrip('.') or 'record'}: {error.message}")
    return made


def read_records(
    records: Path, config: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """Every judge's provenance (in the config's order of ``judges``) and the records' tables,
    each concatenated over judges. Refused, with one line naming the file and field: a record
    of a judge the config does not name, of other subjects, or made under another analysis plan
    than the config's (naming the settings that differ)."""
    if not records.is_dir():
        raise InputError(f"{records}: no such folder of science records")
    plan, judges = config["report"]["plan"], config["judges"]
    found = {path.parent.name: path for path in records.glob(f"*/{RECORD}")}
    if unknown := sorted(set(found) - set(judges)):
        raise InputError(
            f"{found[unknown[0]]}: judge: '{unknown[0]}' is not one of the config's judges"
            f" ({', '.join(judges)})"
        )
    provenance, tables = {}, {name: [] for name in TABLES}
    for judge in (j for j in judges if j in found):
        made = _read_record(found[judge])
        if made["judge"] != judge or made["subjects"] != config["subjects"]:
            recorded = f"{made['judge']}, {', '.join(made['subjects'])}"
            expected = f"{judge}, {', '.join(config['subjects'])}"
            raise InputError(
                f"{found[judge]}: judge, subjects: the record's {recorded}, not {expected}"
            )
        keys = plan.keys() | made["plan"].keys()
        if differ := sorted(k for k in keys if plan.get(k) != made["plan"].get(k)):
            raise InputError(
                f"{found[judge]}: plan: made under another analysis plan than the config's "
                f"({', '.join(differ)}); run that judge's report again under the config's plan"
            )
        provenance[judge] = made
        for name in TABLES:
            path = found[judge].parent / f"{name}.csv"
            if name in REQUIRED or path.is_file():
                tables[name].append(read_table_csv(path))
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
