"""``selfreflect import-answers``: an answers table from the reference or datasets format."""

from __future__ import annotations

import click


@click.command("import-answers")
@click.option("--dataset", help="Record the dataset the answers belong to (else SOURCE's).")
@click.option("--subject", help="Record the subject that gave them (else SOURCE's).")
@click.argument("source", type=click.Path())
@click.argument("out", type=click.Path(dir_okay=False))
def import_answers(source: str, out: str, dataset: str | None, subject: str | None) -> None:
    """Convert a reference test-answers JSON file or an exported datasets folder (SOURCE)
    into an answers table; an exported folder keeps the dataset and subject it records."""
    from pathlib import Path

    from selfreflect.answer_sets import read_answer_set
    from selfreflect.artifacts import write_table
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import code_provenance
    from selfreflect.reference_format import read_reference_answers

    check_writable(out)
    if Path(source).is_dir():
        answers, meta = read_answer_set(source)
    else:
        answers, meta = read_reference_answers(source), {"source": source, **code_provenance()}
    labels = {"dataset": dataset, "subject": subject}
    write_table("answers", answers, out, meta | {k: v for k, v in labels.items() if v})
