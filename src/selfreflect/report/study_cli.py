"""``selfreflect report controlled-scores | mc-scores | convergence-scores``: the studies that
load a judge (one experiment each). Registered on the ``report`` group; apart from the table
commands, so that editing those never reruns a judge job."""

from __future__ import annotations

from typing import Any

import click
import pandas as pd

from selfreflect.cli_options import CONFIG, DATASET, OUT, QUESTIONS, SUBJECT
from selfreflect.config import load_config
from selfreflect.provenance import provenance

JUDGE = click.option("--judge", required=True, help="Judge model name from the config.")
ANSWERS = click.option("--answers", "answers_path", required=True, type=click.Path())


def experiment(func):
    """The options naming the experiment a study scores: its rows carry them as columns."""
    return DATASET(SUBJECT(JUDGE(func)))


def _write(kind: str, table: pd.DataFrame, out: str, config: dict[str, Any], **labels: str):
    from selfreflect.artifacts import write_table

    meta = provenance(config, [labels["judge"]], judge=labels["judge"])
    write_table(kind, table.assign(**labels), out, meta)


def _open_judge(config: dict[str, Any], judge: str, config_path: str):
    from selfreflect.config import model_spec
    from selfreflect.scoring.judge import open_judge
    from selfreflect.scoring.stopwords import stopword_policy

    spec = model_spec(config, judge, source=config_path)
    scoring = config["scoring"]
    return open_judge(spec, scoring), scoring["temperature"], stopword_policy(scoring["stopwords"])


@click.command("controlled-scores")
@CONFIG
@experiment
@ANSWERS
@OUT
def controlled_scores(
    config_path: str, dataset: str, subject: str, judge: str, answers_path: str, out: str
) -> None:
    """Score the controlled summary pairs (paper Table 1) with SelfReflect and alternatives."""
    from selfreflect.artifacts import read_table
    from selfreflect.report.studies import controlled_scores as study

    config = load_config(config_path)
    answers = read_table("answers", answers_path)
    model, temperature, is_stopword = _open_judge(config, judge, config_path)
    with model:
        table = study(model, answers, config["report"]["pair_types"], temperature, is_stopword)
    _write("controlled_scores", table, out, config, dataset=dataset, subject=subject, judge=judge)
    click.echo(f"{len(table)} controlled summaries scored into {out}")


@click.command("mc-scores")
@CONFIG
@experiment
@QUESTIONS
@ANSWERS
@OUT
def mc_scores(
    config_path: str,
    dataset: str,
    subject: str,
    judge: str,
    questions_path: str,
    answers_path: str,
    out: str,
) -> None:
    """Score stated-distribution summaries of multiple-choice questions; true W1 alongside."""
    from selfreflect.artifacts import read_table
    from selfreflect.report.studies import mc_scores as study

    config = load_config(config_path)
    questions = read_table("questions", questions_path)
    answers = read_table("answers", answers_path)
    if questions["choices"].notna().any():
        model, temperature, is_stopword = _open_judge(config, judge, config_path)
        with model:
            table = study(model, questions, answers, config["report"], temperature, is_stopword)
    else:  # not a multiple-choice dataset: nothing to score, no judge to load
        table = pd.DataFrame(columns=["id", "temperature", "summary", "w1", "score", "error"])
    _write("mc_scores", table, out, config, dataset=dataset, subject=subject, judge=judge)
    click.echo(f"{len(table)} multiple-choice summaries scored into {out}")


@click.command("convergence-scores")
@CONFIG
@experiment
@ANSWERS
@OUT
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def convergence_scores(
    config_path: str,
    dataset: str,
    subject: str,
    judge: str,
    answers_path: str,
    out: str,
    files: tuple[str, ...],
) -> None:
    """Rescore the summaries FILES with subsampled conditioning / masked-out answers."""
    from selfreflect.artifacts import read_table
    from selfreflect.report.studies import convergence_scores as study

    config = load_config(config_path)
    answers = read_table("answers", answers_path)
    summaries = pd.concat([read_table("summaries", f) for f in files], ignore_index=True)
    summaries = summaries[summaries["strategy"].isin(config["summaries"]["strategies"])]
    model, temperature, is_stopword = _open_judge(config, judge, config_path)
    with model:
        table = study(
            model, answers, summaries, config["report"], config["seed"], temperature, is_stopword
        )
    _write("convergence_scores", table, out, config, dataset=dataset, subject=subject, judge=judge)
    click.echo(f"{len(table)} convergence scores written to {out}")


STUDIES = [controlled_scores, mc_scores, convergence_scores]
