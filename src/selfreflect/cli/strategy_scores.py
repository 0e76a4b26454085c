"""``selfreflect strategy-scores``: one strategy's scores, read off the experiment's judgements."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, OUT
from selfreflect.cli.report.studies import JUDGEMENTS, judgement_keys


@click.command("strategy-scores")
@CONFIG
@JUDGEMENTS
@click.option("--strategy", required=True, help="Strategy name from the config.")
@OUT
def strategy_scores(config_path: str, judgements_path: str, strategy: str, out: str) -> None:
    """The scores table of STRATEGY's summaries (one row per question), written as its rows of
    the judgements are read: the job's memory does not grow with the number of questions."""
    import pyarrow as pa

    from selfreflect.artifacts import SCHEMAS, read_batches, write_arrow
    from selfreflect.config import load_config
    from selfreflect.errors import InputError
    from selfreflect.provenance import provenance

    where = {"kind": "strategy", "strategy": strategy}
    keys, experiment = judgement_keys(judgements_path, where)
    if keys.empty:
        raise InputError(f"{judgements_path}: strategy: no judgements of '{strategy}'")
    judge = experiment["judge"]
    schema = SCHEMAS["scores"]
    batches = read_batches(judgements_path, schema.names, where)
    rows = (pa.Table.from_batches([batch]).cast(schema) for batch in batches)
    write_arrow("scores", rows, out, provenance(load_config(config_path), [judge], judge=judge))
    failed = int(keys["error"].notna().sum())
    click.echo(f"{len(keys) - failed} scores ({failed} failed) of {strategy} written to {out}")
