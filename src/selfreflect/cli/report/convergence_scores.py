"""``selfreflect report convergence-scores``: summaries scored with subsampled answers."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT
from selfreflect.cli.report.studies import JUDGEMENTS, judgement_keys, write_judged_study


@click.command("convergence-scores")
@CONFIG
@JUDGEMENTS
@OUT
def convergence_scores(config_path: str, judgements_path: str, out: str) -> None:
    """Every strategy's scores with subsampled conditioning or held-out answers (judged with
    the experiment's other summaries)."""
    from selfreflect.config import load_config
    from selfreflect.report.studies import convergence_scores as study

    _, experiment = judgement_keys(judgements_path, {"kind": "convergence"})
    config = load_config(config_path)
    written = write_judged_study(
        "convergence_scores", judgements_path, "convergence", study, out, config, experiment
    )
    click.echo(f"{written} convergence scores written to {out}")
