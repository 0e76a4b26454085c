"""``selfreflect report agreement-scores``: the first questions' summaries scored by each judge
backend (the backend agreement table's input)."""

from __future__ import annotations

import click

from selfreflect.cli.options import ANSWERS, CONFIG, FILES, OUT, Job, gpus_option, reads
from selfreflect.cli.report.studies import experiment, write_study


def judge_backends(job: Job, config: dict) -> list[tuple[str, ...]]:
    """What the job tracks of its judge model, run on each backend it compares."""
    from selfreflect.config import judge_keys

    return judge_keys(config, job["judge"], config["report"]["agreement_backends"])


@reads(
    "scoring",
    "report.agreement_backends",
    "report.agreement_questions",
    judge_backends,
    prompts=True,
)
@click.command("agreement-scores")
@gpus_option()
@CONFIG
@experiment
@ANSWERS
@OUT
@FILES  # the experiment's summaries tables (every strategy's)
def agreement_scores(
    config_path: str,
    dataset: str,
    subject: str,
    judge: str,
    answers_path: str,
    out: str,
    files: tuple[str, ...],
) -> None:
    """Score the summaries (FILES: summaries tables) of the first report.agreement_questions
    questions with scoring.backend and with each of report.agreement_backends, one backend
    loaded at a time: one row per question, strategy and backend."""
    from selfreflect.artifacts import read_table, read_tables
    from selfreflect.config import load_config, model_spec
    from selfreflect.fileio import check_writable
    from selfreflect.report.agreement import backend_scores
    from selfreflect.scoring.registry import open_judge
    from selfreflect.scoring.stopwords import stopword_policy

    config = load_config(config_path)
    spec = model_spec(config, judge, source=config_path)
    scoring, report = config["scoring"], config["report"]
    check_writable(out)
    answers = read_table("answers", answers_path).head(report["agreement_questions"])
    summaries = read_tables("summaries", files)
    is_stopword = stopword_policy(scoring["stopwords"])
    backends = [scoring["backend"], *report["agreement_backends"]]
    table, tokens = backend_scores(
        lambda backend: open_judge(spec, {**scoring, "backend": backend}),
        backends,
        answers,
        summaries,
        scoring["temperature"],
        is_stopword,
    )
    labels = {"dataset": dataset, "subject": subject, "judge": judge}
    meta = {"backends": list(dict.fromkeys(backends)), "judge_forward_tokens": tokens}
    write_study("agreement_scores", table, out, config, **labels, **meta)
    click.echo(f"{len(table)} scores of {len(answers)} questions written to {out}")
