# Config validation and the small helpers rules use to find their inputs and parameters.
import sys

from selfreflect import paths
from selfreflect.config import (
    model_gpus,
    summarized_datasets,
    validate_config,
    write_resolved_config,
)
from selfreflect.fileio import file_digest
from selfreflect.errors import ConfigError
from selfreflect.strategies import check_strategies, strategy_settings

_source = ", ".join(map(str, workflow.config_settings.configfiles)) or "config"
try:
    config = validate_config(config, source=_source)
    check_strategies(config, _source)
except ConfigError as err:
    sys.exit(f"error: {err}")

RUN = config["run"]


wildcard_constraints:
    dataset=r"[^/]+",
    subject=r"[^/]+",
    judge=r"[^/]+",
    strategy=r"[A-Za-z0-9_.-]+",
    shard=r"\d+",

RESOLVED_CONFIG = write_resolved_config(config, paths.RESOLVED_CONFIG.format(run=RUN))
LOGS = paths.LOGS.format(run=RUN)
ENV = "../../environment.yml"


def run_path(template):
    """An artifact path template of this run (other wildcards left open)."""
    return paths.for_run(template, RUN)


SHARDS = list(range(config["shards"]))


def dataset_files(wildcards):
    """The local questions file of a dataset (an input, so the rule sees it)."""
    spec = config["datasets"][wildcards.dataset]
    return [spec["path"]] if spec["source"] == "local" else []


def dataset_digest(wildcards):
    """Content hash of a local questions file: reruns are triggered by params, not mtimes."""
    return [file_digest(path) for path in dataset_files(wildcards)]


SUMMARIZED = summarized_datasets(config)


def gpus(*models):
    """GPUs a job holding ``models`` takes (0 for models that run on the CPU)."""
    return model_gpus(config, *models)


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


def all_targets():
    return expand(
        run_path(paths.ANSWERS), dataset=config["datasets"], subject=config["subjects"]
    ) + expand(
        run_path(paths.SUMMARIES),
        dataset=SUMMARIZED,
        subject=config["subjects"],
        strategy=config["summaries"]["strategies"],
    ) + expand(
        [run_path(paths.SCORES), run_path(paths.METRICS)],
        dataset=SUMMARIZED,
        subject=config["subjects"],
        judge=config["judges"],
        strategy=config["summaries"]["strategies"],
    ) + report_targets()
