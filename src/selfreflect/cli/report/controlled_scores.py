"""``selfreflect report controlled-scores``: the controlled summary pairs scored (Table 1)."""

from __future__ import annotations

import click

from selfreflect.cli.options import ANSWERS, CONFIG, OUT
from selfreflect.cli.report.judging import experiment, open_study_judge, write_study
from selfreflect.config import load_config


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
    model, temperature, is_stopword = open_study_judge(config, judge, config_path)
    with model:
        table = study(model, answers, config["report"]["pair_types"], temperature, is_stopword)
    tokens = model.forward_tokens
    write_study("controlled_scores", table, out, config, dataset, subject, judge, tokens)
    click.echo(f"{len(table)} controlled summaries scored into {out}")
