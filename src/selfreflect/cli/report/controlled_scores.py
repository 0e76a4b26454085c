"""``selfreflect report controlled-scores``: the controlled summary pairs' metrics (Table 1)."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT, file_option
from selfreflect.cli.report.studies import JUDGEMENTS, judgement_keys, write_judged_study


@click.command("controlled-scores")
@CONFIG
@JUDGEMENTS
@file_option("--alternatives", "The pairs' alternative metrics (report alt-metrics).")
@OUT
def controlled_scores(
    config_path: str, judgements_path: str, alternatives_path: str, out: str
) -> None:
    """The controlled pairs (paper Table 1): their SelfReflect scores, judged with the
    experiment's other summaries, beside the alternative metrics."""
    from selfreflect.artifacts import read_table
    from selfreflect.config import load_config
    from selfreflect.report.studies import ALT_METRIC_COLUMNS
    from selfreflect.report.studies import controlled_scores as study

    _, experiment = judgement_keys(judgements_path, {"kind": "pair"})
    alternatives = read_table("alt_metrics", alternatives_path, ALT_METRIC_COLUMNS)
    written = write_judged_study(
        "controlled_scores",
        judgements_path,
        "pair",
        lambda pairs: study(pairs, alternatives),
        out,
        load_config(config_path),
        experiment,
    )
    click.echo(f"{written} controlled summaries written to {out}")
