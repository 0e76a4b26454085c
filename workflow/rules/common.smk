# Config validation and the small helpers rules use to find their inputs and parameters.
import os
import re
import sys
from pathlib import Path

from selfreflect import paths
from selfreflect.config import (
    FINETUNED,
    NAME,
    check_model_paths,
    converted_models,
    evaluated_datasets,
    model_gpus,
    read_config_file,
    summarized_datasets,
    validate_config,
    write_resolved_config,
)
from selfreflect.dvc_record import align_with_dvc
from selfreflect.fileio import file_digest
from selfreflect.finetune import check_finetune
from selfreflect.scoring.stopwords import BUILT_IN as BUILT_IN_STOPWORDS
from selfreflect.errors import ConfigError
from selfreflect.strategies import check_strategies
from selfreflect.workflow import command_rule

_source = ", ".join(map(str, workflow.config_settings.configfiles)) or DEFAULT_CONFIG
try:
    for _configfile in workflow.config_settings.configfiles:  # a repeated key is an error
        read_config_file(_configfile)  # (Snakemake's own reading keeps the last silently)
    config = validate_config(config, source=_source)
    check_strategies(config, _source)
    check_finetune(config, _source)
    check_model_paths(config, _source, built=paths.MODELS)
except ConfigError as err:
    sys.exit(f"error: {err}")

RUN = config["run"]


NAME_WILDCARD = NAME["pattern"].strip("^$")  # config names, already checked: a second wall


wildcard_constraints:
    dataset=NAME_WILDCARD,
    subject=NAME_WILDCARD,
    judge=NAME_WILDCARD,
    strategy=NAME_WILDCARD,
    shard=r"\d+",


RESOLVED_CONFIG = paths.RESOLVED_CONFIG.format(run=RUN)


onstart:  # not on a dry run: a dry run with another config must not touch a running run's file
    write_resolved_config(config, RESOLVED_CONFIG, _source)


LOGS = paths.LOGS.format(run=RUN)
BENCHMARKS = paths.BENCHMARKS.format(run=RUN)


def run_path(template):
    """An artifact path template of this run (other wildcards left open); shards are temporary."""
    path = paths.for_run(template, RUN)
    return temp(path) if template in paths.SHARDS else path


SHARDS = list(range(config["shards"]))


def command_rules():
    """Complete every rule running a `selfreflect` command (selfreflect.workflow.command_rule)."""
    for each in workflow.rules:
        command_rule(each, config, ENV, BENCHMARKS)


def models(*names):
    """Input function: the models among ``names`` (wildcard templates) that a rule of this
    workflow builds (under results/models/); hub and local models outside it are not inputs."""

    def built(wildcards):
        files = [config["models"][name.format(**wildcards)]["path"] for name in names]
        return sorted({path for path in files if path.startswith(f"{paths.MODELS}/")})

    return built


def dataset_files(wildcards):
    """A dataset's local questions file or folder (an input, so the rule sees it), not a hub id."""
    path = config["datasets"][wildcards.dataset]["path"]
    local = config["datasets"][wildcards.dataset]["source"] == "local"
    return [path] if path and (local or os.path.exists(path)) else []


def dataset_digest(wildcards):
    """Content hashes of a dataset's local files: reruns are triggered by params, not mtimes."""
    files = [Path(path) for path in dataset_files(wildcards)]
    files = [f for path in files for f in sorted(path.rglob("*") if path.is_dir() else [path])]
    return [file_digest(path) for path in files if path.is_file()]


def stopword_files(wildcards):
    """The word list scoring jobs read when ``scoring.stopwords`` names one (an input)."""
    policy = config["scoring"]["stopwords"]
    return [] if policy in BUILT_IN_STOPWORDS else [policy]


EVALUATED = evaluated_datasets(config)  # all datasets but the finetuning questions
SUMMARIZED = summarized_datasets(config)
STRATEGIES = config["summaries"]["strategies"]
EXPERIMENTS = dict(dataset=EVALUATED, subject=config["subjects"], judge=config["judges"])
SUMMARY_EXPERIMENTS = {**EXPERIMENTS, "dataset": SUMMARIZED}
SUMMARIES = dict(dataset=SUMMARIZED, subject=config["subjects"], strategy=STRATEGIES)
# Every rule's conda environment (--use-conda) has vLLM's CUDA build if a model takes a GPU.
ENV = "../envs/gpu.yaml" if model_gpus(config, *config["models"]) else "../envs/cpu.yaml"


CONVERTED = converted_models(config)  # GGUF models the convert_model rule builds


GPU_PARTITION = "gpu"  # the SLURM partition of jobs that take GPUs (workflow/profiles/slurm)


def model_resources(models):
    """Resources of a job loading the models ``models(wildcards)`` names: the GPUs they take
    (``gpu``, asked of SLURM as ``--gpus``) and, if any, the GPU partition. All other jobs
    (merges, tables, CPU-only models) go to the cluster's default partition."""
    return dict(
        gpu=lambda w: model_gpus(config, *models(w)),
        slurm_partition=lambda w: GPU_PARTITION if model_gpus(config, *models(w)) else None,
    )


def summary_models(wildcards):
    """The models a summary job loads: the subject (fresh answers) and the summariser."""
    return [wildcards.subject, config["summarizer"] or wildcards.subject]


def finetuned_adapter(wildcards):
    """The LoRA adapter a finetuned strategy's summaries run with (none for the others)."""
    method = FINETUNED.get(wildcards.strategy)
    adapter = rules.finetune_train.output.adapter
    return expand(adapter, subject=wildcards.subject, method=method) if method else []


def made_by_snakemake(path):
    """Whether Snakemake keeps a record (its metadata) of making ``path``."""
    return workflow.persistence.metadata(IOFile(path)) is not None


def targets_agreeing_with_dvc(wildcards):
    """Rule all's input: every target, once Snakemake agrees with the outputs DVC recorded
    (selfreflect.dvc_record). An input function runs while the DAG is built, before Snakemake
    plans, when it knows --forcerun and whether it is a dry run (which must change nothing: it
    dates no file); a forced run (`selfreflect dvc-yaml`'s DAG) reruns everything anyway."""
    if not workflow.dag_settings.forceall:
        try:
            align_with_dvc(
                config,
                _source,
                made_by_snakemake,
                forced=workflow.dag_settings.forcerun,
                dry_run=workflow.dryrun,
            )
        except ConfigError as err:
            sys.exit(f"error: {err}")
    return all_targets()


def all_targets():
    answers = expand(run_path(paths.ANSWERS), dataset=EVALUATED, subject=config["subjects"])
    summaries = expand(run_path(paths.SUMMARIES), **SUMMARIES)
    scores = expand(run_path(paths.SCORES), **SUMMARY_EXPERIMENTS, strategy=STRATEGIES)
    return answers + summaries + scores + report_targets()


# the judge pass of an experiment (scores.smk)
JUDGE_CACHE = paths.for_run(paths.JUDGE_CACHE, RUN)


def judged_strategies(wildcards):
    """The strategies an experiment's judge pass scores: the config's on the summarised
    datasets, the finetuning candidates on the training questions."""
    if wildcards.dataset in SUMMARIZED:
        return config["summaries"]["strategies"]
    if wildcards.dataset == config["finetune"]["dataset"]:
        return config["finetune"]["candidates"]
    return []


def judged_summaries(wildcards):
    strategies = judged_strategies(wildcards)
    return expand(rules.summarize.output[0], strategy=strategies, allow_missing=True)
