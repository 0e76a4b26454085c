"""``selfreflect cluster-answers``: each question's conditioning answers clustered by meaning."""

from __future__ import annotations

import click

from selfreflect.cli.options import ANSWERS, CONFIG, OUT, gpus_option, reads


@reads("summaries.cluster")
@click.command("cluster-answers")
@gpus_option()
@CONFIG
@ANSWERS
@OUT
def cluster_answers(config_path: str, answers_path: str, out: str) -> None:
    """Each question's conditioning answers clustered as the cluster strategies cluster them
    (``summaries.cluster``), largest cluster first, for the explorer: a batch of questions at a
    time (one embedder pass each, on a GPU where the job has one), written as they come."""
    from selfreflect.artifacts import (
        answers_experiment,
        read_frames,
        read_metadata,
        read_table,
        write_arrow,
    )
    from selfreflect.config import load_config
    from selfreflect.provenance import provenance
    from selfreflect.strategies.clustering import clusters_table, resolve_embedder

    config = load_config(config_path)
    settings = config["summaries"]["cluster"]
    embedder = resolve_embedder(settings["embedder"])
    dataset, subject = answers_experiment(read_metadata(answers_path), answers_path)
    labels = {"dataset": dataset, "subject": subject}
    read_table("answers", answers_path, ["id"])  # the file checked before it streams
    frames = read_frames("answers", answers_path, ["id", "conditioning_answers"])
    tables = (
        clusters_table(f["id"], f["conditioning_answers"], labels, embedder, settings["threshold"])
        for f in frames
    )
    used = {"embedder": embedder, "threshold": settings["threshold"]}
    metadata = provenance(config, [], **labels, cluster=used)
    count = write_arrow("answer_clusters", tables, out, metadata)
    click.echo(f"conditioning answers of {count} questions clustered ({embedder}) to {out}")
