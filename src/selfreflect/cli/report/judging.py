"""What the judge-scored studies of ``selfreflect report`` share: the options naming their
experiment, the judge they load, and their tables' labels."""

from __future__ import annotations

from typing import Any

import pandas as pd

from selfreflect.cli.options import DATASET, JUDGE, SUBJECT
from selfreflect.provenance import provenance


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
    forward_tokens: int,
) -> None:
    """Write a study's table, each row labelled with the experiment it scores; its metadata
    records the tokens the judge computed."""
    from selfreflect.artifacts import write_table

    labels = {"dataset": dataset, "subject": subject, "judge": judge}
    meta = provenance(config, [judge], judge=judge, judge_forward_tokens=forward_tokens)
    write_table(kind, table.assign(**labels), out, meta)


def open_study_judge(config: dict[str, Any], judge: str, config_path: str):
    """The judge model of a study, its temperature and its stopword test."""
    from selfreflect.config import model_spec
    from selfreflect.scoring.judge import open_judge
    from selfreflect.scoring.stopwords import stopword_policy

    spec = model_spec(config, judge, source=config_path)
    scoring = config["scoring"]
    return open_judge(spec, scoring), scoring["temperature"], stopword_policy(scoring["stopwords"])
