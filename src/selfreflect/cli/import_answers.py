"""``selfreflect import-answers``: an answers table from the reference or datasets format."""

from __future__ import annotations

from typing import Any

import click

from selfreflect.answer_sets import CHECKED
from selfreflect.cli.options import file_option, name_option


@click.command("import-answers")
@file_option(
    "--config",
    "A datasets folder: the config of the run it joins, which it must fit.",
    required=False,
)
@file_option(
    "--questions",
    "A datasets folder: the run's questions table [default: the run's, of --dataset].",
    required=False,
)
@name_option("--dataset", "The dataset the answers belong to (else SOURCE's).")
@name_option("--subject", "The subject that gave them (else SOURCE's).")
@click.option(
    "--accept",
    multiple=True,
    type=click.Choice(CHECKED),
    help="A datasets folder: import it although this field differs from the run's (repeatable).",
)
@click.argument("source", type=click.Path())
@click.argument("out", type=click.Path(dir_okay=False))
def import_answers(
    source: str,
    out: str,
    config_path: str | None,
    questions_path: str | None,
    dataset: str | None,
    subject: str | None,
    accept: tuple[str, ...],
) -> None:
    """Convert a reference test-answers JSON file (SOURCE, labelled with --dataset and
    --subject) or an exported datasets folder into an answers table. A folder joins the run of
    --config only if it fits: its subject, subject model hash, dataset, seed and sampling
    settings are the run's, it answers each of the run's questions once, and its rows are those
    exported (each shard's digest)."""
    from pathlib import Path

    from selfreflect.artifacts import write_table
    from selfreflect.errors import InputError
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import code_provenance
    from selfreflect.reference_format import read_reference_answers

    check_writable(out)
    labels = {"dataset": dataset, "subject": subject}
    if not Path(source).is_dir():
        if config_path or questions_path or accept:
            raise InputError(
                f"{source}: a reference JSON file records no run to check: import it with "
                "--dataset and --subject only"
            )
        answers, meta = read_reference_answers(source), {"source": source, **code_provenance()}
        meta |= {k: v for k, v in labels.items() if v}
    elif not config_path:
        raise InputError(f"{source}: an answer set joins a run only if it fits: name its --config")
    else:
        answers, meta = _fitting_set(source, config_path, questions_path, labels, set(accept))
    write_table("answers", answers, out, meta)
    click.echo(f"{len(answers)} questions' answers imported to {out}")


def _fitting_set(
    source: str,
    config_path: str,
    questions_path: str | None,
    labels: dict[str, str | None],
    accept: set[str],
) -> tuple[Any, dict[str, Any]]:
    """The answer set ``source`` and its metadata for the run of ``config_path``, checked to
    fit it; the metadata names the run's subject and dataset and records what was accepted."""
    from selfreflect import answer_sets, paths
    from selfreflect.config import answer_settings, dataset_spec, load_config, model_spec
    from selfreflect.errors import InputError
    from selfreflect.provenance import provenance

    answers, meta = answer_sets.read_answer_set(source)
    found = answer_sets.claims(meta)
    config = load_config(config_path)
    names = {"subject": config["subjects"], "dataset": list(config["datasets"])}
    for key, known in names.items():
        if labels[key] is None and found[key] not in known:
            raise InputError(
                f"{source}: {key}: the set's {found[key]!r}, not one of the run's"
                f" ({', '.join(known)}); --{key} names the run's to check it against"
            )
    run = {key: labels[key] or found[key] for key in ("subject", "dataset")}
    model_spec(config, run["subject"], source=config_path)
    dataset_spec(config, run["dataset"], source=config_path)
    questions_path = questions_path or paths.QUESTIONS.format(run=config["run"], **run)
    questions = answer_sets.run_questions(questions_path, run["dataset"])
    settings = answer_settings(config, run["dataset"])
    expected = answer_sets.claims(provenance(config, [run["subject"]], settings=settings, **run))
    accepted = answer_sets.check_fits(found, expected, accept, source)
    answer_sets.check_questions(answers, questions, source, questions_path)
    return answers, meta | run | ({"accepted": accepted} if accepted else {})
