"""``selfreflect export-answers``: an answers table in the reference or datasets format."""

from __future__ import annotations

import click

from selfreflect.cli.options import file_option


@click.command("export-answers")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["reference", "hf"]),
    default="reference",
    show_default=True,
    help="reference: the original tool's JSON file; hf: a Hugging Face datasets folder.",
)
@file_option(
    "--questions",
    "hf: the answers' questions table (of their dataset, each question answered once), "
    "whose source dataset the dataset card names.",
    required=False,
)
@click.argument("answers_path", type=click.Path(dir_okay=False))
@click.argument("out", type=click.Path())
def export_answers(fmt: str, questions_path: str | None, answers_path: str, out: str) -> None:
    """Write an answers table as a reference test-answers JSON file or a datasets folder."""
    from selfreflect.artifacts import read_table
    from selfreflect.fileio import check_writable
    from selfreflect.reference_format import write_reference_answers

    if fmt == "hf":
        from selfreflect.answer_sets import write_answer_set

        shards = write_answer_set(answers_path, out, questions_path)
        click.echo(f"answer set written to {out} ({shards} Parquet shard(s) and a dataset card)")
    else:
        if questions_path is not None:
            raise click.UsageError("--questions: only for --format hf (the dataset card)")
        check_writable(out)
        answers = read_table("answers", answers_path)
        write_reference_answers(answers, out)
        click.echo(f"{len(answers)} questions' answers written to {out} (the reference format)")
