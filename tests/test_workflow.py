"""The smoke DAG end to end through real Snakemake and DVC subprocesses."""

import pandas as pd
import pytest

from selfreflect.artifacts import read_table
from tests.workflow_utils import copy_project, run, snakemake

pytestmark = pytest.mark.workflow

QUESTIONS = "results/smoke/smoke/questions.parquet"
ANSWERS = "results/smoke/smoke/tiny/answers.parquet"


def assert_full_answers(project):
    questions = read_table("questions", project / QUESTIONS)
    answers = read_table("answers", project / ANSWERS)
    assert len(questions) == 20
    assert list(answers["id"]) == list(questions["id"])
    assert answers["error"].isna().all()
    assert answers["test_answers"].map(len).eq(4).all()
    assert answers["conditioning_answers"].map(len).eq(4).all()


def test_snakemake_lint_is_clean(tmp_path):
    project = copy_project(tmp_path / "p")
    result = run(["snakemake", "--lint", "--configfile", "config/smoke.yaml"], project)
    assert "Congratulations" in result.stdout + result.stderr


def test_snakemake_runs_smoke_dag(smoke_run):
    assert_full_answers(smoke_run)
    assert not list((smoke_run / "results").rglob("shards/*")), "shards are temporary"
    again = snakemake(smoke_run, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_run_reports_its_time_memory_and_judge_work(smoke_run):
    """Every job's benchmark file, summed per rule after the run; the judge jobs record the
    tokens the judge computed."""
    tables = smoke_run / "reports/smoke/tables"
    performance = pd.read_csv(tables / "performance.csv").set_index("rule")
    jobs = len(list((smoke_run / "benchmarks").rglob("*.tsv")))  # the run's and the models'
    assert performance.loc["total", "jobs"] == jobs > 0
    assert {"answers_shard", "score_shard", "main_table", "controlled_scores"} <= set(
        performance.index
    )
    assert (performance["wall_s"] > 0).all()
    assert performance.loc["total", "wall_s"] == pytest.approx(
        performance["wall_s"].iloc[:-1].sum()
    )
    tokens = pd.read_csv(tables / "judge_tokens.csv").set_index("kind")["judge_forward_tokens"]
    assert tokens["scores"] > 0 and tokens["controlled_scores"] > 0
    assert tokens["total"] == tokens.drop("total").sum()
    assert (smoke_run / "reports/smoke/figures/performance.png").is_file()


def test_invalid_config_stops_snakemake_with_one_line(tmp_path):
    project = copy_project(tmp_path / "p")
    config = project / "config" / "smoke.yaml"
    config.write_text(config.read_text().replace("num_answers: 4", "num_answers: zero"))
    result = snakemake(project, "-n", check=False)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and result.stderr.splitlines()[-1] == errors[0]
    assert "config/smoke.yaml: answers.num_answers: 'zero' is not of type" in errors[0]


def test_dvc_repro_runs_smoke_dag(smoke_dvc_run):
    assert_full_answers(smoke_dvc_run)
    assert "up to date" in run(["dvc", "status"], smoke_dvc_run).stdout
    assert "Running stage" not in run(["dvc", "repro"], smoke_dvc_run).stdout
