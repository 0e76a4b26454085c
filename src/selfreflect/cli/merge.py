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
    """Merge per-shard tables of one KIND into one table in question order: every shard of the
    run of the questions and of one experiment made alike (subject, dataset, models, seed,
    settings), each question in one shard (judgements aside, in one row)."""
    from selfreflect import sharding
    from selfreflect.artifacts import read_metadata, read_table, write_table
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import merged_provenance

    check_writable(out)
    names = list(parts)
    tables = [read_table(kind, part) for part in parts]
    order = read_table("questions", questions_path)["id"]
    shards = [read_metadata(part) for part in parts]
    identities = [sharding.identity(*shard) for shard in zip(shards, tables, names, strict=True)]
    sharding.check_shards(read_metadata(questions_path).get("run"), identities, names)
    merged = sharding.merge(tables, order, names, one_row=kind != "judgements")
    write_table(kind, merged, out, merged_provenance(shards))
    click.echo(f"{len(merged)} rows merged into {out}")
