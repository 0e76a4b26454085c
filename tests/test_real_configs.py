"""The real-model configs: valid, and their DAGs convert SmolLM2 and run every report rule."""

import pytest
import yaml

from selfreflect.config import validate_config
from tests.workflow_utils import copy_project, job_counts, run

pytestmark = pytest.mark.workflow

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
    config = validate_config(yaml.safe_load((project / "config" / f"{name}.yaml").read_text()))
    args = ["snakemake", "--configfile", f"config/{name}.yaml", "--cores", "2", "-n"]
    counts = job_counts(run([*args, "--resources", "gpu=1"], project).stdout)

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
