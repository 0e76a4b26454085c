"""``selfreflect merge``: per-shard tables into one."""

from __future__ import annotations

import click

from selfreflect.cli.options import OUT, QUESTIONS


@click.command()
@click.argument("kind", type=click.Choice(["answers", "summaries", "scores", "judgements"]))
@QUESTIONS
@OUT
@click.argument("parts", nargs=-1, required=True, type=click.Path(dir_okay=False))
def merge(
    kind: str,
    questions_path: str,
    out: str,
    parts: tuple[str, ...],
) -> None:
    """Merge per-shard tables of one KIND into one table in question order (every shard of the
    run of the questions, holding only its questions)."""
    from selfreflect import sharding
    from selfreflect.artifacts import read_metadata, read_table, write_table
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import merged_provenance

    check_writable(out)
    tables = [read_table(kind, part) for part in parts]
    order = read_table("questions", questions_path)["id"]
    shards = [read_metadata(part) for part in parts]
    sharding.check_run(read_metadata(questions_path).get("run"), shards, list(parts))
    merged = sharding.merge(tables, order, list(parts))
    write_table(kind, merged, out, merged_provenance(shards))
    click.echo(f"{len(merged)} rows merged into {out}")
