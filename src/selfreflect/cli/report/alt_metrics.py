"""``selfreflect report alt-metrics``: the controlled pairs rated by the alternative metrics."""

from __future__ import annotations

import click

from selfreflect.cli.options import ANSWERS, CONFIG, OUT, gpus_option, judging, reads
from selfreflect.cli.report.studies import experiment, open_study_judge, write_study


@reads(
    "scoring",
    "summaries.cluster.embedder",
    "summaries.cluster.threshold",
    "report.pair_types",
    judging,
    prompts=True,
)
@click.command("alt-metrics")
@gpus_option()
@CONFIG
@experiment
@ANSWERS
@OUT
def alt_metrics(
    config_path: str, dataset: str, subject: str, judge: str, answers_path: str, out: str
) -> None:
    """Rate both summaries of every controlled pair with the LLM 1-5 rating, P(True) and
    embedding similarity (the baselines SelfReflect is validated against)."""
    from selfreflect.artifacts import read_table
    from selfreflect.config import load_config
    from selfreflect.report.alt_metrics import alt_metrics_table

    config = load_config(config_path)
    answers = read_table("answers", answers_path)
    model = open_study_judge(config, judge, config_path)
    with model:
        cluster = config["summaries"]["cluster"]
        grouping = (cluster["embedder"], cluster["threshold"])
        table = alt_metrics_table(model, answers, config["report"]["pair_types"], grouping)
    tokens = model.forward_tokens
    labels = {"dataset": dataset, "subject": subject, "judge": judge}
    write_study("alt_metrics", table, out, config, **labels, judge_forward_tokens=tokens)
    click.echo(f"{len(table)} controlled summaries rated into {out}")
