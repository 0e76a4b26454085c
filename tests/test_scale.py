"""Everything after the judge, without a model: the synthetic artifacts of a run up to its judge
pass (selfreflect.bench.synthetic) in place, Snakemake plans only what follows the judge and runs
it (`selfreflect bench scale`, at a size CI affords; the paper's size is in docs/scale.md)."""

import json

import pytest

from tests.workflow_utils import copy_project, run

pytestmark = pytest.mark.workflow

AFTER_JUDGE = {
    "merge_judgements",
    "strategy_scores",
    "report_controlled_scores",
    "report_mc_scores",
    "report_convergence_scores",
    "report_main_table",
    "report_validation",
    "report_mc_study",
    "report_convergence",
    "report_cost_table",
    "report_human_agreement",
    "explorer",
}


def test_the_paper_configs_jobs_after_the_judge_run_on_synthetic_artifacts(tmp_path):
    project = copy_project(tmp_path / "p", config="config/config.yaml")
    command = ["selfreflect", "bench", "scale", "--questions", "100", "--answers", "10"]
    run([*command, "--json", "scale.json"], project)
    record = json.loads((project / "scale.json").read_text())
    assert record["questions"] == 100 and record["answers"] == 10
    assert record["strategies"] == 6 and record["pair_types"] == 5
    assert set(record["planned"]) == AFTER_JUDGE
    assert record["planned"]["strategy_scores"] == 6
    jobs = record["jobs"]
    assert len(jobs) == sum(record["planned"].values())
    assert all(job["wall_s"] > 0 and job["peak_rss_mib"] > 0 for job in jobs)
    assert set(record["outputs"]) == AFTER_JUDGE
    assert all(entry["files"] > 0 for entry in record["outputs"].values())
    judgements = [path for path in record["inputs"] if "/judgements/shards/" in path]
    assert len(judgements) == 2  # the summarised dataset's and MMLU's, one shard each
    # docs/scale.md is rendered from such a record
    from selfreflect.bench.scale_doc import markdown

    doc = markdown(record)
    peak = max(jobs, key=lambda job: job["peak_rss_mib"])
    assert f"**Peak memory: {peak['peak_rss_mib']} MiB ({peak['rule']})" in doc
    assert all(f"| {rule} " in doc for rule in AFTER_JUDGE)
