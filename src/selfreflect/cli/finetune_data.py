"""``selfreflect finetune-data``: one finetuning method's training data."""

from __future__ import annotations

import click

from selfreflect.cli.options import CONFIG, METHOD, OUT, QUESTIONS, reads

DATA_KEYS = {
    "sft": ["dataset", "teacher"],
    "dpo": ["dataset", "candidates", "judge", "min_gap"],
    "grpo": ["dataset"],
}
TABLES = {"type": click.Path(dir_okay=False), "multiple": True}


@reads(lambda job, config: [f"finetune.{key}" for key in DATA_KEYS[job["method"]]])
@click.command("finetune-data")
@CONFIG
@METHOD
@QUESTIONS
@click.option("--evaluated", **TABLES, help="Questions table of an evaluated dataset (repeat).")
@click.option("--summaries", **TABLES, help="SFT: the teacher's; DPO: each candidate's (repeat).")
@click.option("--scores", **TABLES, help="DPO: each candidate's scores, as --summaries (repeat).")
@click.option(
    "--answers",
    type=click.Path(dir_okay=False),
    help="GRPO: the subject's answers to the training questions (each reward's measure).",
)
@OUT
def finetune_data(
    config_path: str,
    method: str,
    questions_path: str,
    evaluated: tuple[str, ...],
    summaries: tuple[str, ...],
    scores: tuple[str, ...],
    answers: str | None,
    out: str,
) -> None:
    """Training data of one method from the training questions' summaries (and scores), or
    for GRPO their answers."""
    from selfreflect.artifacts import read_table, write_table
    from selfreflect.config import config_source, load_config
    from selfreflect.errors import InputError
    from selfreflect.fileio import check_writable
    from selfreflect.finetune import check_finetune
    from selfreflect.finetune.data import check_disjoint, dpo_pairs, grpo_questions, sft_data
    from selfreflect.provenance import provenance

    counts = (len(summaries), len(scores), answers is not None)
    wanted = {
        "sft": ("one --summaries", counts == (1, 0, False)),
        "dpo": (
            "a --summaries and --scores per candidate (2+), no --answers",
            counts[0] == counts[1] >= 2 and answers is None,
        ),
        "grpo": ("--answers alone", counts == (0, 0, True)),
    }
    if not wanted[method][1]:
        raise click.UsageError(f"--method {method} takes {wanted[method][0]}")
    config = load_config(config_path)
    source = config_source(config_path)
    check_finetune(config, source)
    settings = config["finetune"]
    questions = read_table("questions", questions_path)
    try:
        check_disjoint(
            questions, [read_table("questions", p) for p in evaluated], settings["dataset"]
        )
    except InputError as err:
        raise InputError(f"{source}: {err}") from None
    check_writable(out)
    seen: dict = {}  # a candidate's rows given twice are refused (artifacts.check_new_rows)
    tables = [read_table("summaries", path, seen=seen) for path in summaries]
    if method == "grpo":
        table = grpo_questions(questions, read_table("answers", answers))
    elif method == "sft":
        table = sft_data(questions, tables[0])
    else:
        scored = [read_table("scores", path, seen=seen) for path in scores]
        table = dpo_pairs(questions, tables, scored, settings["min_gap"])
    if table.empty:
        why = (
            "every question's answers failed"
            if method == "grpo"
            else "every candidate failed or tied"
        )
        raise InputError(f"{out}: no {method} training examples ({why})")
    metadata = provenance(
        config, [], method=method, finetune=settings, ids=sorted(set(table["id"]))
    )
    write_table(f"{method}_data", table, out, metadata)
    click.echo(f"{len(table)} {method} examples written to {out}")
