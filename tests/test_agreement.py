"""Judge backend agreement (report.agreement_backends): `report agreement-scores` scores the same
summaries with every backend on the tiny model, `report backend-agreement` compares them. The
hf and reference backends only (vLLM against them: tests/test_scoring_vllm.py)."""

from __future__ import annotations

import json
import subprocess

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.config import read_config_file
from tests.conftest import REPO


def run(*args, cwd=None):
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True, cwd=cwd)


ANSWERS = [  # id, question, test answers, conditioning answers: short, so the reference
    # backend (one forward per target token) takes seconds
    ("q1", "Question: What is the capital of France?", ["Paris is the capital", "Lyon"], ["Paris"]),
    ("q2", "Question: Who wrote Hamlet?", ["Shakespeare wrote it"], ["Shakespeare", "Marlowe"]),
    ("q3", "Question: Left out?", ["Yes"], ["No"]),  # beyond report.agreement_questions
]
SUMMARIES = {
    "greedy": ["Paris", "Shakespeare"],
    "basic": ["Mostly Paris, sometimes Lyon", "Shakespeare or Marlowe"],
}


@pytest.fixture(scope="module")
def experiment(tiny_model, tmp_path_factory):
    """A config scoring with hf and comparing reference on the first two of three questions'
    answers (hf listed again, as a user may: it scores once), and two strategies' summaries
    tables."""
    folder = tmp_path_factory.mktemp("agreement")
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["models"]["tiny"]["path"] = str(tiny_model)
    config["scoring"]["backend"] = "hf"
    config["report"].update(agreement_backends=["hf", "reference"], agreement_questions=2)
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    answers = pd.DataFrame(
        ANSWERS, columns=["id", "question", "test_answers", "conditioning_answers"]
    ).assign(backend="hf", model="tiny", seed=1, error=None)
    write_table("answers", answers, folder / "answers.parquet")
    files = []
    for strategy, texts in SUMMARIES.items():
        table = answers.iloc[:2][["id", "question"]].assign(
            dataset="d", subject="tiny", strategy=strategy, summary=texts, summarizer="tiny"
        )
        costs = dict(prompt_tokens=1, completion_tokens=1, seconds=0.0, error=None)
        write_table("summaries", table.assign(**costs), folder / f"{strategy}.parquet")
        files.append(str(folder / f"{strategy}.parquet"))
    return folder, files


def test_backends_score_the_same_summaries_alike(experiment):
    folder, files = experiment
    out = folder / "agreement.parquet"
    result = run(
        "report", "agreement-scores", "--config", str(folder / "config.yaml"),
        "--dataset", "d", "--subject", "tiny", "--judge", "tiny",
        "--answers", str(folder / "answers.parquet"), "--out", str(out), *files,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = read_table("agreement_scores", out)
    # one row per (question, strategy, backend), for the first two questions only
    expected = {(q, s, b) for q in ("q1", "q2") for s in SUMMARIES for b in ("hf", "reference")}
    assert len(table) == len(expected) == 8
    assert set(zip(table["id"], table["strategy"], table["backend"], strict=True)) == expected
    assert table["error"].isna().all() and (table["num_tasks"] > 0).all()
    assert set(table[["dataset", "subject", "judge"]].itertuples(index=False)) == {
        ("d", "tiny", "tiny")
    }
    wide = table.pivot(index=["id", "strategy"], columns="backend", values="score")
    assert wide["hf"].between(0, 1).all()
    assert (wide["hf"] - wide["reference"]).abs().max() < 1e-4, wide
    meta = read_metadata(out)
    assert meta["backends"] == ["hf", "reference"] and meta["judge_forward_tokens"] > 0

    tables, metrics = folder / "tables", folder / "metrics.json"
    result = run(
        "report", "backend-agreement", "--config", str(folder / "config.yaml"),
        "--out-dir", str(tables), "--metrics", str(metrics), str(out),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    agreement = pd.read_csv(tables / "backend_agreement.csv")
    assert agreement["backend"].tolist() == ["reference"]
    assert agreement["n_summaries"].tolist() == [4] and agreement["max_abs_diff"][0] < 1e-4
    assert "max_abs_diff" in (tables / "backend_agreement.md").read_text()
    assert set(json.loads(metrics.read_text())) == {"reference"}

    # the configured backend alone: a table that says why it is empty
    alone = folder / "alone.parquet"
    write_table("agreement_scores", table[table["backend"] == "hf"], alone)
    result = run(
        "report", "backend-agreement", "--config", str(folder / "config.yaml"),
        "--out-dir", str(tables), "--metrics", str(metrics), str(alone),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    skipped = pd.read_csv(tables / "backend_agreement.csv")["skipped"].tolist()
    assert skipped == ["no judge backend besides scoring.backend (hf) scored the summaries"]
    assert json.loads(metrics.read_text()) == {}
