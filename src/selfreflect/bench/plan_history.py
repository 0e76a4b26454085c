"""When a science record's analysis plan was committed, and whether that was before its data.

A verdict is confirmatory when the plan that decides it was committed before the data it decides
on were produced. A record (``selfreflect bench science-record``) names the commits that
produced its run's answers (``data_commits``: each answer file's ``git_commit``, the first data
of a run) and ``plan_commit``: the oldest commit, strictly before those, since which the config
file has held the plan the run used, unchanged. :func:`plan_problems` checks a record against
the repository's history: the plan at ``plan_commit`` equals the recorded one, and that commit
is older than (an ancestor of, not equal to) every data commit.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from selfreflect.config import load_config
from selfreflect.errors import ConfigError, InputError


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=root, capture_output=True)


def clean(commit: str) -> str:
    """A provenance commit without its ``-dirty`` mark."""
    return commit.removesuffix("-dirty")


def plan_at(root: Path, commit: str, config: str) -> dict[str, Any] | None:
    """``report.plan`` of ``config`` (its path, ``config/<name>``) as ``commit`` of the checkout at
    ``root`` held it (read with its includes, today's defaults filled in); None where that
    commit has no such file or one that today's code cannot read."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = _git(root, "archive", commit, "config")
        unpacked = subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout)
        if archive.returncode != 0 or unpacked.returncode != 0:
            return None
        path = Path(tmp) / config
        if not path.is_file():
            return None
        try:
            return load_config(path)["report"]["plan"]
        except (ConfigError, InputError):
            return None


def plan_commit(root: Path, config: str, plan: dict[str, Any], data_commit: str) -> str | None:
    """The oldest commit before ``data_commit`` since which ``config`` has held ``plan``
    unchanged (the commits that changed ``config/``, walked back from ``data_commit``'s
    parent); None where the commit before the data held another plan."""
    listed = _git(root, "log", "--format=%H", f"{clean(data_commit)}^", "--", "config")
    found = None
    for commit in listed.stdout.decode().split() if listed.returncode == 0 else []:
        if plan_at(root, commit, config) != plan:
            break
        found = commit
    return found


def is_older(root: Path, commit: str, later: str) -> bool:
    """Whether ``commit`` is an ancestor of ``later`` and not ``later`` itself."""
    ancestor = _git(root, "merge-base", "--is-ancestor", commit, clean(later)).returncode == 0
    return (
        ancestor
        and _git(root, "rev-parse", commit).stdout != _git(root, "rev-parse", clean(later)).stdout
    )


def plan_problems(root: Path, record: dict[str, Any]) -> list[str]:
    """What does not hold of a record's ``plan_commit`` in the checkout at ``root``: one line
    each (none where the record names no plan commit: it is not confirmatory)."""
    commit = record.get("plan_commit")
    if commit is None:
        return []
    problems = []
    if plan_at(root, commit, record["config"]) != record["plan"]:
        problems.append(f"plan_commit {commit}: its {record['config']} holds another plan")
    problems += [
        f"plan_commit {commit}: not older than data commit {data}"
        for data in record.get("data_commits", [])
        if not is_older(root, commit, data)
    ]
    return problems
