"""``selfreflect report convergence-scores``: summaries rescored with subsampled answers."""

from __future__ import annotations

import click
import pandas as pd

from selfreflect.cli.options import ANSWERS, CONFIG, OUT
from selfreflect.cli.report.judging import experiment, open_study_judge, write_study
from selfreflect.config import load_config


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
    model, temperature, is_stopword = open_study_judge(config, judge, config_path)
    with model:
        table = study(
            model, answers, summaries, config["report"], config["seed"], temperature, is_stopword
        )
    tokens = model.forward_tokens
    write_study("convergence_scores", table, out, config, dataset, subject, judge, tokens)
    click.echo(f"{len(table)} convergence scores written to {out}")
