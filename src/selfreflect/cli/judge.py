"""``selfreflect judge``: everything one experiment scores, one judge pass per question (the
workflow's scoring stage; ``selfreflect score`` scores files standalone)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from selfreflect.cli.options import (
    ANSWERS,
    CONFIG,
    OUT,
    QUESTIONS,
    SHARD,
    SHARDS,
    Job,
    folder_option,
    gpus_option,
    judging,
    reads,
)
from selfreflect.cli.report.studies import experiment
from selfreflect.config import evaluated_datasets

STUDY_SETTINGS = (  # what --studies reads: the controlled pairs, MC variants, subsamples
    "summaries.cluster.embedder",
    "summaries.cluster.threshold",
    "report.pair_types",
    "report.mc_temperatures",
    "report.convergence_sizes",
    "report.convergence_questions",
)


def study_settings(job: Job, config: dict[str, Any]) -> tuple[str, ...]:
    """The studies' settings, in the jobs that run them (an evaluated dataset's)."""
    return STUDY_SETTINGS if job["dataset"] in evaluated_datasets(config) else ()


@reads("seed", "scoring", judging, study_settings, prompts=True)
@click.command()
@gpus_option()
@CONFIG
@experiment
@QUESTIONS
@ANSWERS
@SHARD
@SHARDS
@click.option(
    "--studies/--no-studies",
    default=True,
    help="Also judge the controlled pairs, multiple-choice variants and convergence subsamples.",
)
@folder_option("--cache", "Folder of the judge's content-addressed results, reused across runs.")
@OUT
@click.argument("summaries_paths", nargs=-1, type=click.Path(dir_okay=False))
def judge(
    config_path: str,
    dataset: str,
    subject: str,
    judge: str,
    questions_path: str,
    answers_path: str,
    shard: int,
    shards: int,
    studies: bool,
    cache_dir: str,
    out: str,
    summaries_paths: tuple[str, ...],
) -> None:
    """Judge every summary of SUMMARIES_PATHS (and, with --studies, the report's constructed
    summaries) on one shard of the questions, each question's reference context once; results
    judged before under the same judge, code and answers are read from --cache. The rows are
    written a question at a time: the job's memory does not grow with the shard's questions."""
    import pandas as pd

    from selfreflect import sharding
    from selfreflect.artifacts import SCHEMAS, check_answers, read_table, read_tables
    from selfreflect.config import load_config, model_spec
    from selfreflect.fileio import check_writable, scratch_path
    from selfreflect.progress import name_job, shard_part
    from selfreflect.scoring.cache import open_cache
    from selfreflect.scoring.experiment import judgement_rows
    from selfreflect.scoring.registry import open_judge
    from selfreflect.scoring.stopwords import stopword_policy

    config = load_config(config_path)
    spec = model_spec(config, judge, source=config_path)
    check_writable(out)
    questions = read_table("questions", questions_path)
    answers = read_table("answers", answers_path)
    check_answers(answers, answers_path, {"dataset": dataset, "subject": subject})
    summaries = pd.DataFrame(columns=SCHEMAS["summaries"].names)
    if summaries_paths:
        summaries = read_tables("summaries", summaries_paths)
    cache = open_cache(cache_dir, spec, config["scoring"])
    name_job(f"{dataset}/{subject}", f"judge {judge}", *shard_part(shard, shards))
    labels = {"dataset": dataset, "subject": subject, "judge": judge}
    report = {**config["report"], "cluster": config["summaries"]["cluster"]} if studies else None
    with scratch_path(out) as rows_file:
        with open_judge(spec, config["scoring"]) as model:
            rows = judgement_rows(
                model,
                questions,
                answers,
                sharding.shard(answers, shard, shards),
                summaries,
                config["scoring"],
                report,
                config["seed"],
                stopword_policy(config["scoring"]["stopwords"]),
                cache,
            )
            write_rows(rows, labels, rows_file)
        meta = {"shard": [shard, shards], "judge_forward_tokens": model.forward_tokens}
        written, failed = publish(rows_file, out, config, judge, meta)
    click.echo(
        f"{written} judgements ({failed} not scored: their rows say why) written to {out}"
        + cache.unstored_note()
    )


def write_rows(rows: Iterator[list[dict]], labels: dict[str, str], path: Path) -> None:
    """Write each question's judgements ``rows`` at ``path`` (a scratch file) as they come,
    labelled with their experiment: a row group per question, none held in memory."""
    import pyarrow.parquet as pq

    from selfreflect.artifacts import SCHEMAS, arrow_table
    from selfreflect.scoring.experiment import judgements_table

    with pq.ParquetWriter(path, SCHEMAS["judgements"]) as writer:
        for question in rows:
            frame = judgements_table([question]).assign(**labels)
            writer.write_table(arrow_table("judgements", frame))


def publish(
    rows_file: Path, out: str, config: dict[str, Any], judge: str, metadata: dict[str, Any]
) -> tuple[int, int]:
    """Write the judgements of ``rows_file`` at ``out`` with their provenance (and
    ``metadata``), a row group at a time, unless more strategy rows failed than the config
    allows; returns the rows and the failed ones."""
    from selfreflect.artifacts import columns_but_tasks, read_row_groups, read_table, write_arrow
    from selfreflect.failures import check_failures
    from selfreflect.provenance import provenance

    table = read_table("judgements", rows_file, columns_but_tasks("judgements"))
    strategy_rows = table[table["kind"] == "strategy"]
    what = f"scoring with {judge}"
    check_failures(strategy_rows, config["max_failed_share"], what, "strategy")
    meta = provenance(config, [judge], judge=judge, **metadata)
    write_arrow("judgements", read_row_groups("judgements", rows_file), out, meta)
    return len(table), int(table["error"].notna().sum())
