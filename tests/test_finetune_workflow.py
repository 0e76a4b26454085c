"""The finetuning stages run by Snakemake end to end on the tiny model (all on transformers):
SFT and DPO training data from the training questions' summaries and scores (the DPO candidates
scored by a preference judge of their own, which also rewards GRPO's sampled summaries against
the training questions' answers), a LoRA adapter per method and seed, the finetuned
strategies' summaries and scores; then a new learning rate reruns the training and what follows
it, as Snakemake's dry run and `dvc status` both say."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from selfreflect import paths
from selfreflect.artifacts import read_table
from selfreflect.config import load_config, read_config_file
from selfreflect.snakemake_jobs import job_stats
from tests.workflow_utils import copy_project, run

pytestmark = pytest.mark.workflow

CONFIG = "config/finetune-smoke.yaml"
# strategy -> the method and seed of its adapter (finetuned_sft: finetune.training.seed, 0)
METHODS = {
    "finetuned_sft": ("sft", 0),
    "finetuned_dpo-seed1": ("dpo", 1),
    "finetuned_grpo": ("grpo", 0),
}
TRAINING = {f"finetune_train-tiny-{method}-{seed}" for method, seed in METHODS.values()}
# finetune.judge and GRPO's reward judge: a tiny model of other weights (the same weights, named
# apart, would be the evaluation judge: refused)
PREFERENCES = "tiny-preferences"


def targets() -> list[str]:
    scores = [
        paths.for_run(paths.SCORES, "smoke").format(
            dataset="smoke", subject="tiny", judge="tiny", strategy=strategy
        )
        for strategy in METHODS
    ]
    log = paths.for_run(paths.TRAINING_LOG, "smoke")
    logs = [log.format(subject="tiny", method=m, seed=s) for m, s in METHODS.values()]
    return [*scores, *logs]


def snakemake(project, *args: str):
    command = ["snakemake", "--configfile", CONFIG, "--cores", "2", *args, *targets()]
    return run(command, project)


def write_config(project, learning_rate: float) -> None:
    config = read_config_file(project / "config/smoke.yaml")
    config["models"]["tiny"]["backend"] = "hf"  # no vLLM start-up per job
    config["summaries"]["strategies"] = ["greedy", *METHODS]
    config["models"][PREFERENCES] = {**config["models"]["tiny"], "path": f"models/{PREFERENCES}"}
    config["finetune"]["judge"] = PREFERENCES
    config["finetune"]["grpo"]["judge"] = PREFERENCES
    config["finetune"]["training"]["learning_rate"] = learning_rate
    (project / CONFIG).write_text(yaml.safe_dump(config))


@pytest.fixture(scope="module")
def finetuned(tmp_path_factory):
    project = tmp_path_factory.mktemp("finetune") / "project"
    copy_project(project)
    run(["selfreflect", "tiny-model", "--seed", "1", "--out", f"models/{PREFERENCES}"], project)
    write_config(project, 0.01)
    snakemake(project)
    return project


def test_both_methods_train_and_summarise_the_evaluated_questions(finetuned):
    evaluated = read_table(
        "questions", finetuned / paths.QUESTIONS.format(run="smoke", dataset="smoke")
    )
    for strategy, (method, seed) in METHODS.items():
        adapter = finetuned / paths.ADAPTER.format(
            run="smoke", subject="tiny", method=method, seed=seed
        )
        training = json.loads((adapter / "training.json").read_text())
        assert training["ids"] and set(training["ids"]).isdisjoint(evaluated["id"])
        assert (training["method"], training["training"]["seed"]) == (method, seed)
        trained = dict(run="smoke", subject="tiny", method=method, seed=seed)
        loss = (finetuned / paths.TRAINING_LOSS.format(**trained)).read_text().splitlines()
        assert loss[0].split("\t") == ["step", "loss"] and len(loss) > 1
        summaries = read_table("summaries", finetuned / paths.SUMMARIES.format(
            run="smoke", dataset="smoke", subject="tiny", strategy=strategy))  # fmt: skip
        assert summaries["error"].isna().all() and summaries["summary"].str.len().gt(0).all()
        if (
            method == "grpo"
        ):  # its reward per step, by the reward judge, and what it could not score
            log = finetuned / paths.TRAINING_LOG.format(**trained)
            metrics = json.loads((log / "metrics.json").read_text())
            assert -1 <= metrics["reward"] <= 0 and metrics["unscored"] == 0
            assert training["training"]["grpo"]["judge"] == PREFERENCES
        scores = read_table("scores", finetuned / targets()[list(METHODS).index(strategy)])
        assert scores["score"].notna().all()
    # the DPO candidates are judged by the preference judge alone, the evaluation by the other
    judgements = paths.for_run(paths.JUDGEMENTS, "smoke")
    training = dict(dataset="smoke_train", subject="tiny")
    assert (finetuned / judgements.format(**training, judge=PREFERENCES)).is_file()
    assert not (finetuned / judgements.format(**training, judge="tiny")).exists()


def test_the_run_is_recorded_and_its_page_shows_grpo_reward_cost_and_arms(finetuned):
    """``bench finetuning --no-run`` records a run that plain Snakemake made (no invocation
    measured: its jobs' times are its cost); the page renders it beside the shipped record,
    with GRPO's reward and cost per step and its test against the SFT adapter of its seed."""
    tables = ["report_main_table", "report_cost_table"]
    run(["snakemake", "--configfile", CONFIG, "--cores", "2", *tables], finetuned)
    run(["selfreflect", "bench", "finetuning", "--config", CONFIG, "--no-run"], finetuned)
    record = json.loads((finetuned / "docs/finetuning/smoke.json").read_text())
    assert "seconds" not in record["run"] and record["config_path"] == CONFIG
    (steps,) = record["rewards"].values()
    assert list(record["rewards"]) == ["grpo-seed0"] and steps
    assert all(-1 <= step["reward"] <= 0 and step["unscored"] == 0 for step in steps)
    assert all(step["step_time"] > 0 and step["reward_cpu_s_per_summary"] > 0 for step in steps)
    assert set(record["summary_words"]) == {"greedy", *METHODS}
    run(["selfreflect", "docs", "finetuning"], finetuned)
    run(["selfreflect", "docs", "finetuning", "--check"], finetuned)  # the tables recomputed
    scores = pd.read_parquet(finetuned / "docs/finetuning/smoke.scores.parquet")
    assert set(scores["strategy"]) == {"greedy", *METHODS}
    page = (finetuned / "docs/finetuning.md").read_text()
    assert page.index("## `config/finetune.yaml`") < page.index(f"## `{CONFIG}`: SFT, DPO and GRPO")
    assert f"| grpo-seed0 | {len(steps)} | " in page
    assert "| finetuned_grpo | finetuned_sft | " in page
    assert "no single invocation measured it" in page
    # what this run can show: one seed per method, training questions of their own (no split),
    # no reference among its strategies
    section = page[page.index(f"## `{CONFIG}`") :]
    assert "- **Seeds.** One seed per method:" in section
    assert "Split by question" not in section and "held-out templates" not in section.lower()
    assert "each reference" not in section
    assert (finetuned / "docs/finetuning/smoke.png").read_bytes()[:4] == b"\x89PNG"


def test_a_new_learning_rate_reruns_the_training_and_what_follows_only(finetuned):
    run(["selfreflect", "dvc-yaml", "--config", CONFIG, "--project", "."], finetuned)
    run(["dvc", "commit", "-f", "-q", *sorted(TRAINING)], finetuned)
    assert "up to date" in run(["dvc", "status", *sorted(TRAINING)], finetuned).stdout
    write_config(finetuned, 0.02)
    run(["selfreflect", "dvc-yaml", "--config", CONFIG, "--project", "."], finetuned)
    status = run(["dvc", "status", *sorted(TRAINING)], finetuned).stdout
    assert "finetune.training" in status and all(s in status for s in TRAINING), status
    counts = job_stats(snakemake(finetuned, "-n").stdout)
    assert counts == {
        "finetune_train": 3,
        "summarize": 3,
        "judge": load_config(finetuned / CONFIG)["shards"],  # cached: only theirs
        "merge_judgements": 1,
        "strategy_scores": 3,
    }
