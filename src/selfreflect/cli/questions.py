"""``selfreflect questions``: one dataset's questions."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, DATASET, OUT, reads


@reads("seed", "questions", "datasets.{dataset}")
@click.command()
@CONFIG
@DATASET
@OUT
def questions(config_path: str, dataset: str, out: str) -> None:
    """Load, normalise, shuffle and truncate one dataset's questions."""
    from selfreflect.artifacts import write_table
    from selfreflect.config import dataset_spec, load_config, question_count
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import provenance
    from selfreflect.questions import load_questions

    config = load_config(config_path)
    spec = dataset_spec(config, dataset, source=config_path)
    check_writable(out)
    table = load_questions(dataset, spec, question_count(config, dataset), config["seed"])
    source = {**spec, "dropped_duplicates": table.attrs["dropped_duplicates"]}
    write_table("questions", table, out, provenance(config, [], dataset=dataset, source=source))
    click.echo(f"{len(table)} questions written to {out}")
