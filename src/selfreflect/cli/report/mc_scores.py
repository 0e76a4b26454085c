"""``selfreflect report mc-scores``: the multiple-choice study's summaries, scored."""

from __future__ import annotations

import click
import pandas as pd

from selfreflect.cli.options import ANSWERS, CONFIG, OUT, QUESTIONS, reads
from selfreflect.cli.report.studies import JUDGEMENTS, judgement_keys, write_judged_study
from selfreflect.errors import InputError


@reads("report.mc_temperatures")
@click.command("mc-scores")
@CONFIG
@QUESTIONS
@ANSWERS
@JUDGEMENTS
@OUT
def mc_scores(
    config_path: str, questions_path: str, answers_path: str, judgements_path: str, out: str
) -> None:
    """Stated-distribution summaries of multiple-choice questions: their SelfReflect scores
    (judged with the experiment's other summaries) and true W1 alongside."""
    from selfreflect.artifacts import read_frames, read_table
    from selfreflect.config import load_config
    from selfreflect.mc_study.scores import ANSWER_COLUMNS, mc_rows, mc_truth

    config = load_config(config_path)
    questions = read_table("questions", questions_path)
    keys, experiment = judgement_keys(judgements_path, {"kind": "mc"})
    answered = read_table("answers", answers_path, ["id"])  # the file's fields checked
    check_answered(keys, judgements_path, answered, answers_path)
    answers = read_frames("answers", answers_path, ANSWER_COLUMNS)
    truth = mc_truth(questions, answers, config["report"])
    written = write_judged_study(
        "mc_scores",
        judgements_path,
        "mc",
        lambda rows: mc_rows(rows, truth),
        out,
        config,
        experiment,
    )
    why = "" if questions["choices"].notna().any() else f" ({questions_path}: no choices)"
    click.echo(f"{written} multiple-choice summaries written to {out}{why}")


def check_answered(
    judgements: pd.DataFrame, judgements_path: str, answers: pd.DataFrame, answers_path: str
) -> None:
    """Every question the judgements score has an answers row (``answers``: their ids; else its
    truth would silently be missing): one line naming the first that has none."""
    missing = list(dict.fromkeys(judgements["id"][~judgements["id"].isin(answers["id"])]))
    if missing:
        raise InputError(
            f"{judgements_path}: id '{missing[0]}' has no row in {answers_path}"
            f" ({len(missing)} such questions; answers of another run?)"
        )
