"""``selfreflect report mc-scores``: multiple-choice summaries scored."""

from __future__ import annotations

import click
import pandas as pd

from selfreflect.cli.options import ANSWERS, CONFIG, OUT, QUESTIONS
from selfreflect.cli.report.judging import experiment, open_study_judge, write_study
from selfreflect.config import load_config


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
    from selfreflect.report.studies import MC_COLUMNS
    from selfreflect.report.studies import mc_scores as study

    config = load_config(config_path)
    questions = read_table("questions", questions_path)
    answers = read_table("answers", answers_path)
    tokens = 0
    if questions["choices"].notna().any():
        model, temperature, is_stopword = open_study_judge(config, judge, config_path)
        with model:
            table = study(model, questions, answers, config["report"], temperature, is_stopword)
        tokens = model.forward_tokens
    else:  # not a multiple-choice dataset: nothing to score, no judge to load
        table = pd.DataFrame(columns=MC_COLUMNS)
    write_study("mc_scores", table, out, config, dataset, subject, judge, tokens)
    click.echo(f"{len(table)} multiple-choice summaries scored into {out}")
