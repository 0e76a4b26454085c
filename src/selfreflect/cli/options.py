"""Command-line options that several ``selfreflect`` commands share."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

Job = Mapping[str, str]  # a workflow job's wildcards: {"dataset": ..., "subject": ...}
SettingKeys = Callable[[Job, dict[str, Any]], Sequence[str | Sequence[str]]]


def file_option(
    flag: str, help: str | None = None, *, required: bool = True, exists: bool = False
) -> Callable[[Callable], Callable]:
    """``flag FILE``, given to the command as ``<flag>_path``."""
    name = f"{flag.removeprefix('--').replace('-', '_')}_path"
    kind = click.Path(dir_okay=False, exists=exists)
    return click.option(flag, name, required=required, type=kind, help=help)


def folder_option(
    flag: str, help: str, *, required: bool = True, multiple: bool = False
) -> Callable[[Callable], Callable]:
    """``flag DIR``, given to the command as ``<flag>_dir``; repeatable, as ``<flag>_dirs``."""
    name = f"{flag.removeprefix('--').replace('-', '_')}_dir{'s' if multiple else ''}"
    kind = click.Path(file_okay=False)
    return click.option(flag, name, required=required, multiple=multiple, type=kind, help=help)


def _checked_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    import re

    from selfreflect.config import NAME

    if value is not None and not re.match(NAME["pattern"], value):
        raise click.BadParameter(f"{value!r} is not a valid name: {NAME['description']}")
    return value


def name_option(flag: str, help: str) -> Callable[[Callable], Callable]:
    """``flag NAME``, optional: a dataset or model name as the config's schema takes them."""
    return click.option(flag, callback=_checked_name, help=help)


CONFIG = file_option("--config", "Experiment config (YAML).")
OUT = click.option("--out", required=True, type=click.Path(), help="Output path.")
SUBJECT = click.option("--subject", required=True, help="Subject model name from the config.")
DATASET = click.option("--dataset", required=True, help="Dataset name from the config.")
JUDGE = click.option("--judge", required=True, help="Judge model name from the config.")
QUESTIONS = file_option("--questions")
ANSWERS = click.option("--answers", "answers_path", required=True, type=click.Path())
OUT_DIR = click.option("--out-dir", required=True, type=click.Path(), help="Tables folder.")
FIGURE_DIR = click.option("--figure-dir", required=True, type=click.Path(), help="Figures folder.")
SHARD = click.option("--shard", default=0, show_default=True, help="Which shard (0-based).")
SHARDS = click.option("--shards", default=1, show_default=True, help="Number of shards.")
METHOD = click.option("--method", required=True, type=click.Choice(["sft", "dpo", "grpo"]))


def _claim_gpus(ctx: click.Context, param: click.Parameter, count: int) -> int:
    from selfreflect.gpus import claim_gpus

    if count and not ctx.resilient_parsing:
        claim_gpus(count)
    return count


def gpus_option() -> Callable[[Callable], Callable]:
    """``--gpus N`` (a model job's): hold N of the GPUs the job sees
    (:func:`selfreflect.gpus.claim_gpus`). A function, so that only the commands taking it
    depend on :mod:`selfreflect.gpus`."""
    return click.option(
        "--gpus",
        default=0,
        show_default=True,
        type=click.IntRange(min=0),
        expose_value=False,
        callback=_claim_gpus,
        help="GPUs the job takes (the workflow's `gpu` resource): where it sees more, it holds"
        " as many that no other job on this machine holds and sees only them"
        " (CUDA_VISIBLE_DEVICES).",
    )


def reads(
    *settings: str | SettingKeys,
    prompts: bool | Callable[[Job], list[str]] = False,
    plugin: bool = False,
) -> Callable[[click.Command], click.Command]:
    """Declare what a command reads, what a workflow job running it tracks: the config's
    settings, as dotted key templates over the job's wildcards (``"models.{judge}"``) or
    functions of the job and the config giving more (templates, or key paths for names with
    dots); whether it renders prompts.yaml texts (``prompts``: those its code's ``PROMPT_KEYS``
    declare, and, a function, the job's own, a strategy's); whether it runs the plug-in of
    the job's ``{strategy}`` (``plugin``). :mod:`selfreflect.code_deps` reads the declaration
    with the command's code."""

    def declare(command: click.Command) -> click.Command:
        command.reads = (settings, prompts, plugin)  # type: ignore[attr-defined]
        return command

    return declare


def generating(role: str) -> SettingKeys:
    """What a job tracks of the model its wildcard ``role`` names and generates with."""

    def keys(job: Job, config: dict[str, Any]) -> list[tuple[str, ...]]:
        from selfreflect.config import generator_keys

        return generator_keys(config, job[role])

    return keys


def judging(job: Job, config: dict[str, Any]) -> list[tuple[str, ...]]:
    """What a job tracks of its ``{judge}`` model, judging on ``scoring.backend``."""
    from selfreflect.config import judge_keys

    return judge_keys(config, job["judge"])


def distinct_files(ctx: click.Context, param: click.Parameter, files: tuple[str, ...]) -> tuple:
    """Refuse a file named twice (also by another path to it): its rows would count twice."""
    import os

    from selfreflect.errors import InputError

    seen: dict[str, str] = {}
    for file in files:
        real = os.path.realpath(file)
        if real in seen:
            raise InputError(f"{file}: given twice (also as {seen[real]}); each file once")
        seen[real] = file
    return files


FILES = click.argument(
    "files", nargs=-1, required=True, type=click.Path(dir_okay=False), callback=distinct_files
)
