"""When a science record's plan was committed (selfreflect.bench.plan_history): found in the
config's history, checked against the repository, and for the shipped records older than
their data."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from selfreflect.bench.plan_history import plan_commit, plan_problems
from selfreflect.config import load_config
from tests.conftest import REPO

CONFIG = "config/smoke.yaml"


def commit(root: Path, message: str) -> str:
    """Commit everything in ``root``; its hash."""
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    author = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *author, "commit", "-qm", message], cwd=root, check=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.strip()


def set_level(root: Path, level: float) -> None:
    """The smoke config with its plan's level set to ``level``."""
    text = (REPO / CONFIG).read_text(encoding="utf-8")
    (root / CONFIG).write_text(f"{text}\nreport:\n  plan:\n    level: {level}\n", encoding="utf-8")


@pytest.fixture
def history(tmp_path) -> tuple[Path, dict[str, str]]:
    """A checkout whose smoke config got its plan (level 0.01) in commit ``plan``, then another
    commit (``data``: the code that produced a run's answers), then a plan change (``later``)."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "config", root / "config")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    commits = {"before": commit(root, "the smoke config")}
    set_level(root, 0.01)
    commits["plan"] = commit(root, "the plan")
    (root / "config" / "other.yaml").write_text("run: other\n", encoding="utf-8")
    commits["other config"] = commit(root, "another config")
    (root / "code.py").write_text("print()\n", encoding="utf-8")
    commits["data"] = commit(root, "the code the data came from")
    set_level(root, 0.02)
    commits["later"] = commit(root, "the plan changed after the data")
    return root, commits


def plan(root: Path, at: str) -> dict:
    subprocess.run(["git", "checkout", "-q", at, "--", "config"], cwd=root, check=True)
    return load_config(root / CONFIG)["report"]["plan"]


def test_the_plan_commit_is_the_oldest_holding_the_plan_before_the_data(history):
    root, commits = history
    used = plan(root, commits["plan"])
    assert used["level"] == 0.01
    assert plan_commit(root, CONFIG, used, commits["data"]) == commits["plan"]
    assert plan_commit(root, CONFIG, used, commits["data"] + "-dirty") == commits["plan"]
    record = {"config": CONFIG, "plan": used, "data_commits": [commits["data"]]}
    assert plan_problems(root, {**record, "plan_commit": commits["plan"]}) == []


def test_a_plan_changed_after_the_data_has_no_plan_commit(history):
    root, commits = history
    changed = plan(root, commits["later"])
    assert plan_commit(root, CONFIG, changed, commits["data"]) is None
    # the data commit itself holds the plan, but it is not older than the data
    assert plan_commit(root, CONFIG, plan(root, commits["plan"]), commits["plan"]) is None


def test_a_record_whose_plan_commit_does_not_hold_is_named(history):
    root, commits = history
    used = plan(root, commits["plan"])
    record = {"config": CONFIG, "plan": used, "data_commits": [commits["data"]]}
    later = plan_problems(root, {**record, "plan_commit": commits["later"]})
    assert later == [
        f"plan_commit {commits['later']}: its {CONFIG} holds another plan",
        f"plan_commit {commits['later']}: not older than data commit {commits['data']}",
    ]
    same = plan_problems(root, {**record, "plan_commit": commits["data"]})
    assert same == [f"plan_commit {commits['data']}: not older than data commit {commits['data']}"]
    assert plan_problems(root, {**record, "plan_commit": None}) == []


def test_every_shipped_records_plan_was_committed_before_its_data():
    """Each record naming a plan commit: the plan at that commit of this repository is the
    recorded one, and the commit is older than every commit its run's answers came from."""
    records = sorted(REPO.glob("docs/science*/*/record.json"))
    assert records
    for path in records:
        record = json.loads(path.read_text(encoding="utf-8"))
        assert plan_problems(REPO, record) == [], path
