"""The real-model configs: valid, and their DAGs convert SmolLM2 and run every report rule."""

import re

import pytest

from selfreflect.config import load_config
from selfreflect.snakemake_jobs import job_stats
from tests.workflow_utils import copy_project, job_commands, run

pytestmark = pytest.mark.workflow

# the rules whose jobs load a model: the LLMs, and MiniLM for the explorer's answer clusters
MODEL_RULES = {"answers", "summarize", "judge", "report_alt_metrics", "answer_clusters"}
REPORT_RULES = (
    "report_main_table",
    "report_validation",
    "report_mc_study",
    "report_convergence",
    "report_cost_table",
)


@pytest.mark.parametrize("name", ["laptop", "real", "science"])
def test_real_config_dag(tmp_path, name):
    project = copy_project(tmp_path / "p")
    config = load_config(project / "config" / f"{name}.yaml")
    args = ["snakemake", "--configfile", f"config/{name}.yaml", "--cores", "2", "-n"]
    counts = job_stats(run([*args, "--resources", "gpu=1"], project).stdout)

    strategies = len(config["summaries"]["strategies"])
    datasets, summarized = len(config["datasets"]), len(config["summaries"]["datasets"])
    assert "tiny_model" not in counts
    judges = len(config["judges"])
    assert counts["convert_model"] == len({*config["subjects"], *config["judges"]})
    assert counts["merge_answers"] == counts["questions"] == datasets
    assert counts["summarize"] == strategies * summarized
    assert counts["strategy_scores"] == strategies * summarized * judges
    assert counts["report_controlled_scores"] == counts["report_mc_scores"] == datasets * judges
    assert all(counts[rule] == 1 for rule in REPORT_RULES)


def test_the_paper_config_runs_every_study_of_the_paper(tmp_path):
    """`dvc repro` of config/config.yaml regenerates every table of the paper: the
    multiple-choice study scores a dataset of MMLU (before, it had none and was skipped)."""
    project = copy_project(tmp_path / "p", config="config/config.yaml")
    config = load_config(project / "config" / "config.yaml")
    mmlu = [name for name, spec in config["datasets"].items() if spec["source"] == "mmlu"]
    args = ["snakemake", "--configfile", "config/config.yaml", "--cores", "2", "-n"]
    plan = run([*args, "--resources", "gpu=1"], project).stdout
    counts = job_stats(plan)
    assert mmlu and all(counts[rule] == 1 for rule in REPORT_RULES)
    assert counts["report_convergence_scores"] == 1 and counts["report_human_agreement"] == 1
    studied = re.findall(r"output: results/paper/([^/]+)/\S+/studies/\S+/mc\.parquet", plan)
    assert set(mmlu) <= set(studied)
    # on a cluster, the jobs that load a model (on GPUs here) ask SLURM for them, in the GPU
    # partition, and hold as many on a machine with more (tests/test_gpus.py); no other job
    # does (tests/test_slurm.py submits one job of each model rule)
    jobs = job_commands(plan)
    assert {rule for rule, _, _ in jobs} == set(counts) | {"all"}
    for rule, resources, command in jobs:
        on_gpu = rule in MODEL_RULES
        assert ("gpu=1" in resources and "slurm_partition=gpu" in resources) == on_gpu, rule
        assert ("gpu=" in resources) == on_gpu, rule
        assert (" --gpus 1 " in command) == on_gpu, rule
