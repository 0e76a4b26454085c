"""What the workflow's rules read off the config, built once in ``workflow/rules/common.smk``.

:func:`checked_config` reads and validates the config files Snakemake was given;
:class:`RunInputs` holds the run's folders, the wildcard values of its artifacts and the
Snakemake input functions (each takes the job's ``wildcards``). What needs Snakemake's own
globals (``expand``, ``temp``, ``rules``, ``workflow``, ``report``) stays in the ``.smk`` files.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from selfreflect import paths
from selfreflect.config import (
    NAME,
    check_dataset_paths,
    check_gguf_sources,
    check_model_paths,
    converted_models,
    evaluated_datasets,
    merge_config,
    model_gpus,
    read_config_file,
    summarized_datasets,
    validate_config,
)
from selfreflect.errors import ConfigError
from selfreflect.fileio import file_digest
from selfreflect.finetune import check_finetune, judge_name
from selfreflect.scoring.stopwords import BUILT_IN as BUILT_IN_STOPWORDS
from selfreflect.strategies.registry import check_strategies
from selfreflect.workflow import command_code, command_params

if TYPE_CHECKING:  # input functions are given the job's wildcards (and inputs) as Namedlists
    from snakemake.iocontainers import Namedlist

    from selfreflect.code_deps import Deps

# config names, already checked: a second wall
NAME_WILDCARD = NAME["pattern"].removeprefix("^").removesuffix(r"$(?!\n)")
GPU_PARTITION = "gpu"  # the SLURM partition of jobs that take GPUs (workflow/profiles/slurm)


@contextmanager
def config_errors_exit() -> Iterator[None]:
    """Stop Snakemake on a :class:`ConfigError` with its one line, ``error: …``, no traceback."""
    try:
        yield
    except ConfigError as err:
        sys.exit(f"error: {err}")


def checked_config(
    configfiles: Sequence[str | os.PathLike], overrides: Mapping[str, Any], source: str
) -> dict[str, Any]:
    """The config of ``configfiles`` (each with its includes; a later one merged over the
    earlier, as Snakemake merges them) and ``--config`` ``overrides`` (:func:`typed_overrides`),
    validated (defaults filled in) and checked against the strategies, the finetuning block and
    the model paths. An error the overrides bring names ``--config``, not the files.

    Snakemake's own ``config`` is not used: it reads the files without their includes.
    """
    with config_errors_exit():
        config: dict[str, Any] = {}
        for configfile in configfiles:
            config = merge_config(config, read_config_file(configfile))
        try:
            return _checked(merge_config(config, typed_overrides(overrides)), source)
        except ConfigError as err:
            if not overrides:
                raise
            blamed = _blame(config, source, str(err))
            raise ConfigError(f"{blamed}: {str(err).removeprefix(f'{source}: ')}") from None


def _checked(config: dict[str, Any], source: str) -> dict[str, Any]:
    config = validate_config(config, source=source, check_names=check_strategies)
    check_finetune(config, source)
    check_model_paths(config, source, built=paths.MODELS)
    check_gguf_sources(config, source)
    check_dataset_paths(config, source)
    check_named_files(config, source)
    return config


def check_named_files(config: dict[str, Any], source: str) -> None:
    """One-line :class:`ConfigError` for a word list (``scoring.stopwords``) or ratings file
    (``report.human_ratings``) that does not exist, before any job runs (Snakemake would name
    the missing input of a rule, not the setting)."""
    named = {
        "scoring.stopwords": stopword_file(config),
        "report.human_ratings": config["report"]["human_ratings"],
    }
    for key, path in named.items():
        if path is not None and not os.path.isfile(path):
            raise ConfigError(f"{source}: {key}: {path}: not found")


def stopword_file(config: dict[str, Any]) -> str | None:
    """The word list ``scoring.stopwords`` names, if it names one (not a built-in policy)."""
    policy = config["scoring"]["stopwords"]
    return None if policy in BUILT_IN_STOPWORDS else policy


def _blame(files_config: dict[str, Any], source: str, error: str) -> str:
    """Whom ``error``, raised by the files' config with the overrides over it, is due to: the
    overrides where the files alone pass, the files where they fail alike, else both."""
    try:
        _checked(files_config, source)
    except ConfigError as alone:
        return source if str(alone) == error else f"{source} with --config"
    return "--config"


def typed_overrides(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """``--config`` overrides with the values inside a mapping or list typed as a config
    file's YAML types them: Snakemake types a top-level value (``num=5`` is a number) but
    reads ``answers={"num_answers": 5}``'s items as strings."""
    return {
        key: _typed(value) if isinstance(value, dict | list) else value
        for key, value in overrides.items()
    }


def override_arguments(overrides: Mapping[str, Any]) -> list[str]:
    """``--config`` ``overrides`` as the ``KEY=VALUE`` arguments that give them again (a
    mapping or list as JSON), for Snakemake's ``--config`` or ``selfreflect dvc-sync --set``."""
    return [
        f"{key}={json.dumps(value) if isinstance(value, dict | list) else value}"
        for key, value in overrides.items()
    ]


def parsed_overrides(arguments: Sequence[str], option: str) -> dict[str, Any]:
    """``KEY=VALUE`` ``arguments`` as Snakemake's ``--config`` reads them, typed
    (:func:`typed_overrides`); a malformed one names ``option``."""
    from snakemake.cli import parse_config

    try:
        return typed_overrides(parse_config(list(arguments)))
    except ValueError as err:
        raise ConfigError(f"{option}: {err}") from None


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if not isinstance(value, str):
        return value
    try:
        loaded = yaml.safe_load(value)
    except yaml.YAMLError:
        return value
    scalar = isinstance(loaded, bool | int | float)
    return loaded if scalar or value in ("null", "Null", "NULL", "~") else value


def output_dir(suffix: str) -> Callable[[Namedlist, Sequence[str]], str]:
    """Param: the folder of a rule's first output ending in ``suffix`` (derived from the
    outputs, as --lint asks, not a path of its own)."""
    return lambda w, output: next((os.path.dirname(p) for p in output if p.endswith(suffix)), "")


def input_flags(*names: str) -> Callable[[Namedlist, Namedlist], list[str]]:
    """Param: ``--NAME=PATH`` for each file of a rule's inputs ``names``, in order."""
    return lambda w, input: [f"--{name}={path}" for name in names for path in input[name]]


# the table rules' folders: tables, figures and (the main table's, one per strategy) metrics
REPORT_DIRS = dict(
    tables=output_dir(".csv"), figures=output_dir(".png"), metrics=output_dir(".json")
)


class RunInputs:
    """A run's folders, wildcard values and input functions, from its checked ``config``, and
    what each command a rule runs depends on (``command_deps``: its words to its
    :class:`~selfreflect.code_deps.Deps`, handed over by the command line in common.smk)."""

    def __init__(self, config: dict[str, Any], command_deps: Callable[[str], Deps]) -> None:
        self.config = config
        self.command_deps = command_deps
        self.name = config["run"]
        self.resolved_config = paths.RESOLVED_CONFIG.format(run=self.name)
        self.logs = paths.LOGS.format(run=self.name)
        self.benchmarks = paths.BENCHMARKS.format(run=self.name)
        self.results = paths.RESULTS.format(run=self.name)
        self.tables = paths.TABLES.format(run=self.name)
        self.figures = paths.FIGURES.format(run=self.name)
        self.performance_log = f"{self.logs}/performance.log"
        self.judge_cache = paths.for_run(paths.JUDGE_CACHE, self.name)  # the judge pass's
        self.shards = list(range(config["shards"]))
        self.evaluated = evaluated_datasets(config)  # all datasets but the finetuning questions
        self.summarized = summarized_datasets(config)
        self.strategies = config["summaries"]["strategies"]
        self.training = config["finetune"]["dataset"]
        self.experiments = dict(
            dataset=self.evaluated, subject=config["subjects"], judge=config["judges"]
        )
        self.summary_experiments = {**self.experiments, "dataset": self.summarized}
        self.summaries = dict(
            dataset=self.summarized, subject=config["subjects"], strategy=self.strategies
        )
        # the GGUF models the convert_model rule builds, as its wildcard's pattern (none: no match)
        self.converted = "|".join(map(re.escape, converted_models(config))) or "(?!)"
        # Every rule's conda environment (--use-conda) has vLLM's CUDA build if a model takes a GPU.
        gpu = model_gpus(config, *config["models"])
        self.env = "../envs/gpu.yaml" if gpu else "../envs/cpu.yaml"

    def code(self, command: str) -> Callable[[Namedlist], Any]:
        """Input (``code=``): the package files ``selfreflect COMMAND`` runs, compared by their
        hash (:func:`selfreflect.workflow.command_code`)."""
        return command_code(self.command_deps(command), self.config)

    def command_params(self, command: str) -> dict[str, Any]:
        """Params (``**``): the config, code hash, settings and prompt texts ``selfreflect
        COMMAND`` reads (:func:`selfreflect.workflow.command_params`)."""
        return command_params(self.command_deps(command), self.config, self.resolved_config)

    def model_params(self, command: str) -> dict[str, Any]:
        """Params (``**``) of a model-building job, which every run shares: the code hash,
        settings and prompt texts ``selfreflect COMMAND`` reads, not the run's config path (a
        rule passes it as a resource, which Snakemake does not compare): another run with the
        same model entry finds the model made."""
        return command_params(self.command_deps(command), self.config, None)

    def log(self, job: str) -> str:
        """A job's log file: ``job`` is its rule and wildcards (``"questions/{dataset}"``)."""
        return f"{self.logs}/{job}.log"

    def benchmark(self, job: str) -> str:
        """A job's benchmark file (wall time, peak memory; ``selfreflect report performance``
        sums them per rule), named as its log."""
        return f"{self.benchmarks}/{job}.tsv"

    @staticmethod
    def model_log(job: str) -> str:
        """A model-building job's log file, shared by the runs."""
        return f"{paths.MODEL_LOGS}/{job}.log"

    @staticmethod
    def model_benchmark(job: str) -> str:
        """A model-building job's benchmark file, shared by the runs."""
        return f"{paths.MODEL_BENCHMARKS}/{job}.tsv"

    def report_metrics(self, name: str) -> str:
        """The DVC metrics file of report table ``name``."""
        return paths.REPORT_METRICS.format(run=self.name, name=name)

    def models(self, *names: str) -> Callable[[Namedlist], list[str]]:
        """Input function: the models among ``names`` (wildcard templates) that a rule of this
        workflow builds (under results/models/); hub and local models outside it are not inputs."""

        def built(wildcards: Namedlist) -> list[str]:
            files = [self.config["models"][name.format(**wildcards)]["path"] for name in names]
            return sorted({path for path in files if path.startswith(f"{paths.MODELS}/")})

        return built

    def dataset_files(self, wildcards: Namedlist) -> list[str]:
        """A dataset's local questions file or folder (an input, so the rule sees it), not a
        hub id."""
        dataset = self.config["datasets"][wildcards.dataset]
        path, local = dataset["path"], dataset["source"] == "local"
        return [path] if path and (local or os.path.exists(path)) else []

    def dataset_digest(self, wildcards: Namedlist) -> list[str]:
        """Content hashes of a dataset's local files: reruns are triggered by params, not mtimes."""
        files = [Path(path) for path in self.dataset_files(wildcards)]
        files = [f for path in files for f in sorted(path.rglob("*") if path.is_dir() else [path])]
        return [file_digest(path) for path in files if path.is_file()]

    def stopword_files(self, wildcards: Namedlist) -> list[str]:
        """The word list scoring jobs read when ``scoring.stopwords`` names one (an input)."""
        return [path] if (path := stopword_file(self.config)) else []

    def model_resources(
        self, models: Callable[[Namedlist], list[str]]
    ) -> dict[str, Callable[[Namedlist], Any]]:
        """Resources of a job loading the models ``models(wildcards)`` names: the GPUs they take
        (``gpu``, asked of SLURM as ``--gpus``) and, if any, the GPU partition. All other jobs
        (merges, tables, CPU-only models) go to the cluster's default partition."""

        def gpus(wildcards: Namedlist) -> int:
            return model_gpus(self.config, *models(wildcards))

        return dict(gpu=gpus, slurm_partition=lambda w: GPU_PARTITION if gpus(w) else None)

    def embedder_resources(self) -> dict[str, Callable[[Namedlist], Any]]:
        """Resources of a job embedding a subject's answers (MiniLM): one GPU, where the
        subject's jobs take any, in their partition."""
        resources = self.model_resources(lambda wildcards: [wildcards.subject])
        gpus = resources["gpu"]
        return {**resources, "gpu": lambda wildcards: min(1, gpus(wildcards))}

    def studies(self, wildcards: Namedlist) -> str:
        """Param: whether an experiment's judge pass also feeds the studies (evaluated datasets)."""
        return "--studies" if wildcards.dataset in self.evaluated else "--no-studies"

    def summary_models(self, wildcards: Namedlist) -> list[str]:
        """The models a summary job loads: the subject (fresh answers) and the summariser."""
        return [wildcards.subject, self.config["summarizer"] or wildcards.subject]

    def judged_strategies(self, wildcards: Namedlist) -> list[str]:
        """The strategies an experiment's judge pass scores: the config's on the summarised
        datasets, the finetuning candidates on the training questions."""
        if wildcards.dataset in self.summarized:
            return self.strategies
        if wildcards.dataset == self.training:
            return self.config["finetune"]["candidates"]
        return []

    def training_wildcards(self, wildcards: Namedlist) -> dict[str, Any]:
        """The wildcard values of the training questions' summaries and scores a finetuning
        method learns from: its teacher's (SFT) or the candidates' (DPO)."""
        settings = self.config["finetune"]
        sft = wildcards.method == "sft"
        return dict(
            dataset=self.training,
            subject=wildcards.subject,
            judge=judge_name(self.config),
            strategy=[settings["teacher"]] if sft else settings["candidates"],
        )
