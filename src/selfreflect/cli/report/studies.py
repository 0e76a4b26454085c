"""What the judge-scored studies of ``selfreflect report`` share: the options naming their
experiment, the judge they load, and their tables' labels."""

from __future__ import annotations

from typing import Any

import click
import pandas as pd

from selfreflect.cli.options import DATASET, JUDGE, SUBJECT
from selfreflect.provenance import provenance

JUDGEMENTS = click.option(
    "--judgements",
    "judgements_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The experiment's judgements (selfreflect judge, merged).",
)


def experiment(func):
    """The options naming the experiment a study scores: its rows carry them as columns."""
    return DATASET(SUBJECT(JUDGE(func)))


def write_study(
    kind: str,
    table: pd.DataFrame,
    out: str,
    config: dict[str, Any],
    dataset: str,
    subject: str,
    judge: str,
    **metadata: Any,
) -> None:
    """Write a study's table, each row labelled with the experiment it scores; ``metadata``
    joins its provenance (the tokens a judge computed: ``judge_forward_tokens``)."""
    from selfreflect.artifacts import write_table

    labels = {"dataset": dataset, "subject": subject, "judge": judge}
    meta = provenance(config, [judge], judge=judge, **metadata)
    write_table(kind, table.assign(**labels), out, meta)


def read_judgements(path: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """An experiment's judgements without their scoring tasks (most of the table) and the
    experiment they belong to (dataset, subject, judge)."""
    from selfreflect.artifacts import EXPERIMENT, columns_but_tasks, one_label, read_table

    table = read_table("judgements", path, columns_but_tasks("judgements"))
    return table, {key: one_label(table, key, path) for key in EXPERIMENT}


def open_study_judge(config: dict[str, Any], judge: str, config_path: str):
    """The judge model of a study."""
    from selfreflect.config import model_spec
    from selfreflect.scoring.registry import open_judge

    return open_judge(model_spec(config, judge, source=config_path), config["scoring"])
