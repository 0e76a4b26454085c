"""Where every artifact lives. Snakemake uses these templates as wildcard patterns;
``dvc.yaml`` spells the same paths (a test keeps the two in step)."""

from __future__ import annotations

import re

SNAKEFILE = "workflow/Snakefile"  # the workflow (Snakemake finds it there from the root)
DEFAULT_CONFIG = "config/config.yaml"  # the paper run: what the workflow runs without a config
MODELS = "results/models"  # models the workflow builds; other model paths are not inputs
TINY_MODEL = f"{MODELS}/tiny"
CONVERTED_MODEL = f"{MODELS}/{{model}}"  # a GGUF model, dequantised (model_sources.py)
# the DVC project of a run of any config but the paper's (whose project is the repository root):
# dvc.yaml, params.yaml, dvc.lock, with links to the root's folders, so its stages spell the
# root's paths (selfreflect.dvc_project)
DVC_PROJECT = "dvc/{run}"
DVC_PROJECT_LINKS = (
    "benchmarks",
    "config",
    "data",
    "logs",
    "reports",
    "results",
    "src",
    "workflow",
)
RESOLVED_CONFIG = "logs/{run}/config.yaml"  # what Snakemake ran with; not an artifact
RESULTS = "results/{run}"  # every artifact of a run
QUESTIONS = "results/{run}/{dataset}/questions.parquet"
ANSWERS = "results/{run}/{dataset}/{subject}/answers.parquet"
ANSWERS_SHARD = "results/{run}/{dataset}/{subject}/shards/answers-{shard}.parquet"
# the conditioning answers of each question clustered by meaning (summaries.cluster), for the
# explorer: embedded where the model jobs run
ANSWER_CLUSTERS = "results/{run}/{dataset}/{subject}/answer_clusters.parquet"
SUMMARIES = "results/{run}/{dataset}/{subject}/summaries/{strategy}.parquet"
SCORES = "results/{run}/{dataset}/{subject}/scores/{judge}/{strategy}.parquet"
# everything an experiment judges, in one pass per question (selfreflect.scoring.experiment),
# merged from shards; the score files and the studies' tables are read off it (beside
# scores/{judge}/, which holds one file per strategy)
JUDGEMENTS = "results/{run}/{dataset}/{subject}/judgements/{judge}.parquet"
JUDGEMENTS_SHARD = "results/{run}/{dataset}/{subject}/judgements/shards/{judge}-{shard}.parquet"
# the judge's content-addressed results (selfreflect.scoring.cache): not an artifact
JUDGE_CACHE = "results/{run}/.judge_cache"
EXPLORER = "results/{run}/explorer"  # index.html and every question's answers, summaries, scores
LOGS = "logs/{run}"
# Snakemake's benchmark file of every job (wall time, peak memory): benchmarks/{run}/<rule>/...
BENCHMARKS = "benchmarks/{run}"
MODEL_BENCHMARKS = "benchmarks/models"  # the model-building jobs, shared by the runs
MODEL_LOGS = "logs/models"  # their logs (a run's jobs log under LOGS, as <rule>/<wildcards>.log)
# finetuned summarisers, per subject and method (sft, dpo): training data, LoRA adapter folder
# (with the training question ids), and the trainer's log (DVCLive's folder: the loss per step
# in its LOSS file, columns step and loss)
FINETUNE_DATA = "results/{run}/finetune/{subject}/{method}/data.parquet"
ADAPTER = "results/{run}/finetune/{subject}/{method}/seed{seed}/adapter"
TRAINING_LOG = "reports/{run}/finetune/{subject}/{method}/seed{seed}/dvclive"
LOSS = "plots/metrics/loss.tsv"
TRAINING_LOSS = f"{TRAINING_LOG}/{LOSS}"
# report: per-experiment study scores, then run-wide tables ({name}.csv/.md/.tex), figures
# ({name}.png/.pdf) and DVC metrics, outside results/{run} (DVC's report stages depend on it)
CONTROLLED = "results/{run}/{dataset}/{subject}/studies/{judge}/controlled.parquet"
ALT_METRICS = "results/{run}/{dataset}/{subject}/studies/{judge}/alt_metrics.parquet"
MC = "results/{run}/{dataset}/{subject}/studies/{judge}/mc.parquet"
CONVERGENCE = "results/{run}/{dataset}/{subject}/studies/{judge}/convergence.parquet"
# the first questions' summaries scored again with each judge backend (report.agreement_backends)
AGREEMENT = "results/{run}/{dataset}/{subject}/studies/{judge}/agreement.parquet"
TABLES = "reports/{run}/tables"
FIGURES = "reports/{run}/figures"
REPORT_METRICS = "reports/{run}/metrics/{name}.json"
# the files of one table and of one figure; the first is the one the Snakemake report shows
TABLE_FORMATS = ("csv", "md", "tex")
FIGURE_FORMATS = ("png", "pdf")
# temporary parts, each merged by the job that reads them (Snakemake deletes them after it)
SHARDS = (ANSWERS_SHARD, JUDGEMENTS_SHARD)
# what DVC shows: metrics files, plots (figures) and model artifacts (the LoRA adapters)
DVC_METRICS = (REPORT_METRICS,)
DVC_PLOTS = (f"{FIGURES}/{{name}}.png",)
DVC_MODELS = (ADAPTER,)


def matches(path: str, templates: tuple[str, ...]) -> bool:
    """Whether ``path`` is an instance of one of ``templates`` (a wildcard stands for 1+ chars)."""
    return any(re.fullmatch(re.sub(r"\\{\w+\\}", ".+", re.escape(t)), path) for t in templates)


def for_run(template: str, run: str) -> str:
    """Fix the ``{run}`` part of a template, leaving the other wildcards in place."""
    return template.replace("{run}", run)
