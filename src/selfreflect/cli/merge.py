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
    from selfreflect.artifacts import (
        read_in_order,
        read_keys,
        read_metadata,
        read_table,
        write_arrow,
    )
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import merged_provenance

    check_writable(out)
    names = list(parts)
    order = read_table("questions", questions_path, columns=["id"])["id"]
    shards = [read_metadata(part) for part in parts]
    ids, identities = [], []
    for meta, name in zip(shards, names, strict=True):
        keys = read_keys(kind, name)
        identities.append(sharding.identity(meta, keys, name))
        ids.append(keys["id"])
    sharding.check_shards(read_metadata(questions_path).get("run"), identities, names)
    shard, row = sharding.merge_order(ids, order, names, one_row=kind != "judgements")
    rows = read_in_order(kind, names, shard, row)
    count = write_arrow(kind, rows, out, merged_provenance(shards))
    click.echo(f"{count} rows merged into {out}")
