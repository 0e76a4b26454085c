"""``selfreflect strategy-scores``: one strategy's scores, read off the experiment's judgements."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT
from selfreflect.cli.report.studies import JUDGEMENTS, read_judgements, write_study


@click.command("strategy-scores")
@CONFIG
@JUDGEMENTS
@click.option("--strategy", required=True, help="Strategy name from the config.")
@OUT
def strategy_scores(config_path: str, judgements_path: str, strategy: str, out: str) -> None:
    """The scores table of STRATEGY's summaries (one row per question)."""
    from selfreflect.config import load_config
    from selfreflect.errors import InputError
    from selfreflect.scoring.table import strategy_scores as select

    judgements, experiment = read_judgements(judgements_path, strategy)
    table = select(judgements, strategy)
    if table.empty:
        raise InputError(f"{judgements_path}: strategy: no judgements of '{strategy}'")
    write_study("scores", table, out, load_config(config_path), **experiment)
    failed = int(table["error"].notna().sum())
    click.echo(f"{len(table) - failed} scores ({failed} failed) of {strategy} written to {out}")
