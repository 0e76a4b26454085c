"""The science run's records (docs/science/<judge>/): what each judge's run reported.

The science run (config/science.yaml) is a workflow run made one judge at a time on a CPU.
After each, ``science-record`` keeps that judge's rows of the report tables docs/science.md
shows, the per-question rows those tables were built from (``<judge>/rows/<table>.parquet``:
each summary's score, each pair's, each MC question's), and the run's provenance (commit,
date, sizes, analysis plan, the judge's job times) in the repository, so the page is
re-rendered and asserted on (``pytest -m science``), and its intervals and tests recomputed
(:func:`recompute`), without the run's results. Records made before 2026-12-02 carry no rows.

    selfreflect bench science-record [--config config/science.yaml] [--records docs/science]

Another config's run is recorded under docs/science-<config name>/ (:func:`default_records`):
a records folder holds one experiment's records (config file, subjects and the config's
digest, :func:`check_unmixed`).
"""

from __future__ import annotations

import itertools
import json
import string
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import numpy as np
import pandas as pd

from selfreflect import paths
from selfreflect.bench.plan_history import is_older, plan_commit
from selfreflect.config import answer_settings, evaluated_datasets, load_config
from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir, read_json
from selfreflect.questions import question_clusters

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
        "n_paired",
    ],
    "validation": [
        "judge",
        "dataset",
        "pair_type",
        "metric",
        "n_correct",
        "n_pairs",
        "n_excluded",
        "n_failed",
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
TEXT = {  # the columns above that hold text; the others hold numbers (or nothing)
    *("judge", "dataset", "strategy", "family", "verdict", "pair_type", "metric", "backend"),
    *("verdict_vs_chance", "pooled_verdict", "decided_by", "tracks_w1", "truth_check", "truth"),
}
KEYS = {  # what names a row of each table, beside its dataset, subject and judge
    "main": ["strategy"],
    "validation": ["pair_type", "metric"],
    "mc_study": [],
    "backend_agreement": ["backend"],
}
ROWS = "rows"  # a record's per-question rows: <judge>/rows/<table>.parquet
CLUSTERS = "clusters.csv"  # beside them: each of their questions' cluster (id, dataset, cluster)
PER_QUESTION = {  # the run's files each table is built from (its report's FILES)
    "main": paths.SCORES,
    "validation": paths.CONTROLLED,
    "mc_study": paths.MC,
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
        "data_commits": {"type": "array", "items": {"type": "string"}},
        "plan_commit": {"type": ["string", "null"]},
        "subjects": {"type": "array", "items": {"type": "string"}},
        "questions": {"type": "object", "additionalProperties": _COUNT},
        "answers": {"type": "object", "additionalProperties": _COUNT},
        "plan": {"type": "object"},
        "time": _SECONDS,
    },
}
STUDIES = ("controlled", "mc", "convergence", "agreement")
JUDGE_JOBS = (  # each judge's jobs' benchmark files (benchmarks/<run>/<rule>/<wildcards>.tsv)
    "judge/{dataset}/{subject}/{judge}/{shard}.tsv",
    "merge_judgements/{dataset}/{subject}/{judge}.tsv",
    "strategy_scores/{dataset}/{subject}/{judge}/{strategy}.tsv",
    *(f"report_{study}_scores/{{dataset}}/{{subject}}/{{judge}}.tsv" for study in STUDIES),
    "report_alt_metrics/{dataset}/{subject}/{judge}.tsv",
)


def _judge_jobs(benchmarks: Path, judge: str, resolved: dict[str, Any]) -> dict[str, float]:
    """How many jobs of ``judge`` the run of ``resolved`` ran and their summed wall and CPU
    seconds: only its own jobs' benchmark files count, not one an earlier sitting left of a
    job the run no longer has (another shard count, strategy, dataset or subject)."""
    names = {
        "dataset": evaluated_datasets(resolved),
        "subject": resolved["subjects"],
        "judge": [judge],
        "shard": range(resolved["shards"]),
        "strategy": resolved["summaries"]["strategies"],
    }
    files = [path for job in JUDGE_JOBS for path in _existing_files(benchmarks, job, names)]
    last = [_last_measure(path) for path in files]  # the last of `repeat` runs
    wall = sum(row["s"] for row in last)
    cpu = sum(row["cpu_time"] for row in last)
    return {"jobs": len(files), "wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def _existing_files(root: Path, template: str, names: dict[str, Any]) -> list[Path]:
    """The files under ``root`` of path ``template`` that exist, for every combination of the
    run's ``names`` (a job's benchmark files, a table's input files)."""
    fields = [field for _, field, _, _ in string.Formatter().parse(template) if field]
    values = itertools.product(*(map(str, names[field]) for field in fields))
    candidates = (root / template.format(**dict(zip(fields, v, strict=True))) for v in values)
    return [path for path in candidates if path.is_file()]


def _last_measure(path: Path) -> dict[str, float]:
    """The wall and CPU seconds of a benchmark file's last row; one line naming the file if it
    has none or they are not numbers."""
    try:
        table = pd.read_csv(path, sep="\t")
    except (ValueError, UnicodeDecodeError):  # pandas' EmptyDataError is a ValueError
        table = pd.DataFrame()
    if table.empty or not {"s", "cpu_time"} <= set(table):
        raise InputError(f"{path}: no measurement (s, cpu_time); run the job again")
    last = pd.to_numeric(table[["s", "cpu_time"]].iloc[-1], errors="coerce")
    if last.isna().any():
        raise InputError(f"{path}: s, cpu_time: not numbers in the last row")
    return {name: float(value) for name, value in last.items()}


def _commit(root: Path) -> str:
    """The commit the run's code came from (a modified tree is marked ``-dirty``); one line if
    ``root`` is not a git checkout with a commit."""
    described = ["git", "describe", "--always", "--dirty", "--abbrev=40"]
    done = subprocess.run(described, cwd=root, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        raise InputError(
            f"{root}: not a git checkout with a commit (git describe failed): a record names"
            " the commit its run's code came from"
        )
    return done.stdout.strip()


def config_digest(config_path: Path) -> str:
    """The digest of the experiment ``config_path`` sets, as written (the defaults the code
    fills in left out, so that records stay comparable across code versions), without its
    judges and the models only they use: every judge's record of one experiment has it."""
    from selfreflect.config import read_config_file
    from selfreflect.provenance import config_hash

    config = read_config_file(config_path)
    shared = [*config.get("subjects", []), config.get("summarizer")]
    models = {name: spec for name, spec in config.get("models", {}).items() if name in shared}
    return config_hash({**config, "judges": None, "models": models})


def record(config_path: Path, records: Path) -> list[Path]:
    """Record each judge of the run of ``config_path`` (in the project holding ``config/``)
    that its report has rows of: its tables' rows and the run's provenance, read from what
    Snakemake ran with (``logs/<run>/config.yaml``, overrides included). A judge's folder is
    replaced whole, so no table of an earlier record stays beside the new ones. Refused, with
    one line and before anything is written: a table older than the resolved config, a judge
    the run does not name, a folder of another experiment's records (:func:`check_unmixed`),
    a project outside git."""
    root, run = config_path.parents[1], load_config(config_path)["run"]
    resolved_path = root / paths.RESOLVED_CONFIG.format(run=run)
    resolved = load_config(resolved_path)
    folder = root / paths.TABLES.format(run=run)
    read = {
        name: _report_table(folder / f"{name}.csv", resolved_path)
        for name in TABLES
        if name in REQUIRED or (folder / f"{name}.csv").is_file()
    }
    judges = list(dict.fromkeys(read["main"]["judge"]))
    if unknown := [judge for judge in judges if judge not in resolved["judges"]]:
        raise InputError(
            f"{folder / 'main.csv'}: judge: '{unknown[0]}' is not one of the run's judges"
            f" ({', '.join(resolved['judges'])})"
        )
    made = _provenance(config_path, resolved, judges)
    check_unmixed([*((records / j / RECORD, m) for j, m in made.items()), *_kept_records(records)])
    known: dict[str, pd.Series] = {}  # each dataset's clusters, read once for all judges
    for judge, provenance in made.items():
        inputs = {name: _per_question(root, resolved, name, judge) for name in read}
        rows = [rows for rows in inputs.values() if rows is not None]
        clusters = _clusters(resolved, rows, known)
        with atomic_dir(records / judge, OWNER) as tmp:
            for name, table in read.items():
                rows = table[table["judge"] == judge]
                (tmp / f"{name}.csv").write_text(rows.to_csv(index=False), encoding="utf-8")
            for name, rows in inputs.items():
                if rows is not None:
                    (tmp / ROWS).mkdir(exist_ok=True)
                    rows.to_parquet(tmp / ROWS / f"{name}.parquet", index=False)
            if clusters is not None:
                (tmp / ROWS / CLUSTERS).write_text(clusters.to_csv(index=False), encoding="utf-8")
            (tmp / RECORD).write_text(json.dumps(provenance, indent=2) + "\n", encoding="utf-8")
    return [records / judge for judge in judges]


def _per_question(
    root: Path, resolved: dict[str, Any], table: str, judge: str
) -> pd.DataFrame | None:
    """The rows ``judge``'s part of ``table`` was built from: its report's reading of the run's
    files of :data:`PER_QUESTION` (none for another table, or where the judge has no such
    file)."""
    from selfreflect.report.catalog import report_for  # (matplotlib: not when listing)

    if table not in PER_QUESTION:
        return None
    names = {
        "dataset": evaluated_datasets(resolved),
        "subject": resolved["subjects"],
        "judge": [judge],
        "strategy": resolved["summaries"]["strategies"],
    }
    template = PER_QUESTION[table].replace("{run}", resolved["run"])
    files = _existing_files(root, template, names)
    return report_for(table).read(files) if files else None


def _clusters(
    resolved: dict[str, Any], rows: list[pd.DataFrame], known: dict[str, pd.Series]
) -> pd.DataFrame | None:
    """The cluster of each question of ``rows`` (:func:`question_clusters`: empty where its
    dataset gives none), read from the datasets of the run's config once into ``known``; none
    without rows."""
    if not rows:
        return None
    asked = pd.concat([frame[["id", "dataset"]] for frame in rows]).drop_duplicates()
    parts = []
    for name, questions in asked.groupby("dataset", sort=True):
        if name not in known:
            known[name] = question_clusters(resolved["datasets"][name])
        parts.append(questions.assign(cluster=questions["id"].map(known[name])))
    return pd.concat(parts, ignore_index=True)


def clustered(records: Path, config: dict[str, Any]) -> pd.DataFrame:
    """The tests of every record's tables that keeps per-question rows, with its questions
    clustered (:mod:`selfreflect.report.clustered`) under ``config``'s plan; no rows if none
    keeps them."""
    from selfreflect.report import clustered as by_cluster
    from selfreflect.report.catalog import report_for

    main = report_for("main").arguments(config)
    references, versus = main["references"], main["versus"]
    tables = []
    for folder in sorted(path.parent for path in records.glob(f"*/{ROWS}/{CLUSTERS}")):
        rows = {path.stem: pd.read_parquet(path) for path in folder.glob("*.parquet")}
        outcomes = [
            by_cluster.strategy_outcomes(rows["main"], main["baseline"], references, versus)
            if "main" in rows
            else None,
            by_cluster.pair_outcomes(rows["validation"]) if "validation" in rows else None,
            by_cluster.mc_outcomes(rows["mc_study"]) if "mc_study" in rows else None,
        ]
        named = pd.read_csv(folder / CLUSTERS, dtype=str).set_index("id")["cluster"]
        table = by_cluster.clustered_table(
            pd.concat([frame for frame in outcomes if frame is not None], ignore_index=True),
            named.dropna(),
            config["report"]["confidence"],
            main["plan"],
            report_for("validation").arguments(config)["plan"],
        )
        tables.append(table)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def _plain(value: Any) -> Any:
    """A NumPy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def recompute(records: Path, config: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Each record's tables built again from its per-question rows, as the run's report built
    them under ``config``: the tables recomputed (``<judge>/<table>``) and one line per value
    that differs from the recorded table (naming the file, row and column)."""
    from selfreflect.report.catalog import report_for

    done, differences = [], []
    for path in sorted(records.glob(f"*/{ROWS}/*.parquet")):
        judge, table = path.parents[1].name, path.stem
        report = report_for(table)
        rows = pd.read_parquet(path)
        # a column the report reads since the record was made (the validation's `error`) is
        # empty in it, as the report then read nothing there
        rows = rows.assign(**dict.fromkeys([c for c in report.columns or () if c not in rows]))
        built = report.build(rows, **report.arguments(config))
        recorded = path.parents[1] / f"{table}.csv"
        differences += table_differences(recorded, read_table_csv(recorded), built, KEYS[table])
        done.append(f"{judge}/{table}")
    return done, differences


def table_differences(
    path: Path, recorded: pd.DataFrame, built: pd.DataFrame, keys: list[str]
) -> list[str]:
    """One line per recorded value of ``path`` that ``built`` does not give (numbers to a
    relative 1e-9: the CSV round trip), and per row one of them lacks."""
    key = [c for c in ("dataset", "subject", "judge", *keys) if c in recorded]
    mine, theirs = recorded.set_index(key), built.set_index(key)
    lines = [
        f"{path}: row {', '.join(map(str, row))}: not recomputed"
        for row in mine.index.difference(theirs.index)
    ]
    lines += [
        f"{path}: row {', '.join(map(str, row))}: recomputed, not recorded"
        for row in theirs.index.difference(mine.index)
    ]
    common = mine.index.intersection(theirs.index)
    for column in [c for c in mine.columns if c in theirs.columns]:
        ours, new = mine.loc[common, column], theirs.loc[common, column]
        if column in TEXT or ours.dtype == object:
            same = (ours.astype(str) == new.astype(str)) | (ours.isna() & new.isna())
        else:
            a, b = ours.to_numpy(dtype=float), new.to_numpy(dtype=float)
            same = pd.Series(np.isclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True), common)
        for row in common[~same.to_numpy()]:
            was, now = (_plain(frame.loc[row, column]) for frame in (mine, theirs))
            where = ", ".join(map(str, row))
            lines.append(f"{path}: {column}: recorded {was!r}, recomputed {now!r} ({where})")
    return lines


def _provenance(
    config_path: Path, resolved: dict[str, Any], judges: list[str]
) -> dict[str, dict[str, Any]]:
    """Each judge's ``record.json``: the run's provenance and the judge's jobs' time."""
    root, run = config_path.parents[1], resolved["run"]
    questions = {
        dataset: len(pd.read_parquet(root / paths.QUESTIONS.format(run=run, dataset=dataset)))
        for dataset in evaluated_datasets(resolved)
    }
    benchmarks = root / paths.BENCHMARKS.format(run=run)
    config, plan = f"config/{config_path.name}", resolved["report"]["plan"]
    data = _data_commits(root, resolved)
    shared = {
        "recorded": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": _commit(root),
        "data_commits": data,
        "plan_commit": plan_commit(root, config, plan, data[0]) if data else None,
        "config": config,
        "config_digest": config_digest(config_path),
        "subjects": resolved["subjects"],
        "questions": questions,
        "answers": {d: answer_settings(resolved, d)["num_answers"] for d in questions},
        "strategies": resolved["summaries"]["strategies"],
        "pair_types": resolved["report"]["pair_types"],
        "scoring": {k: resolved["scoring"][k] for k in ("backend", "temperature", "stopwords")},
        "plan": plan,
        "run_time": _run_time(benchmarks),
    }
    return {
        judge: {"judge": judge, **shared, "time": _judge_jobs(benchmarks, judge, resolved)}
        for judge in judges
    }


def _data_commits(root: Path, resolved: dict[str, Any]) -> list[str]:
    """The commits that produced the run's answer sets (their files' ``git_commit``), its
    first data; oldest first where one is an ancestor of another."""
    from selfreflect.artifacts import read_metadata

    names = {"dataset": evaluated_datasets(resolved), "subject": resolved["subjects"]}
    answers = paths.ANSWERS.replace("{run}", resolved["run"])
    made = {read_metadata(path).get("git_commit") for path in _existing_files(root, answers, names)}
    listed = sorted(commit for commit in made if commit)
    return sorted(listed, key=lambda commit: sum(is_older(root, c, commit) for c in listed))


def _report_table(path: Path, resolved: Path) -> pd.DataFrame:
    """A report table of the run (:func:`read_table_csv`), refused if it is older than the
    run's ``resolved`` config: made under an earlier config, by a run whose rerun under the
    changed one did not reach the report."""
    table = read_table_csv(path)
    if path.stat().st_mtime < resolved.stat().st_mtime:
        raise InputError(
            f"{path}: older than {resolved}, the config the run last resolved: made under an"
            " earlier config; finish the run under this one before recording"
        )
    return table


def _kept_records(records: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The records already in ``records``: each ``record.json`` and what it holds."""
    return [(path, read_json(path)) for path in sorted(records.glob(f"*/{RECORD}"))]


def check_unmixed(made: list[tuple[Path, dict[str, Any]]]) -> None:
    """Refuse, naming the record and field, records of one folder from different experiments:
    another config file, other subjects, or (where both carry one; the earliest records carry
    none) another config digest than the first record's."""
    for path, theirs in made[1:]:
        for field in ("config", "subjects", "config_digest"):
            ours, their = made[0][1].get(field), theirs.get(field)
            if ours != their and (field != "config_digest" or (ours and their)):
                raise InputError(
                    f"{path}: {field}: {their}, not {ours}: a record of another experiment;"
                    " record each config in its own --records folder"
                )


def _run_time(benchmarks: Path) -> dict[str, float]:
    """Every job of the run in this working tree: how many, summed wall and CPU seconds."""
    last = [_last_measure(path) for path in sorted(benchmarks.rglob("*.tsv"))]
    wall = round(sum(row["s"] for row in last), 1)
    return {"jobs": len(last), "wall_s": wall, "cpu_s": round(sum(r["cpu_time"] for r in last), 1)}


def read_table_csv(path: Path) -> pd.DataFrame:
    """A report table, with the columns the page reads (:data:`REQUIRED`, :data:`OPTIONAL`),
    numbers where the page reads numbers (or empty) and each row once; one line naming the
    file otherwise."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        table = pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as err:  # pandas' parser errors are ValueErrors
        raise InputError(
            f"{path}: not a readable CSV table ({' '.join(str(err).split())})"
        ) from None
    columns = {**REQUIRED, **OPTIONAL}[path.stem]
    if missing := [c for c in columns if c not in table]:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    for column in (c for c in columns if c not in TEXT):
        numbers = pd.to_numeric(table[column], errors="coerce")
        if bad := table.index[numbers.isna() & table[column].notna()].tolist():
            raise InputError(
                f"{path}: {column}: {table[column][bad[0]]!r} on line {bad[0] + 2} is not a number"
            )
    key = [c for c in ("dataset", "subject", "judge", *KEYS[path.stem]) if c in table]
    if (twice := table.duplicated(key)).any():
        row = table[twice].iloc[0]
        raise InputError(f"{path}: {', '.join(key)}: {', '.join(map(str, row[key]))} given twice")
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
    of a judge the config does not name, of other subjects, made under another analysis plan
    than the config's (naming the settings that differ), records of different experiments
    (:func:`check_unmixed`), a table with rows of another judge than its record's."""
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
                tables[name].append(_judges_rows(path, judge))
    check_unmixed([(found[judge], made) for judge, made in provenance.items()])
    frames = {name: pd.concat(parts, ignore_index=True) for name, parts in tables.items() if parts}
    return provenance, frames


def _judges_rows(path: Path, judge: str) -> pd.DataFrame:
    """A record's table (:func:`read_table_csv`), refused if a row is not its ``judge``'s:
    the page would show that judge's rows twice."""
    table = read_table_csv(path)
    if others := sorted(set(table["judge"].astype(str)) - {judge}):
        raise InputError(f"{path}: judge: rows of '{others[0]}' in the record of '{judge}'")
    return table


def default_records(config: Path) -> Path:
    """Where the records of ``config`` live unless ``--records`` says: ``docs/science`` for
    the science run's config, ``docs/science-<name>`` for any other (so that a run of another
    config never replaces the science run's records)."""
    name = config.stem
    return Path("docs") / ("science" if name == "science" else f"science-{name}")


CONFIG = click.option(
    "--config", type=click.Path(dir_okay=False), default="config/science.yaml", show_default=True
)
RECORDS = click.option(
    "--records",
    type=click.Path(file_okay=False),
    help="The records' folder [default: docs/science for science.yaml, else docs/science-NAME].",
)


@click.command(help="Keep each judge's science report and provenance under --records.")
@CONFIG
@RECORDS
def science_record(config: str, records: str | None) -> None:
    folder = Path(records) if records else default_records(Path(config))
    for kept in record(Path(config).resolve(), folder):
        print(f"recorded {kept}")
