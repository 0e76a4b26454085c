"""``selfreflect finetune-data`` and ``selfreflect finetune-train``: the finetuning stages."""

from __future__ import annotations

import click

from selfreflect.cli_options import CONFIG, OUT, QUESTIONS, SUBJECT

METHOD = click.option("--method", required=True, type=click.Choice(["sft", "dpo"]))
TABLES = {"type": click.Path(dir_okay=False), "multiple": True}


@click.command("finetune-data")
@CONFIG
@METHOD
@QUESTIONS
@click.option("--evaluated", **TABLES, help="Questions table of an evaluated dataset (repeat).")
@click.option("--summaries", **TABLES, help="SFT: the teacher's; DPO: each candidate's (repeat).")
@click.option("--scores", **TABLES, help="DPO: each candidate's scores, as --summaries (repeat).")
@OUT
def finetune_data(
    config_path: str,
    method: str,
    questions_path: str,
    evaluated: tuple[str, ...],
    summaries: tuple[str, ...],
    scores: tuple[str, ...],
    out: str,
) -> None:
    """Training data of one method from the training questions' summaries (and scores)."""
    from selfreflect.artifacts import read_table, write_table
    from selfreflect.config import load_config
    from selfreflect.errors import InputError
    from selfreflect.fileio import check_writable
    from selfreflect.finetune import check_finetune
    from selfreflect.finetune.data import check_disjoint, dpo_pairs, sft_data
    from selfreflect.provenance import provenance

    sft = method == "sft"
    counts = (len(summaries), len(scores))
    if counts != (1, 0) if sft else counts[0] != counts[1] or counts[0] < 2:
        wanted = "one --summaries" if sft else "a --summaries and --scores per candidate (2+)"
        raise click.UsageError(f"--method {method} takes {wanted}")
    config = load_config(config_path)
    check_finetune(config, config_path)
    settings = config["finetune"]
    questions = read_table("questions", questions_path)
    try:
        check_disjoint(
            questions, [read_table("questions", p) for p in evaluated], settings["dataset"]
        )
    except InputError as err:
        raise InputError(f"{config_path}: {err}") from None
    check_writable(out)
    tables = [read_table("summaries", path) for path in summaries]
    if sft:
        table = sft_data(questions, tables[0])
    else:
        table = dpo_pairs(
            questions, tables, [read_table("scores", p) for p in scores], settings["min_gap"]
        )
    if table.empty:
        raise InputError(f"{out}: no {method} training examples (every candidate failed or tied)")
    metadata = provenance(
        config, [], method=method, finetune=settings, ids=sorted(set(table["id"]))
    )
    write_table(f"{method}_data", table, out, metadata)
    click.echo(f"{len(table)} {method} examples written to {out}")


@click.command("finetune-train")
@CONFIG
@SUBJECT
@METHOD
@click.option("--data", "data_path", required=True, type=click.Path(dir_okay=False))
@OUT
@click.option(
    "--loss",
    "loss_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Loss per step (TSV, a DVC plot).",
)
def finetune_train(
    config_path: str, subject: str, method: str, data_path: str, out: str, loss_path: str
) -> None:
    """Train the subject's LoRA adapter (folder OUT, with the training question ids)."""
    from pathlib import Path

    import pandas as pd

    from selfreflect.artifacts import read_metadata, read_table
    from selfreflect.config import load_config, model_spec
    from selfreflect.errors import ConfigError
    from selfreflect.fileio import check_writable, write_atomic
    from selfreflect.finetune import check_finetune
    from selfreflect.finetune.train import train_adapter
    from selfreflect.provenance import provenance

    config = load_config(config_path)
    check_finetune(config, config_path)
    spec = model_spec(config, subject, source=config_path)
    data = read_table(f"{method}_data", data_path)
    check_writable(out)
    check_writable(loss_path)
    settings = config["finetune"]["training"]
    record = provenance(
        config, [subject], method=method, training=settings, ids=read_metadata(data_path)["ids"]
    )
    try:
        losses = train_adapter(spec, method, data, settings, Path(out), record)
    except ConfigError as err:
        raise ConfigError(f"{config_path}: {err}") from None
    frame = pd.DataFrame(losses, columns=["step", "loss"])
    write_atomic(loss_path, lambda tmp: frame.to_csv(tmp, sep="\t", index=False))
    click.echo(f"{method} adapter of {subject} ({len(frame)} steps) written to {out}")
