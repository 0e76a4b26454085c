"""Everything after the judge at the paper's size, without a model.

    selfreflect bench scale --json docs/scale.json      # the paper's config and sizes
    selfreflect bench scale --questions 100 --answers 10 --json small.json

In a copy of this checkout (its tracked files), writes the artifacts of the config's run up to
its judge pass (:mod:`selfreflect.bench.synthetic`: 1000 questions, N = 50, six strategies, the
five pair types, the MC study on MMLU and convergence on 200 questions for the paper's config),
plans the run with Snakemake (only the jobs after the judge: the merges of the judgements, score
files, studies, tables and the explorer) and runs it, recording each job's wall and CPU time and
peak memory from its Snakemake benchmark file, each rule's output size and the inputs' sizes.
The jobs run the copy's code (its ``src`` first on ``PYTHONPATH``), so editing this checkout
while a long run goes on changes nothing in it. The copy lives in a temporary folder, removed
after a run that succeeds and kept (its path printed) after one that fails; ``--work`` names a
folder to keep in any case. ``selfreflect docs scale`` renders docs/scale.md from the JSON.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import chdir
from pathlib import Path
from typing import Any

import click
import yaml

from selfreflect import paths
from selfreflect.snakemake_jobs import workflow_jobs

RUN = "scale"
MIB = 2**20
PLANNED_SHARDS = (1, 8)  # the config's dry run with 1 and 8 shards: one or eight GPUs


def tracked_files(root: Path) -> list[str]:
    """The files git tracks in the checkout at ``root``; one line if it is not a checkout."""
    from selfreflect.errors import InputError

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
    if listed.returncode != 0 or not listed.stdout:
        raise InputError(f"{root}: not a git checkout of the project; run from its root")
    return list(filter(None, listed.stdout.decode().split("\0")))


def copy_checkout(root: Path, dest: Path) -> Path:
    """The files git tracks in the checkout at ``root``, copied to ``dest``."""
    for name in tracked_files(root):
        source = root / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name, follow_symlinks=False)
    return dest


def sized_config(config: Path, questions: int | None, answers: int | None) -> dict[str, Any]:
    """``config`` as run name :data:`RUN`, with ``questions`` questions per dataset and
    ``answers`` test and conditioning answers, if given (the convergence study keeps its share
    of the questions)."""
    from selfreflect.fileio import read_yaml

    sized = read_yaml(config)
    sized["run"] = RUN
    if questions is not None:
        before = sized.get("questions", {}).get("num_questions") or questions
        share = sized.get("report", {}).get("convergence_questions", 0) / before
        sized.setdefault("questions", {})["num_questions"] = questions
        sized.setdefault("report", {})["convergence_questions"] = max(1, round(share * questions))
        for spec in sized["datasets"].values():
            spec.pop("num_questions", None)
    if answers is not None:
        sized.setdefault("answers", {})["num_answers"] = answers
        for spec in sized["datasets"].values():
            spec.get("answers", {}).pop("num_answers", None)
    return sized


def copy_environment(project: Path) -> dict[str, str]:
    """This process's environment with the copy's ``src`` first on ``PYTHONPATH``: its jobs
    import the copy's package, not the checkout's (an editable install)."""
    paths_before = os.environ.get("PYTHONPATH")
    source = str(project / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (source, paths_before)))}


def snakemake(project: Path, *args: str, config: str = "scale.yaml") -> str:
    """Snakemake's output on ``config`` (the sized one) in ``project``, run on its code."""
    command = ["snakemake", "--configfile", config, *args]
    done = subprocess.run(
        command, cwd=project, capture_output=True, text=True, env=copy_environment(project)
    )
    if done.returncode != 0:
        raise click.ClickException(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def planned(project: Path, config: Path, shards: int) -> dict[str, int]:
    """Jobs per rule of the forced dry run of ``config`` in ``project`` with ``shards`` judge
    and answer shards (one per GPU)."""
    from selfreflect.snakemake_jobs import job_stats

    dry_run = ("-n", "--forceall", "--config", f"shards={shards}")
    return job_stats(snakemake(project, *dry_run, config=str(config)))


def plans(project: Path, config: Path, shard_counts: tuple[int, ...]) -> list[dict[str, Any]]:
    """The dry run of ``config`` as it is (its own sizes) with each number of judge and answer
    shards (one per GPU): jobs planned and seconds to build the DAG."""
    out = []
    for shards in shard_counts:
        start = time.perf_counter()
        jobs = sum(planned(project, config, shards).values())
        seconds = round(time.perf_counter() - start, 1)
        out.append({"shards": shards, "jobs": jobs, "seconds": seconds})
    return out


def job_records(project: Path, run: str = RUN) -> list[dict[str, Any]]:
    """Each job's rule, wildcards, wall and CPU seconds and peak memory, from its Snakemake
    benchmark file (benchmarks/<run>/<rule>[/<wildcards>...].tsv)."""
    records = []
    for path in sorted((project / "benchmarks" / run).rglob("*.tsv")):
        parts = path.relative_to(project / "benchmarks" / run).with_suffix("").parts
        (row,) = csv.DictReader(io.StringIO(path.read_text()), delimiter="\t")
        records.append(
            {
                "rule": parts[0],
                "wildcards": "/".join(parts[1:]),
                "wall_s": round(float(row["s"]), 1),
                "cpu_s": round(float(row["cpu_time"]), 1),
                "peak_rss_mib": round(float(row["max_rss"])),
            }
        )
    return records


def output_sizes(project: Path, config: str, rules: set[str]) -> dict[str, dict[str, float]]:
    """Files and MiB the jobs of each of ``rules`` wrote: their declared outputs, as the
    workflow lists them for ``config`` in ``project`` (``snakemake --summary`` names a file's
    rule only where Snakemake's own record of it survived)."""
    with chdir(project):  # the workflow's paths are relative to its folder
        jobs = workflow_jobs(Path(paths.SNAKEFILE), Path(config))
    sizes: dict[str, dict[str, float]] = {}
    for job in jobs:
        if job.rule not in rules:
            continue
        entry = sizes.setdefault(job.rule, {"files": 0, "mib": 0.0})
        for output in map(project.joinpath, job.output):
            files = [p for p in output.rglob("*") if p.is_file()] if output.is_dir() else [output]
            files = [p for p in files if p.exists()]
            entry["files"] += len(files)
            entry["mib"] += sum(p.stat().st_size for p in files) / MIB
    return {rule: {**v, "mib": round(v["mib"], 1)} for rule, v in sorted(sizes.items())}


def run_scale(config: Path, sized: dict[str, Any], cores: int, work: Path) -> dict[str, Any]:
    """Write the synthetic run of ``config``, ``sized`` by :func:`sized_config`, in a copy of
    this checkout under ``work``, plan and run what follows the judge; returns the record."""
    from selfreflect.bench.synthetic import write_synthetic_run
    from selfreflect.config import validate_config
    from selfreflect.snakemake_jobs import job_stats

    project = copy_checkout(Path.cwd(), work / "project")
    planning = plans(project, config, PLANNED_SHARDS)
    (project / "scale.yaml").write_text(yaml.safe_dump(sized, sort_keys=False))
    start = time.perf_counter()
    written = write_synthetic_run(validate_config(sized, "scale.yaml"), project)
    generated = time.perf_counter() - start
    inputs = {str(path): round((project / path).stat().st_size / MIB, 1) for path in written}
    planned = job_stats(snakemake(project, "-n"))
    start = time.perf_counter()
    snakemake(project, "--cores", str(cores))
    elapsed = time.perf_counter() - start
    jobs = job_records(project)
    outputs = output_sizes(project, "scale.yaml", set(planned))
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": str(config),
        "questions": sized["questions"]["num_questions"],
        "answers": sized["answers"]["num_answers"],
        "strategies": len(sized["summaries"]["strategies"]),
        "pair_types": len(sized["report"]["pair_types"]),
        "convergence_questions": sized["report"]["convergence_questions"],
        "cpus": os.cpu_count(),
        "cores": cores,
        "inputs": inputs,  # MiB per file; the judgement shards are gone after their merge
        "generate_seconds": round(generated, 1),
        "plans": planning,
        "planned": planned,
        "run_seconds": round(elapsed, 1),
        "load_average": round(os.getloadavg()[1], 2),  # the last 5 minutes': other work slows it
        "jobs": jobs,
        "outputs": outputs,
    }


@click.command()
@click.option(
    "--config",
    "config",
    default=paths.DEFAULT_CONFIG,
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The run whose jobs after the judge are measured.",
)
@click.option("--questions", type=int, help="Questions per dataset (default: the config's).")
@click.option("--answers", type=int, help="Test and conditioning answers (default: the config's).")
@click.option("--cores", default=os.cpu_count(), show_default=True, help="Snakemake's --cores.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--work",
    type=click.Path(file_okay=False, path_type=Path),
    help="A new folder for the run's copy, kept (default: a temporary one, kept if it fails).",
)
def scale(
    config: Path,
    questions: int | None,
    answers: int | None,
    cores: int,
    json_out: Path | None,
    work: Path | None,
) -> None:
    """Run everything after the judge on synthetic artifacts of CONFIG's size (run from the
    project's root): each job's time and peak memory, each rule's outputs; written to --json."""
    from selfreflect.fileio import write_json

    tracked_files(Path.cwd())  # bad input fails here, before a folder is made
    sized = sized_config(config, questions, answers)
    if work is not None:
        if work.exists():  # a folder of an earlier run is not mixed into this one
            raise click.BadParameter(f"{work}: already exists", param_hint="--work")
        work.mkdir(parents=True)
    folder = work or Path(tempfile.mkdtemp(prefix="scale-bench-"))
    try:
        record = run_scale(config, sized, cores, folder.resolve())
    except BaseException:
        click.echo(f"bench scale: the run's folder is kept: {folder}", err=True)
        raise
    if work is None:
        shutil.rmtree(folder)
    if json_out:
        write_json(json_out, record)
    peak = max(job["peak_rss_mib"] for job in record["jobs"])
    click.echo(f"{len(record['jobs'])} jobs in {record['run_seconds']} s; peak {peak} MiB")
