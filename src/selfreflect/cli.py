"""The ``selfreflect`` command line: one subcommand per workflow stage.

Snakemake rules and DVC stages call these commands; each reads its parameters by key from the
experiment config and names its inputs and outputs explicitly.
"""

from __future__ import annotations

import logging
import sys

import click

from selfreflect.cli_options import CONFIG, DATASET, OUT, QUESTIONS, SHARD, SHARDS, SUBJECT
from selfreflect.errors import SelfReflectError
from selfreflect.finetune.cli import finetune_data, finetune_train
from selfreflect.report.cli import report
from selfreflect.scoring.cli import score
from selfreflect.strategies.cli import summarize

# libraries that log every request or lock at INFO: warnings only, unless --verbose
QUIET_LOGGERS = ("httpx", "httpx2", "httpcore", "openai", "urllib3", "filelock", "huggingface_hub")


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log debug messages and every HTTP request.")
def cli(verbose: bool) -> None:
    """SelfReflect: how well do LLM summaries describe the model's own answer distribution?"""
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(levelname)s %(name)s: %(message)s",
    )
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.NOTSET if verbose else logging.WARNING)


@cli.command("tiny-model")
@OUT
@click.option("--seed", default=0, show_default=True, help="Weight initialisation seed.")
def tiny_model(out: str, seed: int) -> None:
    """Build the tiny random-weight chat model used by the smoke configuration."""
    from selfreflect.tiny_model import build_tiny_model

    build_tiny_model(out, seed=seed)
    click.echo(f"tiny model written to {out}")


@cli.command("convert-model")
@CONFIG
@click.option("--model", required=True, help="Name of a `gguf` model in the config.")
@OUT
def convert_model(config_path: str, model: str, out: str) -> None:
    """Dequantise a GGUF model (a file, or a file inside an installed package) to safetensors."""
    from selfreflect.config import load_config, model_spec
    from selfreflect.errors import ConfigError
    from selfreflect.model_sources import convert_gguf

    spec = model_spec(load_config(config_path), model, source=config_path)
    if not spec["gguf"]:
        raise ConfigError(f"{config_path}: models.{model}.gguf: not set (nothing to convert)")
    convert_gguf(spec, out)
    click.echo(f"{model} converted to {out}")


@cli.command()
@CONFIG
@DATASET
@OUT
def questions(config_path: str, dataset: str, out: str) -> None:
    """Load, normalise, shuffle and truncate one dataset's questions."""
    from selfreflect.artifacts import write_table
    from selfreflect.config import dataset_spec, load_config
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import provenance
    from selfreflect.questions import load_questions

    config = load_config(config_path)
    spec = dataset_spec(config, dataset, source=config_path)
    check_writable(out)
    table = load_questions(dataset, spec, config["questions"]["num_questions"], config["seed"])
    source = {**spec, "dropped_duplicates": table.attrs["dropped_duplicates"]}
    write_table("questions", table, out, provenance(config, [], dataset=dataset, source=source))
    click.echo(f"{len(table)} questions written to {out}")


@cli.command()
@CONFIG
@SUBJECT
@QUESTIONS
@SHARD
@SHARDS
@OUT
def answers(
    config_path: str, subject: str, questions_path: str, shard: int, shards: int, out: str
) -> None:
    """Sample 2N answers per question from the subject model (SPEC §3); resumable."""
    from selfreflect import checkpoints, sharding
    from selfreflect.answers import sample_answers
    from selfreflect.artifacts import one_label, read_table, write_table
    from selfreflect.backends import open_generator
    from selfreflect.config import load_config, model_spec
    from selfreflect.failures import check_failures
    from selfreflect.fileio import check_writable
    from selfreflect.provenance import provenance

    config = load_config(config_path)
    spec = model_spec(config, subject, source=config_path)
    settings = config["answers"]
    table = sharding.shard(read_table("questions", questions_path), shard, shards)
    key = checkpoints.fingerprint(spec, settings, config["seed"])
    directory = checkpoints.checkpoint_dir(out, key)
    check_writable(out)
    check_writable(directory)
    with open_generator(spec) as generator:

        def sample(chunk):
            return sample_answers(generator, chunk, settings, config["seed"], spec["backend"])

        result = checkpoints.run_chunked(
            "answers", table, sample, directory, settings["checkpoint_every"]
        )
    check_failures(result, config["max_failed_share"], f"answers of {subject}")
    meta = provenance(
        config,
        [subject],
        dataset=one_label(table, "dataset", questions_path),
        subject=subject,
        settings=settings,
        shard=[shard, shards],
    )
    write_table("answers", result, out, meta)
    checkpoints.clear(directory)
    failed = int(result["error"].notna().sum())
    click.echo(f"answers for {len(result)} questions ({failed} failed) written to {out}")


@cli.command()
@click.argument("kind", type=click.Choice(["answers", "summaries", "scores"]))
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


DVC_YAML = "selfreflect dvc-yaml"


@cli.command("dvc-yaml")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    help="The config to build the DAG for [default: the one params.yaml was resolved from, "
    "else config/config.yaml].",
)
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file is not up to date.")
def dvc_yaml(config_path: str | None, check: bool) -> None:
    """Write dvc.yaml from the Snakemake rules and params.yaml, the resolved config (run in the
    project folder)."""
    from pathlib import Path

    from selfreflect.errors import ConfigError
    from selfreflect.fileio import write_text
    from selfreflect.workflow import (
        DEFAULT_CONFIG,
        PARAMS_FILE,
        dvc_yaml,
        params_source,
        params_yaml,
    )

    config = Path(config_path or params_source(Path(PARAMS_FILE)) or DEFAULT_CONFIG)
    texts = {"dvc.yaml": dvc_yaml(Path("Snakefile"), config), PARAMS_FILE: params_yaml(config)}
    for out, text in texts.items():
        if not check:
            write_text(out, text)
        elif not Path(out).is_file() or Path(out).read_text(encoding="utf-8") != text:
            raise ConfigError(f"{out}: not up to date with the rules and {config}; run {DVC_YAML}")
    if not check:
        click.echo(f"dvc.yaml and {PARAMS_FILE} written for {config}")


@cli.command()
@CONFIG
@OUT
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def explorer(config_path: str, out: str, files: tuple[str, ...]) -> None:
    """Write the run's explorer page from its answers, summaries, scores and controlled-pair
    FILES (told apart by their paths)."""
    from selfreflect.config import load_config
    from selfreflect.explorer import explorer_data, read_files, render
    from selfreflect.fileio import check_writable, write_text

    config = load_config(config_path)
    check_writable(out)
    data = explorer_data(read_files(files), config["run"], config["summaries"]["cluster"])
    write_text(out, render(data))
    click.echo(f"explorer of {len(data['rows'])} questions written to {out}")


CONFIG_README = "config/README.md"


@cli.command("config-docs")
@click.option("--out", default=CONFIG_README, show_default=True, type=click.Path(dir_okay=False))
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if OUT is not up to date.")
def config_docs(out: str, check: bool) -> None:
    """Write the config reference (every key, type, default, description) from the schema."""
    from pathlib import Path

    from selfreflect.config_docs import config_readme
    from selfreflect.errors import ConfigError
    from selfreflect.fileio import write_text

    text = config_readme()
    if not check:
        write_text(out, text)
        click.echo(f"{out} written from the config schema")
    elif not Path(out).is_file() or Path(out).read_text(encoding="utf-8") != text:
        raise ConfigError(
            f"{out}: not up to date with the config schema; run selfreflect config-docs"
        )


@cli.command("export-answers")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["reference", "hf"]),
    default="reference",
    show_default=True,
    help="reference: the original tool's JSON file; hf: a Hugging Face datasets folder.",
)
@click.option(
    "--questions",
    "questions_path",
    type=click.Path(dir_okay=False),
    help="hf: the questions table, whose source dataset the dataset card names.",
)
@click.argument("answers_path", type=click.Path(dir_okay=False))
@click.argument("out", type=click.Path())
def export_answers(fmt: str, questions_path: str | None, answers_path: str, out: str) -> None:
    """Write an answers table as a reference test-answers JSON file or a datasets folder."""
    from selfreflect.artifacts import read_table
    from selfreflect.fileio import check_writable
    from selfreflect.reference_format import write_reference_answers

    check_writable(out)
    if fmt == "hf":
        from selfreflect.answer_sets import write_answer_set

        shards = write_answer_set(answers_path, out, questions_path)
        click.echo(f"answer set written to {out} ({shards} Parquet shard(s) and a dataset card)")
    else:
        write_reference_answers(read_table("answers", answers_path), out)


@cli.command("import-answers")
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


cli.add_command(score)
cli.add_command(summarize)
cli.add_command(report)
cli.add_command(finetune_data)
cli.add_command(finetune_train)


def main() -> None:
    """Entry point: user errors become one line on stderr and exit status 1."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as err:
        context = getattr(err, "ctx", None)
        hint = f" (see '{context.command_path} --help')" if context else ""
        click.echo(f"error: {err.format_message()}{hint}", err=True)
        sys.exit(err.exit_code)
    except SelfReflectError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except OSError as err:  # e.g. an unwritable folder or a full disk, found mid-way
        where = f"{err.filename}: " if err.filename else ""
        click.echo(f"error: {where}{err.strerror or err}", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
