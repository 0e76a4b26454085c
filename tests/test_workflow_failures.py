"""A failure never leaves a result that looks fresh: a sampling setting changes, one score job
is killed (SIGKILL, tests/kill_at.py), and the rerun rebuilds exactly what a clean run gives
(the score merge depends on the answers its temporary parts scored); a truncated answers file
is refused with one line naming it, run after run, instead of standing behind the old scores."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table
from selfreflect.config import read_config_file
from selfreflect.snakemake_jobs import job_stats
from tests.workflow_utils import clone_completed, copy_project, dvc_yaml_stages, run, run_env

pytestmark = pytest.mark.workflow

SMOKE = "config/smoke.yaml"
EXPERIMENT = "results/smoke/smoke/tiny"
ANSWERS = f"{EXPERIMENT}/answers.parquet"
SCORES = f"{EXPERIMENT}/scores/tiny/greedy.parquet"
SCORE_LOG = "logs/smoke/judge/smoke/tiny/tiny/0.log"


def snakemake(project: Path, *args: str, check: bool = True):
    """Snakemake making the greedy strategy's scores."""
    command = ["snakemake", SCORES, *args, "--configfile", SMOKE, "--cores", "2"]
    return run(command, project, check=check)


def scores(project: Path) -> pd.DataFrame:
    return read_table("scores", project / SCORES)


def dying_score_jobs(folder: Path) -> str:
    """A folder to put first on PATH: its `selfreflect` kills (SIGKILL) every `selfreflect
    judge` job as it writes its output, and runs every other command unchanged."""
    real, kill_at = shutil.which("selfreflect"), Path(__file__).with_name("kill_at.py")
    shim = folder / "selfreflect"
    folder.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = judge ] && exec {sys.executable} {kill_at} before-rename 1 -- "$@"\n'
        f'exec {real} "$@"\n'
    )
    shim.chmod(0o755)
    return str(folder)


def test_a_killed_score_job_after_a_setting_change_reruns_to_a_clean_runs_scores(
    smoke_run, tmp_path, monkeypatch
):
    project = clone_completed(smoke_run, tmp_path / "p")
    config = read_config_file(project / SMOKE)
    config["answers"]["max_tokens"] = 8
    config["summaries"]["strategies"] = ["greedy"]  # the one scored here: fewer jobs to wait for
    (project / SMOKE).write_text(yaml.safe_dump(config, sort_keys=False))
    with monkeypatch.context() as patch:
        patch.setenv(
            "PATH", f"{dying_score_jobs(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}"
        )
        killed = snakemake(project, check=False)  # new answers, then the score job dies
    assert killed.returncode != 0 and "Error in rule judge" in killed.stderr, killed.stderr
    assert (project / ANSWERS).stat().st_mtime > (project / SCORES).stat().st_mtime

    rerun = snakemake(project)  # before the fix: "Nothing to be done", the old scores kept
    assert job_stats(rerun.stderr) == {"judge": 1, "merge_judgements": 1, "strategy_scores": 1}
    rescored = scores(project)
    assert not rescored.equals(scores(smoke_run)), "the new answers were not scored"

    shutil.rmtree(project / "results/smoke/.judge_cache")
    snakemake(project, "--forcerun", "judge")  # a clean run of the scoring
    pd.testing.assert_frame_equal(rescored, scores(project))


def test_a_truncated_answers_file_is_refused_naming_it_run_after_run(smoke_run, tmp_path):
    project = clone_completed(smoke_run, tmp_path / "p")
    answers = project / ANSWERS
    answers.write_bytes(answers.read_bytes()[: answers.stat().st_size // 2])
    earlier = (project / SCORES).read_bytes()

    result = snakemake(project, check=False)
    assert result.returncode != 0 and "Error in rule judge" in result.stderr
    error = (project / SCORE_LOG).read_text().strip().splitlines()[-1]
    assert error.startswith(f"error: {ANSWERS}: not a readable Parquet file"), error
    assert error.endswith(f"; `snakemake --forcerun {ANSWERS}` makes it again"), error
    assert (project / SCORES).read_bytes() == earlier
    planned = job_stats(snakemake(project, "-n").stdout)
    assert planned == {"judge": 1, "merge_judgements": 1, "strategy_scores": 1}
    planned = job_stats(snakemake(project, "-n", "--forcerun", ANSWERS).stdout)  # as it says
    assert {"merge_answers", "judge"} <= set(planned), planned  # (the session run keeps shards)


def test_a_stopword_list_is_an_input_of_every_job_that_scores(tmp_path):
    """Every file a job reads is its input: the scoring.stopwords word list too (dvc.yaml's deps
    are the inputs of Snakemake's jobs)."""
    project = copy_project(tmp_path / "p")
    config = read_config_file(project / SMOKE)
    config["scoring"]["stopwords"] = "data/stopwords.txt"
    (project / "data" / "stopwords.txt").write_text("the\n")
    (project / "config" / "words.yaml").write_text(yaml.safe_dump(config))
    run(["selfreflect", "dvc-yaml", "--config", "config/words.yaml", "--project", "."], project)
    stages = dvc_yaml_stages(project)
    scoring = [s for s in stages.values() if "selfreflect judge " in str(s["cmd"])]
    assert len(scoring) == 2  # one judge pass per dataset: strategies and studies alike
    assert all("data/stopwords.txt" in stage["deps"] for stage in scoring)


def waiting_question_jobs(folder: Path, started: Path, go: Path) -> str:
    """A folder to put first on PATH: its `selfreflect questions` touches ``started``, then waits
    for ``go`` to exist before running the real command."""
    real = shutil.which("selfreflect")
    shim = folder / "selfreflect"
    folder.mkdir()
    shim.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = questions ] && touch {started} && while [ ! -e {go} ]; do sleep 0.2; done\n'
        f'exec {real} "$@"\n'
    )
    shim.chmod(0o755)
    return str(folder)


def test_a_run_with_other_settings_is_refused_while_another_run_holds_the_config(tmp_path):
    """Every job reads logs/<run>/config.yaml: while a run holds it (its job waits here), a run
    of other settings with outputs of its own, which Snakemake's lock lets start, stops before
    its first job with one line and leaves the file as it was; a run of the same settings runs
    (its config file named otherwise: the file's header names it), and once the first run has
    ended, so does the other."""
    project = copy_project(tmp_path / "p")
    config = read_config_file(project / SMOKE)
    config["report"]["confidence"] = 0.5
    (project / "config" / "other.yaml").write_text(yaml.safe_dump(config))
    started, go = tmp_path / "started", tmp_path / "go"
    shims = waiting_question_jobs(tmp_path / "bin", started, go)
    first = subprocess.Popen(
        ["snakemake", "results/smoke/smoke/questions.parquet", "--configfile", SMOKE, "-c1"],
        cwd=project,
        env=run_env(project, {"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(600):
            if started.exists() or first.poll() is not None:
                break
            time.sleep(0.2)
        assert started.exists(), first.communicate()[1][-3000:]
        resolved = project / "logs/smoke/config.yaml"
        held = resolved.read_text()
        own = ["results/smoke/smoke_mmlu/questions.parquet", "-c1", "--configfile"]

        other = run(["snakemake", *own, "config/other.yaml"], project, check=False)
        assert other.returncode != 0
        (line,) = [line for line in other.stderr.splitlines() if line.startswith("error:")]
        assert line.startswith("error: logs/smoke/config.yaml: another Snakemake run in this"), line
        assert resolved.read_text() == held
        assert not (project / own[0]).exists()

        run(["snakemake", *own, str(project / SMOKE)], project)  # the same settings, named
        assert (project / own[0]).exists() and resolved.read_text() == held  # otherwise
    finally:
        go.touch()
        _, errors = first.communicate(timeout=300)
    assert first.returncode == 0, errors[-3000:]
    run(["snakemake", "--force", *own, "config/other.yaml"], project)  # a job to run: onstart
    assert "confidence: 0.5" in resolved.read_text()
