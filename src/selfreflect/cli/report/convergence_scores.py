"""``selfreflect report convergence-scores``: summaries scored with subsampled answers."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT
from selfreflect.cli.report.studies import JUDGEMENTS, read_judgements, write_study


@click.command("convergence-scores")
@CONFIG
@JUDGEMENTS
@OUT
def convergence_scores(config_path: str, judgements_path: str, out: str) -> None:
    """Every strategy's scores with subsampled conditioning or held-out answers (judged with
    the experiment's other summaries)."""
    from selfreflect.config import load_config
    from selfreflect.report.studies import convergence_scores as study

    judgements, experiment = read_judgements(judgements_path)
    table = study(judgements)
    write_study("convergence_scores", table, out, load_config(config_path), **experiment)
    click.echo(f"{len(table)} convergence scores written to {out}")
