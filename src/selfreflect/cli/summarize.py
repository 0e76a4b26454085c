"""``selfreflect summarize``: one strategy's summaries of one dataset for one subject."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from selfreflect.cli.options import CONFIG, OUT, QUESTIONS, SUBJECT, Job, gpus_option, reads
from selfreflect.errors import SelfReflectError, StrategyError
from selfreflect.strategies.registry import strategy_prompts, strategy_setting_keys

# questions per checkpoint of a summaries job: a killed job loses at most one chunk, and each
# chunk's prompts (times the fresh answers a strategy samples) keep an engine's batches full
CHECKPOINT_EVERY = 256


def summary_settings(job: Job, config: dict[str, Any]) -> list[Sequence[str]]:
    """What the job tracks of the subject (fresh answers) and the summariser (its thinking mode
    too) it generates with, and the ``summaries`` settings of the job's strategy."""
    from selfreflect.config import generator_keys

    summarizer = config["summarizer"] or job["subject"]
    return [
        *generator_keys(config, job["subject"]),
        *generator_keys(config, summarizer),
        ("models", summarizer, "thinking"),
        *strategy_setting_keys(config["summaries"], job["strategy"]),
    ]


def summary_checkpoints(
    out: str,
    config: dict[str, Any],
    models: list[str],
    strategy: str,
    settings: dict[str, Any],
    adapter: str | None,
) -> Path:
    """Where the checkpoints of a summaries job go: keyed by its strategy, settings, seed,
    models' files and entries, LoRA adapter, plug-in code, and the command's code and prompts."""
    from selfreflect import checkpoints
    from selfreflect.code_deps import code_digest, job_identity, plugin_files
    from selfreflect.config import model_spec
    from selfreflect.provenance import model_fingerprint

    plugin = config["summaries"]["plugins"].get(strategy)
    identity = {
        "strategy": strategy,
        "settings": settings,
        "adapter": None if adapter is None else model_fingerprint(adapter),
        "plugin": None if plugin is None else code_digest(plugin_files(plugin)),
    }
    specs = [model_spec(config, name) for name in models]
    key = checkpoints.fingerprint(job_identity(identity, *specs), config["seed"])
    return checkpoints.checkpoint_dir(out, key)


@contextmanager
def plugin_named(
    config_path: str, strategy: str, plugins: dict[str, str], error: type[SelfReflectError]
) -> Iterator[None]:
    """A plug-in strategy's errors as ``error``, naming the config file and key of the
    plug-in: the user's file where ``config_path`` was resolved from it (a built-in strategy's
    errors pass as they are)."""
    try:
        yield
    except StrategyError as err:
        if strategy not in plugins:
            raise
        from selfreflect.config import config_source

        source = config_source(config_path)
        raise error(f"{source}: summaries.plugins.{strategy}: {err}") from None


@reads(
    "seed",
    summary_settings,
    prompts=lambda job: strategy_prompts(job["strategy"]),
    plugin=True,
)
@click.command()
@gpus_option()
@CONFIG
@SUBJECT
@click.option("--strategy", required=True, help="Built-in strategy or summaries.plugins name.")
@QUESTIONS
@OUT
@click.option(
    "--adapter",
    type=click.Path(exists=True, file_okay=False),
    help="LoRA adapter folder the summariser runs with (finetuned_sft, finetuned_dpo-seed1, ...).",
)
def summarize(
    config_path: str,
    subject: str,
    strategy: str,
    questions_path: str,
    out: str,
    adapter: str | None,
) -> None:
    """Summarise the subject's answer distribution on each question with one strategy;
    resumable (a checkpoint every 256 questions)."""
    from contextlib import ExitStack

    from selfreflect import checkpoints
    from selfreflect.artifacts import read_table, write_table
    from selfreflect.backends.adapter import check_trained_as
    from selfreflect.config import adapter_of, check_model_paths, load_config, model_spec
    from selfreflect.errors import ConfigError
    from selfreflect.failures import check_failures
    from selfreflect.fileio import check_writable
    from selfreflect.progress import name_job
    from selfreflect.provenance import provenance
    from selfreflect.strategies.registry import resolve, strategy_settings
    from selfreflect.strategies.runner import open_models, summarizer_name
    from selfreflect.strategies.runner import summarize as run_strategy
    from selfreflect.strategies.text import blank_summaries

    config = load_config(config_path)
    model_spec(config, subject, source=config_path)
    plugins = config["summaries"]["plugins"]
    with plugin_named(config_path, strategy, plugins, ConfigError):
        resolve(strategy, plugins)  # an unknown name or a broken plug-in fails before loading
    trained = adapter_of(config, strategy)
    if (trained is not None) != (adapter is not None):
        needs = "needs one" if trained else "runs without one"
        raise ConfigError(f"--adapter: strategy '{strategy}' {needs}")
    if adapter is not None:
        check_trained_as(Path(adapter), *trained)
    questions = read_table("questions", questions_path)
    name_job("/".join([*sorted(set(questions["dataset"])), subject]), strategy)
    summarizer = summarizer_name(config, subject)
    settings = strategy_settings(config["summaries"], strategy)
    models = list(dict.fromkeys([subject, summarizer]))
    directory = summary_checkpoints(out, config, models, strategy, settings, adapter)
    check_writable(out)
    check_writable(directory)
    check_model_paths(config, config_path, names=models)
    datasets = questions.set_index("id")["dataset"]
    with ExitStack() as stack:
        opened = open_models(config, subject, stack, adapter)

        def summarize_chunk(chunk):
            with plugin_named(config_path, strategy, plugins, StrategyError):
                part = run_strategy(strategy, chunk, opened, config, summarizer)
            return part.assign(dataset=part["id"].map(datasets), subject=subject)

        table = checkpoints.run_chunked(
            "summaries", questions, summarize_chunk, directory, CHECKPOINT_EVERY
        )
    check_failures(table, config["max_failed_share"], f"strategy '{strategy}'")
    if blank := int(blank_summaries(table["summary"]).sum()):
        click.echo(
            f"warning: strategy '{strategy}': {blank} blank summaries, scored as given",
            err=True,
        )
    metadata = provenance(
        config,
        models,
        strategy=strategy,
        subject=subject,
        summarizer=summarizer,
        adapter=adapter,
        settings=settings,
        **table.attrs,
    )
    write_table("summaries", table, out, metadata)
    checkpoints.clear(directory)
    failed = int(table["error"].notna().sum())
    blanks = f", {blank} blank" if blank else ""  # the terminal's line: the warning is logged
    click.echo(f"{strategy}: {len(table)} summaries ({failed} failed{blanks}) written to {out}")
