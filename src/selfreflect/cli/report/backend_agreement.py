"""``selfreflect report backend-agreement``: how far each judge backend's scores are from
scoring.backend's."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, FILES, reads
from selfreflect.cli.report.common import (
    METRICS,
    OUT_DIR,
    claims,
    read_config,
    skipped,
    write_metrics,
)
from selfreflect.report import readers, tables, writers


@reads("scoring.backend", "report.agreement_questions")
@click.command("backend-agreement")
@CONFIG
@OUT_DIR
@METRICS
@FILES
@claims("backend_agreement")
def backend_agreement(config_path: str, out_dir: str, metrics_path, files) -> None:
    """Per experiment and judge backend: the largest and mean absolute difference of its scores
    to scoring.backend's on the same summaries (FILES: report agreement-scores tables)."""
    config = read_config(config_path)
    baseline = config["scoring"]["backend"]
    agreement = readers.read_tables("agreement_scores", files)
    table = tables.backend_agreement_table(agreement, baseline)
    if table.empty:
        reason = f"no judge backend besides scoring.backend ({baseline}) scored the summaries"
        return skipped("backend_agreement", reason, out_dir, metrics_path=metrics_path)
    display = table.assign(
        **{
            column: [writers.scientific(value) for value in table[column]]
            for column in ("max_abs_diff", "mean_abs_diff")
        }
    )
    questions = config["report"]["agreement_questions"]
    caption = (
        f"Judge backend agreement: the summaries of the first {questions}"
        f" questions of each experiment scored by each backend and by scoring.backend ({baseline}),"
        " with the same judge model and settings. n_summaries (question, strategy) pairs both"
        " scored are compared: max_abs_diff and mean_abs_diff of the SelfReflect score;"
        " n_scored_by_one pairs only one of the two scored (the other recorded a failure)."
    )
    writers.write_table_files(table, display, out_dir, "backend_agreement", caption)
    write_metrics(
        metrics_path, table, ["max_abs_diff", "mean_abs_diff", "n_summaries"], by=("backend",)
    )
