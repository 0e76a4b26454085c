"""Everything after the judge, without a model: the synthetic artifacts of a run up to its judge
pass (selfreflect.bench.synthetic) in place, Snakemake plans only what follows the judge and runs
it (`selfreflect bench scale`, at a size CI affords; the paper's size is in docs/scale.md)."""

import json

import pytest

from tests.conftest import tiny_model_spec
from tests.workflow_utils import REPO, copy_project, run

pytestmark = pytest.mark.workflow

# the jobs after the judge, and the answer clusters' (after the answers, on the model side)
PLANNED = {
    "answer_clusters",
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
    command = ["selfreflect", "bench", "scale", "--questions", "30", "--answers", "4"]
    run([*command, "--json", "scale.json", "--work", "kept"], project)
    record = json.loads((project / "scale.json").read_text())
    # the run's copy is kept where --work says, and never reused
    assert (project / "kept" / "project" / "scale.yaml").is_file()
    again = run([*command, "--work", "kept"], project, check=False)
    assert again.returncode != 0 and "kept: already exists" in again.stderr
    assert record["questions"] == 30 and record["answers"] == 4
    assert record["strategies"] == 6 and record["pair_types"] == 5
    assert set(record["planned"]) == PLANNED
    assert record["planned"]["strategy_scores"] == 6
    jobs = record["jobs"]
    assert len(jobs) == sum(record["planned"].values())
    assert all(job["wall_s"] > 0 and job["peak_rss_mib"] > 0 for job in jobs)
    assert set(record["outputs"]) == PLANNED
    assert all(entry["files"] > 0 for entry in record["outputs"].values())
    judgements = [path for path in record["inputs"] if "/judgements/shards/" in path]
    assert len(judgements) == 2  # the summarised dataset's and MMLU's, one shard each
    # docs/scale.md is rendered from such a record
    from selfreflect.docs.scale import run_text

    doc = run_text(record)
    peak = max(jobs, key=lambda job: job["peak_rss_mib"])
    assert f"**Peak memory: {peak['peak_rss_mib']} MiB ({peak['rule']})" in doc
    assert all(f"| {rule} " in doc for rule in PLANNED)


def test_the_judge_pass_tokens_of_a_run_are_read_from_its_judgements(smoke_run):
    """`selfreflect bench growth` reads a run's judge forward tokens from the merged judgements'
    shards (each judge job records the tokens its judge computed)."""
    from selfreflect.artifacts import read_metadata
    from selfreflect.bench.growth import judge_tokens

    tables = sorted((smoke_run / "results" / "smoke").glob("*/*/judgements/*.parquet"))
    assert len(tables) == 2  # the summarised dataset's and MMLU's
    shards = [shard for path in tables for shard in read_metadata(path)["shards"]]
    assert judge_tokens(smoke_run, "smoke") == sum(s["judge_forward_tokens"] for s in shards) > 0
    assert judge_tokens(smoke_run, "nosuch") == 0


def test_the_judge_work_per_question_grows_with_n_on_real_answers(tiny_model, monkeypatch):
    """The judge's work per question (no model runs): with more held-out and conditioning
    answers, more tasks, a longer reference context, and more FLOPs for both contexts; a
    summary's context is shorter than the reference's."""
    from selfreflect.bench.growth import judge_work

    monkeypatch.chdir(REPO)  # the example answers are read from tests/data
    work = judge_work(tiny_model_spec(tiny_model), (2, 4), batch_size=32)
    small, large = work["cases"]
    assert work["questions"] == 2 and small["answers"] == 2 and large["answers"] == 4
    assert 0 < small["tasks"] < large["tasks"]
    for context in ("reference", "summary"):
        assert 0 < small[context]["flops"] < large[context]["flops"]
    assert small["summary"]["tokens"] < small["reference"]["tokens"]
    assert large["reference"]["tokens"] - small["reference"]["tokens"] > (
        large["summary"]["tokens"] - small["summary"]["tokens"]
    )  # the reference context holds the conditioning answers


def test_docs_scale_md_is_rendered_from_its_records():
    run(["selfreflect", "docs", "scale", "--check"], REPO)


def test_the_judge_jobs_memory_is_measured_on_each_shard_size(tmp_path):
    """`selfreflect bench judge-memory` judges shard 0 of the paper config's summarised dataset
    at each size (here 1 and 2 of 2 questions, N = 3) on the tiny model: every strategy row,
    pair side and convergence cell of the shard's questions, their tasks, the job's peak."""
    command = ["selfreflect", "bench", "judge-memory", "--answers", "3"]
    sizes = ["--shard-questions", "1", "--shard-questions", "2"]
    run([*command, *sizes, "--json", str(tmp_path / "memory.json")], REPO)
    record = json.loads((tmp_path / "memory.json").read_text())
    assert (record["answers"], record["strategies"], record["pair_types"]) == (3, 6, 5)
    one, two = record["shards"]
    assert (one["shard_questions"], one["shards"]) == (1, 2)
    assert (two["shard_questions"], two["shards"]) == (2, 1)
    assert two["rows"] > one["rows"] > 0 and two["tasks"] > one["tasks"] > 0
    assert all(shard["peak_rss_mib"] > 100 and shard["seconds"] > 0 for shard in record["shards"])
    from selfreflect.docs.scale import judge_text

    assert "| 2 | " in judge_text(record) and "MiB per question" in judge_text(record)


def _record(questions: int, jobs: list[tuple[str, float, int]]) -> dict:
    """A scale record with one job per (rule, CPU seconds, peak MiB), each writing 1 MiB."""
    return {
        "questions": questions,
        "config": "config/config.yaml",
        "jobs": [{"rule": r, "wall_s": c, "cpu_s": c, "peak_rss_mib": m} for r, c, m in jobs],
        "outputs": {rule: {"files": 1, "mib": 1.0} for rule, _, _ in jobs},
    }


def test_ten_times_the_paper_is_read_beside_the_paper_size_per_rule():
    """Peak ratio, CPU per question and fixed CPU from the two sizes; the page names the jobs
    over 4 GiB and those whose peak grew more than the limit."""
    from selfreflect.docs.scale import growth_between, ten_times_text

    paper = _record(1000, [("explorer", 100.0, 1000), ("merge", 10.0, 3000)])
    larger = _record(10000, [("explorer", 1000.0, 1400), ("merge", 10.0, 4600)])
    rules = growth_between(paper, larger)
    assert rules.loc["explorer", "peak_ratio"] == 1.4
    assert rules.loc["explorer", "cpu_s_per_question"] == pytest.approx(0.1)
    assert rules.loc["explorer", "fixed_cpu_s"] == pytest.approx(0.0)
    assert rules.loc["merge", "cpu_s_per_question"] == 0 and rules.loc["merge", "fixed_cpu_s"] == 10
    assert list(rules.index) == ["merge", "explorer"]  # largest peak first
    larger |= {"date": "d", "cpus": 2, "cores": 2, "convergence_questions": 1}
    larger |= {"run_seconds": 1.0, "load_average": 1.0, "generate_seconds": 1.0}
    text = ten_times_text(paper, larger)
    assert "4,600 MiB (merge),\nover the 4 GiB" in text
    assert "Over 4 GiB: merge." in text and "more than 1.5× from 1,000 questions: merge." in text
