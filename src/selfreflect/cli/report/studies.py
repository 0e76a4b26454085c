"""What the judge-scored studies of ``selfreflect report`` share: the options naming their
experiment, the judge they load, and their tables' labels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from selfreflect.cli.options import DATASET, JUDGE, SUBJECT, file_option
from selfreflect.provenance import provenance

JUDGEMENTS = file_option("--judgements", "The experiment's judgements (selfreflect judge, merged).")


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


def judgement_keys(path: str, where: dict[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """The id, experiment labels, error and score of an experiment's judgements whose columns
    hold the values of ``where`` (``{"kind": "pair"}``), the file checked (each score in its
    range too), and the experiment they belong to (dataset, subject, judge)."""
    from selfreflect.artifacts import EXPERIMENT, one_label, read_table

    keys = read_table("judgements", path, ["id", *EXPERIMENT, "error", "score"], where)
    labelled = keys if len(keys) else read_table("judgements", path, list(EXPERIMENT))
    return keys, {label: one_label(labelled, label, path) for label in EXPERIMENT}


def write_judged_study(
    study: str,
    judgements_path: str,
    kind: str,
    build: Callable[[pd.DataFrame], pd.DataFrame],
    out: str,
    config: dict[str, Any],
    labels: dict[str, str],
) -> int:
    """Write the ``study`` table: ``build`` of each batch of the judgements' rows of one
    ``kind`` (checked first: :func:`judgement_keys`), written as they are read, so the job's
    memory does not grow with the number of questions; each row labelled with the experiment
    (``labels``). Returns the rows written."""
    import pyarrow as pa

    from selfreflect.artifacts import (
        arrow_table,
        columns_but_tasks,
        read_batches,
        to_frame,
        write_arrow,
    )

    batches = read_batches(judgements_path, columns_but_tasks("judgements"), {"kind": kind})
    rows = (to_frame(pa.Table.from_batches([batch])) for batch in batches)
    parts = (arrow_table(study, build(part).assign(**labels)) for part in rows)
    meta = provenance(config, [labels["judge"]], judge=labels["judge"])
    return write_arrow(study, parts, out, meta)


def open_study_judge(config: dict[str, Any], judge: str, config_path: str):
    """The judge model of a study."""
    from selfreflect.config import model_spec
    from selfreflect.scoring.registry import open_judge

    return open_judge(model_spec(config, judge, source=config_path), config["scoring"])
