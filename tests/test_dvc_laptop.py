"""DVC right after the Quick start, from fresh clones: the laptop run's own DVC project
(dvc/laptop/) shows the run with DVC's plain commands and leaves every tracked file as it was, and
the answer sets and summaries it ships (the folder remote data/dvc-remote/) leave the Quick start
no sampling or summary job after `dvc pull` and the one step the docs give. One test runs the
laptop run's judge and reports (minutes)."""

import json
from pathlib import Path

import pytest
import yaml

from selfreflect import paths
from selfreflect.snakemake_jobs import job_stats
from selfreflect.workflow import expanded, rule_of
from tests.conftest import REPO
from tests.workflow_utils import fresh_clone, run

pytestmark = pytest.mark.workflow

LAPTOP = "config/laptop.yaml"
PROJECT = paths.DVC_PROJECT.format(run="laptop")
SHIPPED = ("questions", "merge_answers", "summarize")  # the rules whose outputs the remote holds
QUICK_START = ["snakemake", "--configfile", LAPTOP, "--cores", "2", "--resources", "gpu=1"]


def shipped_outs(lock_file: Path) -> dict[str, str]:
    """``{path: md5}`` of the outputs of the shipped rules' stages in a DVC lock file."""
    lock = yaml.safe_load(lock_file.read_text())["stages"]
    return {
        out["path"]: out["md5"]
        for name, stage in lock.items()
        if rule_of(name) in SHIPPED
        for out in stage["outs"]
    }


def test_the_laptop_project_is_up_to_date_with_the_rules():
    """CI fails when a rule or config/laptop.yaml changed without regenerating dvc/laptop/."""
    run(["selfreflect", "dvc-yaml", "--config", LAPTOP, "--check"], REPO)


def changes_beyond_the_data(status: dict) -> list[str]:
    """What `dvc status --json` reports beside outputs and data a fresh clone does not have yet
    (deleted, not in cache): a code file or setting that changed, a changed command."""
    changes = []
    for stage, entries in status.items():
        for entry in entries:
            if isinstance(entry, str):  # "changed command", "always changed"
                changes.append(f"{stage}: {entry}")
                continue
            for dep, state in entry.get("changed deps", {}).items():
                states = state if isinstance(state, dict) else {"": state}  # params: per key
                changed = {key: s for key, s in states.items() if s != "deleted"}
                changes += [f"{stage}: {dep} {key} {s}" for key, s in changed.items()]
    return changes


def test_the_shipped_answer_sets_were_made_by_todays_code_and_settings(tmp_path):
    """CI fails when code or a setting the shipped stages depend on changed since they were
    recorded (they would be sampled again after a pull): re-record them as
    docs/answer-sets.md says. Checked in a fresh clone, where the data are not pulled yet."""
    project = fresh_clone(tmp_path / "clone") / PROJECT
    lock = yaml.safe_load((project / "dvc.lock").read_text())["stages"]
    shipped = [name for name in lock if rule_of(name) in SHIPPED]
    status = json.loads(run(["dvc", "status", "--json", *shipped], project).stdout)
    assert set(status) == set(shipped)  # nothing pulled: every stage lists its outputs
    assert not changes_beyond_the_data(status)


def test_pulled_answer_sets_leave_the_quick_start_the_judge_and_dvc_shows_the_run(tmp_path):
    """The Quick start after `dvc pull` (docs/answer-sets.md): the pulled answer sets and
    summaries leave it no sampling or summary job; after it, DVC's plain commands show the run
    in dvc/laptop/ (the one line beside the Quick start) and git sees no changed tracked file.
    One test, so that the laptop run's judge and reports run once in the suite."""
    clone = fresh_clone(tmp_path / "clone")
    project = clone / PROJECT
    shipped = shipped_outs(project / "dvc.lock")
    model = paths.CONVERTED_MODEL.format(model="smollm2")  # not shipped: built from its package
    run([*QUICK_START[:5], model], clone)
    lock = yaml.safe_load((project / "dvc.lock").read_text())["stages"]
    run(["dvc", "pull", *(name for name in lock if rule_of(name) in SHIPPED)], project)
    assert all((clone / path).is_file() for path in shipped), shipped
    run(["selfreflect", "dvc-sync", "--config", LAPTOP], clone)  # the pull wrote in any order
    planned = run([*QUICK_START, "-n"], clone)
    jobs = job_stats(planned.stdout)
    assert not {"questions", "answers", "merge_answers", "summarize"} & set(jobs), jobs
    assert "judge" in jobs and "dvc-sync" not in planned.stderr  # the rest is still to run

    run(QUICK_START, clone)
    stages = set(expanded(yaml.safe_load((project / "dvc.yaml").read_text())["stages"]))
    status = run(["dvc", "status"], project).stdout  # the run against the shipped record
    listed = {line[:-1] for line in status.splitlines() if line.endswith(":") and line[0] != "\t"}
    assert listed <= stages and (listed or "up to date" in status), status  # no paper stage
    assert not {rule_of(name) for name in listed} & set(SHIPPED), status  # the pulled, as run
    metrics = run(["dvc", "metrics", "show"], project).stdout
    assert "reports/laptop/metrics/main/greedy.json" in metrics, metrics
    plots = run(["dvc", "plots", "show"], project).stdout
    assert (project / "dvc_plots" / "index.html").is_file(), plots
    dry = run(["dvc", "repro", "--dry"], project).stdout
    ran = {line.split("'")[1] for line in dry.splitlines() if line.startswith("Running stage")}
    assert ran <= stages, ran - stages
    tracked = run(["git", "status", "--porcelain", "--untracked-files=no"], clone).stdout
    assert tracked == "", tracked


def test_the_remote_holds_exactly_the_shipped_outputs():
    """What data/dvc-remote/ holds is the laptop lock's questions, answer sets and summaries,
    each once: not the model (540 MB, rebuilt from its package), nothing stale."""
    remote = REPO / "data" / "dvc-remote" / "files" / "md5"
    held = {f"{path.parent.name}{path.name}" for path in remote.glob("*/*")}
    assert held == set(shipped_outs(REPO / PROJECT / "dvc.lock").values())
