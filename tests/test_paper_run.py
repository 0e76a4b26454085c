"""The paper's whole run predicted per rule (docs/paper_run.json, `selfreflect bench
paper-run`): its rules are exactly the paper config's DAG's, and docs/paper_run.md is what the
JSON renders."""

import json

import pytest

from tests.workflow_utils import REPO, copy_project, job_resources, run

pytestmark = pytest.mark.workflow

RECORD = REPO / "docs" / "paper_run.json"


@pytest.mark.parametrize("gpus", [1, 8])
def test_the_prediction_counts_every_rule_and_job_of_the_paper_dag(tmp_path, gpus):
    """A rule added to the workflow, or a sharding change, without a new prediction fails."""
    from selfreflect.bench.scale import planned

    record = json.loads(RECORD.read_text())
    project = copy_project(tmp_path / "p", config="config/config.yaml")
    dag = planned(project, record["config"], gpus)
    predicted = {rule: entry["jobs"][str(gpus)] for rule, entry in record["rules"].items()}
    assert predicted == dag
    assert record["not_included"] == []


def test_the_rules_predicted_on_a_gpu_are_those_that_take_one(tmp_path):
    """A rule is costed on the GPU exactly where the paper config's DAG gives its jobs a GPU
    (``answer_clusters`` embeds on the GPU its job takes)."""
    from selfreflect.bench.scale import snakemake

    record = json.loads(RECORD.read_text())
    project = copy_project(tmp_path / "p", config="config/config.yaml")
    plan = snakemake(project, "-n", "--forceall", config=record["config"])
    on_gpu = {rule for rule, resources in job_resources(plan) if "gpu=1" in resources.split(", ")}
    assert {rule for rule, entry in record["rules"].items() if entry["kind"] == "gpu"} == on_gpu
    assert "answer_clusters" in on_gpu


def test_every_figure_of_the_prediction_is_bounded():
    record = json.loads(RECORD.read_text())
    bounds = [entry["seconds"][str(g)] for entry in record["rules"].values() for g in (1, 8)]
    bounds += list(record["totals"].values())
    assert all(0 < b["low"] <= b["estimate"] <= b["high"] for b in bounds)
    assert record["totals"]["8"]["estimate"] < record["totals"]["1"]["estimate"]


def test_docs_paper_run_md_and_the_readme_line_are_rendered_from_its_record():
    run(["selfreflect", "docs", "paper-run", "--check"], REPO)


def test_the_judge_rate_is_of_runs_cut_as_the_config_cuts():
    """The prediction's judge FLOP/s come from recorded GPU runs that cut forwards as the config
    does and run them as the judge does, never from eager attention's or a compiled decoder's;
    ``auto`` is the budget the judge derives on an H100, larger than the paper's 32 masked words
    of about 40 tokens, and no more than its memory allows."""
    from selfreflect.bench.paper_run import judge_budget, judge_throughput, same_cut
    from selfreflect.bench.scorer import cut
    from selfreflect.config import load_config

    def run(**settings) -> tuple:
        return cut({"settings": {"batch_size": 32, **settings}})

    batch, auto = (
        {"batch_size": 32, "token_budget": None},
        {"batch_size": 32, "token_budget": "auto"},
    )
    assert same_cut(run(), batch)
    assert not same_cut(run(attention="eager"), batch)
    assert not same_cut(run(batch_size=128), batch)
    assert same_cut(run(token_budget=5005, token_budget_from="auto"), auto)
    assert not same_cut(run(token_budget=5005), auto)
    assert not same_cut(run(token_budget=5005, token_budget_from="auto", compiled=True), auto)
    assert "batch size 32," in judge_throughput(batch, 50)[1]
    rate, source = judge_throughput(auto, 50)
    assert "(auto)" in source and rate.low <= rate.estimate <= rate.high
    assert judge_budget(batch) is None and 32 * 40 < judge_budget(auto) < 10_000
    scoring = load_config(REPO / "config" / "config.yaml")["scoring"]
    record = json.loads(RECORD.read_text())
    assert record["sizes"]["tokens_per_forward"] == judge_budget(scoring)


def test_how_full_the_judge_forwards_are():
    """Each context packed to the token: every forward full but its last; the record holds the
    share for every context kind where the config cuts by a token budget."""
    from selfreflect.bench.paper_run import forward_fill

    assert forward_fill([10, 25], 10) == 35 / 40  # forwards of 10, then 10 + 10 + 5
    assert forward_fill([20], 10) == 1.0
    record = json.loads(RECORD.read_text())
    assert record["sizes"]["token_budget"] == "auto"
    rules = record["rules"]
    for entry in {**rules["judge"]["work"], **rules["report_alt_metrics"]["work"]}.values():
        assert 0 < entry["forward_fill"]["low"] <= entry["forward_fill"]["high"] <= 1
