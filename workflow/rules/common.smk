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
from selfreflect.cli import find_command
from selfreflect.code_deps import code_digest, command_deps, plugin_files, prompt_texts
from selfreflect.workflow import setting_values

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
    """Complete each rule running `selfreflect COMMAND …` (its shell line, the one place that
    names the command) with what the command declares and runs (selfreflect.code_deps): its
    code files as inputs, ancient (their content hash, a param, reruns a job whose code
    changed), with the plug-in modules of a job's strategy; the settings and prompt texts a
    job reads as params (Snakemake reruns a job when one changes; `selfreflect dvc-yaml`
    makes them its DVC stage's params); the resolved config; a benchmark file per job, where
    `selfreflect report performance` sums wall time and memory per rule; the environment."""
    for each in workflow.rules:
        words = (each.shellcmd or "").split()
        if words[:1] == ["selfreflect"]:
            runs(each, command_deps(" ".join(find_command(words[1:])[1])))


def runs(job_rule, deps):
    def files(w):
        plugin = deps.plugin and config["summaries"]["plugins"].get(w.strategy)
        return sorted({*deps.files, *(plugin_files(plugin) if plugin else ())})

    job_rule.set_input(code=lambda w: ancient(files(w)))
    job_rule.set_params(
        config=RESOLVED_CONFIG,
        code=lambda w: code_digest(files(w)),
        settings=lambda w: setting_values(config, deps.setting_keys(dict(w.items()), config)),
        prompts=lambda w: prompt_texts(deps.prompts(dict(w.items()))),
    )
    output = str(job_rule.output[0])
    names = sorted(job_rule.wildcard_names, key=lambda name: output.index(f"{{{name}"))
    job = "/".join(f"{{{name}}}" for name in names)
    root = paths.MODEL_BENCHMARKS if output.startswith(paths.MODELS) else BENCHMARKS
    job_rule.benchmark_modifier = job_rule.output_modifier  # as a benchmark: directive's
    job_rule.benchmark = f"{root}/{job_rule.name}/{job}.tsv" if job else f"{root}/{job_rule.name}.tsv"
    job_rule.conda_env = ENV


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
# Every rule's conda environment (--use-conda) has vLLM's CUDA build if a model takes a GPU.
ENV = "../envs/gpu.yaml" if model_gpus(config, *config["models"]) else "../envs/cpu.yaml"


def gpus(*names):
    """GPUs a job holding the models ``names`` takes (0 for models that run on the CPU)."""
    return model_gpus(config, *names)


CONVERTED = converted_models(config)  # GGUF models the convert_model rule builds


GPU_PARTITION = "gpu"  # the SLURM partition of jobs that take GPUs (workflow/profiles/slurm)


def model_resources(models):
    """Resources of a job loading the models ``models(wildcards)`` names: the GPUs they take
    (``gpu``, asked of SLURM as ``--gpus``) and, if any, the GPU partition. All other jobs
    (merges, tables, CPU-only models) go to the cluster's default partition."""
    return dict(
        gpu=lambda w: gpus(*models(w)),
        slurm_partition=lambda w: GPU_PARTITION if gpus(*models(w)) else None,
    )


def summary_models(wildcards):
    """The models a summary job loads: the subject (fresh answers) and the summariser."""
    return [wildcards.subject, config["summarizer"] or wildcards.subject]


def finetuned_adapter(wildcards):
    """The LoRA adapter a finetuned strategy's summaries run with (none for the others)."""
    method = FINETUNED.get(wildcards.strategy)
    subject = wildcards.subject
    return expand(rules.finetune_train.output.adapter, subject=subject, method=method) if method else []


def made_by_snakemake(path):
    """Whether Snakemake keeps a record (its metadata) of making ``path``."""
    return workflow.persistence.metadata(IOFile(path)) is not None


def targets_agreeing_with_dvc(wildcards):
    """Rule all's input: every target, once Snakemake agrees with the outputs DVC recorded
    (selfreflect.dvc_record). An input function runs while the DAG is built, when Snakemake
    knows --forcerun; a forced run (`selfreflect dvc-yaml`'s DAG) reruns everything anyway."""
    if not workflow.dag_settings.forceall:
        try:
            align_with_dvc(
                config, _source, made_by_snakemake, forced=workflow.dag_settings.forcerun
            )
        except ConfigError as err:
            sys.exit(f"error: {err}")
    return all_targets()


def all_targets():
    return (
        expand(run_path(paths.ANSWERS), dataset=EVALUATED, subject=config["subjects"])
        + expand(
            run_path(paths.SUMMARIES),
            dataset=SUMMARIZED,
            subject=config["subjects"],
            strategy=config["summaries"]["strategies"],
        )
        + expand(
            run_path(paths.SCORES),
            dataset=SUMMARIZED,
            subject=config["subjects"],
            judge=config["judges"],
            strategy=config["summaries"]["strategies"],
        )
        + report_targets()
    )


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
    return expand(
        rules.summarize.output[0],
        strategy=judged_strategies(wildcards),
        allow_missing=True,
    )
