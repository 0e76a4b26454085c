"""The judge job's peak memory at the paper's N, on shards of different sizes.

    selfreflect bench judge-memory --json docs/judge_memory.json

In a work folder: the paper config (``config/config.yaml``: its strategies, pair types, share of
convergence questions, scoring and clustering settings) with the tiny random-weight model as
subject and judge on the ``hf`` backend in float32 (a real architecture whose forwards cost
little), and synthetic questions, answers and summaries (:mod:`selfreflect.bench.synthetic`) at
N = 50 answers. Then ``selfreflect judge`` with its studies runs shard 0 of the summarised
dataset at each shard size, each with a cache of its own, its peak resident memory (with its
children), wall and CPU time sampled. The judge writes a question's rows as they come: its peak
must not grow with the shard's questions.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import yaml

from selfreflect import paths

RUN = "judge-memory"
MODEL = "tiny"
SHARD_QUESTIONS = (4, 16)  # the shard sizes measured: the largest is every question
ANSWERS = 50  # test and conditioning answers per question: the paper's N
MAX_MODEL_LEN = 4096  # the tiny model's positions: its small vocabulary makes long prompts


def judge_config(shard_questions: tuple[int, ...], answers: int, model: Path) -> dict[str, Any]:
    """The paper config with the tiny model at ``model`` as subject and judge, as many
    questions as the largest shard and ``answers`` answers, convergence on the paper's share of
    the questions."""
    from selfreflect.config import read_config_file

    config = read_config_file(Path(paths.DEFAULT_CONFIG))
    config.pop("include", None)
    questions = max(shard_questions)
    share = config["report"]["convergence_questions"] / config["questions"]["num_questions"]
    spec = {"path": str(model), "backend": "hf", "dtype": "float32"}
    config.update(run=RUN, models={MODEL: spec | {"max_model_len": MAX_MODEL_LEN}})
    config.update(subjects=[MODEL], judges=[MODEL])
    config["questions"]["num_questions"] = questions
    config["answers"]["num_answers"] = answers
    config["scoring"]["dtype"] = "float32"
    config["report"]["convergence_questions"] = max(1, round(share * questions))
    return config


def judge_command(config: dict[str, Any], shard: int, shards: int, work: Path) -> list[str]:
    """``selfreflect judge`` (with its studies) of shard ``shard`` of ``shards`` of the
    summarised dataset, its cache and output its own."""
    from selfreflect.config import summarized_datasets

    where = {"run": RUN, "dataset": summarized_datasets(config)[0], "subject": MODEL}
    summaries = [
        paths.SUMMARIES.format(**where, strategy=strategy)
        for strategy in config["summaries"]["strategies"]
    ]
    return [
        "selfreflect", "judge", "--config", "config.yaml",
        "--dataset", where["dataset"], "--subject", MODEL, "--judge", MODEL,
        "--questions", paths.QUESTIONS.format(**where),
        "--answers", paths.ANSWERS.format(**where),
        "--shard", str(shard), "--shards", str(shards), "--studies",
        "--cache", str(work / f"cache-{shards}"), "--out", str(work / f"judged-{shards}.parquet"),
        *summaries,
    ]  # fmt: skip


def shard_record(config: dict[str, Any], shard_questions: int, work: Path) -> dict[str, Any]:
    """The judge job of one shard of ``shard_questions`` questions: its resources, rows, tasks."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from selfreflect.bench.resources import sampled_run

    shards = config["questions"]["num_questions"] // shard_questions
    command = judge_command(config, 0, shards, work)
    log = work / f"judge-{shards}.log"
    run = sampled_run(command, work, log)
    if run["returncode"] != 0:
        raise click.ClickException(f"{' '.join(command)} failed; see the end of {log}:\n"
                                   + log.read_text()[-2000:])  # fmt: skip
    tasks = pq.read_table(work / f"judged-{shards}.parquet", columns=["tasks"])["tasks"]
    return {
        "shard_questions": shard_questions,
        "shards": shards,
        "rows": len(tasks),
        "tasks": pc.sum(pc.list_value_length(tasks)).as_py() or 0,
        **{key: run[key] for key in ("seconds", "cpu_seconds", "peak_rss_mib", "mean_load")},
    }


def run_benchmark(shard_questions: tuple[int, ...], answers: int, work: Path) -> dict[str, Any]:
    """Build the tiny model and the synthetic inputs under ``work``, then judge a shard of
    each size; the record."""
    from selfreflect.bench.synthetic import write_synthetic_run
    from selfreflect.config import validate_config
    from selfreflect.tiny_model import build_tiny_model

    build_tiny_model(work / MODEL)
    config = judge_config(shard_questions, answers, work / MODEL)
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    write_synthetic_run(validate_config(config, "config.yaml"), work)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "config": paths.DEFAULT_CONFIG,
        "answers": answers,
        "strategies": len(config["summaries"]["strategies"]),
        "pair_types": len(config["report"]["pair_types"]),
        "convergence_questions": config["report"]["convergence_questions"],
        "cpus": os.cpu_count(),
        "shards": [shard_record(config, size, work) for size in sorted(shard_questions)],
    }


@click.command("judge-memory")
@click.option(
    "--shard-questions",
    multiple=True,
    type=click.IntRange(min=1),
    default=SHARD_QUESTIONS,
    show_default=True,
    help="Questions of a judged shard (repeat the option); the largest is every question.",
)
@click.option("--answers", default=ANSWERS, show_default=True, help="Test and conditioning answers")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path))
def judge_memory(shard_questions: tuple[int, ...], answers: int, json_out: Path | None) -> None:
    """Run the judge job of the paper config at N = --answers on the tiny model, one shard of
    each size (run from the project's root): each one's peak memory and time; written to
    --json."""
    from selfreflect.fileio import write_json

    largest = max(shard_questions)
    if any(largest % size for size in shard_questions):
        raise click.BadParameter(f"each size must divide the largest, {largest}")
    with tempfile.TemporaryDirectory(prefix="judge-memory-") as work:
        record = run_benchmark(shard_questions, answers, Path(work))
    if json_out:
        write_json(json_out, record)
    for shard in record["shards"]:
        click.echo(
            f"{shard['shard_questions']} questions: peak {shard['peak_rss_mib']} MiB, "
            f"{shard['seconds']} s, {shard['tasks']:,} tasks"
        )
