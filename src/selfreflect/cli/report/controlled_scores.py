"""``selfreflect report controlled-scores``: the controlled summary pairs' metrics (Table 1)."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT
from selfreflect.cli.report.studies import JUDGEMENTS, read_judgements, write_study


@click.command("controlled-scores")
@CONFIG
@JUDGEMENTS
@click.option(
    "--alternatives",
    "alternatives_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="The pairs' alternative metrics (report alt-metrics).",
)
@OUT
def controlled_scores(
    config_path: str, judgements_path: str, alternatives_path: str, out: str
) -> None:
    """The controlled pairs (paper Table 1): their SelfReflect scores, judged with the
    experiment's other summaries, beside the alternative metrics."""
    from selfreflect.artifacts import read_table
    from selfreflect.config import load_config
    from selfreflect.report.studies import controlled_scores as study

    judgements, experiment = read_judgements(judgements_path)
    table = study(judgements, read_table("alt_metrics", alternatives_path))
    write_study("controlled_scores", table, out, load_config(config_path), **experiment)
    click.echo(f"{len(table)} controlled summaries written to {out}")
