"""``selfreflect bench judge-batching``: a run's judge pass with its forwards cut by masked words
and by tokens, timed side by side, on a finished smoke run (the tiny judge; its first four
questions)."""

import json

import pytest

from tests.workflow_utils import copy_project, run

pytestmark = pytest.mark.workflow


def test_a_judge_pass_batched_by_tokens_gives_the_same_scores(smoke_run, tmp_path):
    out = tmp_path / "batching.json"
    command = ["selfreflect", "bench", "judge-batching", "--config", "config/smoke.yaml"]
    budgets = ["--budget", "256", "--budget", "1000000", "--repeats", "1", "--compile"]
    printed = run([*command, *budgets, "--questions", "4", "--json", str(out)], smoke_run).stdout
    record = json.loads(out.read_text())
    assert record["questions"] == 4 and record["repeats"] == 1
    words, small, whole, compiled = record["settings"]
    assert [row["setting"] for row in record["settings"]] == [
        "batch_size", "token_budget", "token_budget", "batch_size"
    ]  # fmt: skip
    assert (small["value"], whole["value"], compiled["value"]) == (256, 1000000, words["value"])
    assert [row["compiled"] for row in record["settings"]] == [False, False, False, True]
    for row in record["settings"]:  # compiled or not, the same scores
        assert row["scores"] > 0 and row["max_score_difference"] < 1e-5
        assert row["cpu_s"] > 0 and row["cpu_s_range"][0] <= row["cpu_s"]
        assert row["first_pass"]["cpu_s"] > 0
    # one forward per context holds each context's whole tree: the fewest tokens and forwards
    assert small["forwards"] > whole["forwards"] and whole["tokens"] <= words["tokens"]
    assert "token_budget 256: first pass" in printed and "x of batch_size" in printed
    assert f"batch_size {words['value']} (compiled): first pass" in printed


def test_a_run_without_its_summaries_is_named(tmp_path):
    project = copy_project(tmp_path / "p")
    command = ["selfreflect", "bench", "judge-batching", "--config", "config/smoke.yaml"]
    failed = run([*command, "--budget", "64"], project, check=False)
    assert failed.returncode != 0
    assert "questions.parquet: not found" in failed.stderr and "dvc pull" in failed.stderr
