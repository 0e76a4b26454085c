"""``selfreflect finetune-train``: the subject's LoRA adapter."""

from __future__ import annotations

import click

from selfreflect.cli.options import (
    CONFIG,
    METHOD,
    OUT,
    SUBJECT,
    file_option,
    folder_option,
    gpus_option,
    reads,
)
from selfreflect.config import SEED_MAX
from selfreflect.strategies.registry import strategy_prompts


def _trained_model(job: dict, config: dict) -> list[tuple[str, ...]]:
    """What training reads of the subject's entry: its weights, family and dtype."""
    from selfreflect.config import TRAINING_KEYS, model_keys

    return model_keys(job["subject"], TRAINING_KEYS)


def _reward_settings(job: dict, config: dict) -> list[str | tuple[str, ...]]:
    """GRPO's: its settings, its reward judge's model and the scoring settings it judges with."""
    from selfreflect.config import judge_keys

    if job["method"] != "grpo":
        return []
    return ["finetune.grpo", *judge_keys(config, config["finetune"]["grpo"]["judge"]), "scoring"]


@reads(
    _trained_model,
    "finetune.training",
    _reward_settings,
    prompts=lambda job: strategy_prompts(f"finetuned_{job['method']}"),
)
@click.command("finetune-train")
@gpus_option()
@CONFIG
@SUBJECT
@METHOD
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=SEED_MAX),
    help="Training seed (initialisation, dropout, data order); default finetune.training.seed.",
)
@file_option("--data")
@OUT
@folder_option(
    "--log", "The trainer's log (a DVCLive folder: the loss per step in plots/metrics/loss.tsv)."
)
def finetune_train(
    config_path: str,
    subject: str,
    method: str,
    seed: int | None,
    data_path: str,
    out: str,
    log_dir: str,
) -> None:
    """Train the subject's LoRA adapter (folder OUT, with the training question ids)."""
    from contextlib import nullcontext
    from pathlib import Path

    from selfreflect.artifacts import read_metadata, read_table
    from selfreflect.config import config_source, load_config, model_spec
    from selfreflect.errors import ConfigError, InputError
    from selfreflect.finetune import check_finetune
    from selfreflect.finetune.reward import reward_function
    from selfreflect.finetune.train import check_outputs, train_adapter
    from selfreflect.provenance import provenance

    config = load_config(config_path)
    source = config_source(config_path)
    check_finetune(config, source)
    spec = model_spec(config, subject, source=source)
    data = read_table(f"{method}_data", data_path)
    ids = read_metadata(data_path).get("ids")
    if not isinstance(ids, list):
        raise InputError(
            f"{data_path}: metadata: no 'ids' (the training question ids"
            " `selfreflect finetune-data` records)"
        )
    settings = config["finetune"]["training"]
    settings = {**settings, "seed": settings["seed"] if seed is None else seed}
    if method == "grpo":
        settings["grpo"] = config["finetune"]["grpo"]
    check_outputs(Path(out), Path(log_dir), subject, method, settings["seed"])
    record = provenance(config, [subject], ids=ids)
    rewarded = reward_function(config, data, source) if method == "grpo" else nullcontext()
    with rewarded as reward:
        try:
            train_adapter(spec, method, data, settings, Path(out), record, Path(log_dir), reward)
        except ConfigError as err:
            raise ConfigError(f"{source}: {err}") from None
    click.echo(
        f"{method} adapter of {subject} (seed {settings['seed']}) written to {out}, its training"
        f" log to {log_dir}"
    )
