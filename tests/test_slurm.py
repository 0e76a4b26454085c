"""The smoke DAG on a real SLURM cluster: scripts/slurm_cluster.sh starts a single-node cluster
with accounting (slurmdbd on MariaDB), Snakemake submits every job through the SLURM executor
plugin with the project's profile (workflow/profiles/slurm).

The cluster stays up until the whole pytest session ends (conftest's ``pytest_sessionfinish``
stops it on the pytest-xdist controller, once every worker is done): Snakemake imports every
installed executor plugin, and the SLURM plugin asks `scontrol` for the cluster's configuration on
import, which waits 9 s for a controller that is installed but stopped; every later Snakemake
process of the session, on any worker, would pay it."""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table
from selfreflect.snakemake_jobs import job_stats
from tests.workflow_utils import (
    REPO,
    SLURM_CLUSTER,
    SYSTEM_TESTS,
    copy_project,
    run,
    slurm_cluster_up,
)

pytestmark = [pytest.mark.slurm, pytest.mark.workflow]

# The rules whose jobs load a model: with the tiny model taking a GPU, they belong on `gpu`.
MODEL_RULES = {
    "answers",
    "summarize",
    "judge",
    "report_alt_metrics",
}
# The profile's sizes are a real cluster's; this node has the machine's CPUs and fake GPUs.
SLURM_OPTIONS = [
    "--workflow-profile",
    "workflow/profiles/slurm",
    "--configfile",
    "config/smoke.yaml",
    "slurm.yaml",
    "--default-resources",
    "runtime=60",
    "cpus_per_gpu=1",
    "mem_mb_per_cpu=2000",
    "--slurm-init-seconds-before-status-checks",
    "2",
]
CANCELLED_RULE = "judge"
# One strategy's scores and the judge's alternative metrics on the summarised dataset: every rule
# that loads a model (MODEL_RULES), the merges and the scores, one job each. The other rules'
# jobs take no GPU, as the merges and scores here (tests/test_dag_consistency.py plans them all).
STRATEGIES = ["greedy"]
ANSWERS = "results/smoke/smoke/tiny/answers.parquet"
TARGETS = [  # before the options: --configfile takes every word that follows it
    "results/smoke/smoke/tiny/scores/tiny/greedy.parquet",
    "results/smoke/smoke/tiny/studies/tiny/alt_metrics.parquet",
]


@pytest.fixture(scope="session")
def slurm_cluster():
    """The cluster of scripts/slurm_cluster.sh, installed if missing, started if down (and then
    stopped when the session ends: conftest); only where asked (``SELFREFLECT_SYSTEM_TESTS=1``,
    as .ci/run does): it installs Debian packages and starts daemons on the machine."""
    if os.environ.get(SYSTEM_TESTS) != "1":
        pytest.skip(f"the SLURM cluster changes the system; set {SYSTEM_TESTS}=1 to run it")
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("the SLURM cluster is installed with apt-get as root (Debian/Ubuntu)")
    install = subprocess.run([*SLURM_CLUSTER, "install"], capture_output=True, text=True)
    if install.returncode != 0:
        pytest.skip(f"the SLURM packages cannot be installed: {install.stderr[-1000:]}")
    was_up = slurm_cluster_up()
    run([*SLURM_CLUSTER, "start"], REPO)
    if not was_up:  # jobs recovered from an earlier session's saved state would hold the node
        subprocess.run(["scancel", "--user", getpass.getuser()], check=True)


def sacct_jobs(since: str, project: Path) -> list[dict[str, str]]:
    """SLURM's accounting records of the jobs run in ``project`` since ``since``, in submission
    order (the cluster may hold other jobs, e.g. ones recovered from an earlier session)."""
    fields = ["JobID", "JobName", "Partition", "State", "Comment", "AllocTRES", "WorkDir"]
    out = subprocess.run(
        ["sacct", "-X", "-n", "-P", "-S", since, "-o", ",".join(fields)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines()]
    ours = [row for row in rows if Path(row["WorkDir"]) == project]
    return sorted(ours, key=lambda row: int(row["JobID"]))


def rule_of(job: dict[str, str]) -> str:
    """The rule of a job from the comment the plugin sets: rule_<rule>[_wildcards_<values>]."""
    return job["Comment"].removeprefix("rule_").split("_wildcards_")[0]


def cancel_first_running(rule: str, snakemake: subprocess.Popen, project: Path) -> str:
    """scancel the first job of ``rule`` seen running in ``project``; its comment (rule and
    wildcards)."""
    while snakemake.poll() is None:
        queue = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING", "-o", "%i|%Z|%k"], capture_output=True, text=True
        ).stdout
        for line in queue.splitlines():
            job_id, workdir, comment = line.split("|", 2)
            if Path(workdir) == project and comment.startswith(f"rule_{rule}_"):
                subprocess.run(["scancel", job_id], check=True)
                return comment
        time.sleep(0.5)
    raise AssertionError(f"Snakemake ended before a {rule} job ran")


def test_smoke_dag_on_slurm_matches_local_run_and_resumes(slurm_cluster, smoke_run, tmp_path):
    project = copy_project(tmp_path / "project")
    overrides = {"models": {"tiny": {"gpus": 1}}, "summaries": {"strategies": STRATEGIES}}
    (project / "slurm.yaml").write_text(yaml.safe_dump(overrides))
    dag = job_stats(run(["snakemake", *TARGETS, "-n", *SLURM_OPTIONS[2:5]], project).stdout)
    assert set(dag) > MODEL_RULES
    since = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() - 1))

    # First run: one running job is cancelled; --keep-going finishes all that does not need it.
    with open(tmp_path / "first.log", "w") as log:
        first = subprocess.Popen(
            ["snakemake", *TARGETS, *SLURM_OPTIONS, "--keep-going"],
            cwd=project,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        cancelled = cancel_first_running(CANCELLED_RULE, first, project)
        assert first.wait() != 0, (tmp_path / "first.log").read_text()[-3000:]
    # Second run: only what did not complete runs again.
    run(["snakemake", *TARGETS, *SLURM_OPTIONS], project)

    jobs = sacct_jobs(since, project)
    run_names = list(dict.fromkeys(job["JobName"] for job in jobs))
    assert len(run_names) == 2, run_names  # one SLURM job name per Snakemake run
    first_jobs, second_jobs = ([job for job in jobs if job["JobName"] == n] for n in run_names)
    done_first = {job["Comment"] for job in first_jobs if job["State"] == "COMPLETED"}
    assert {job["Comment"] for job in first_jobs} - done_first == {cancelled}
    assert all(job["State"] == "COMPLETED" for job in second_jobs)
    rerun = {job["Comment"] for job in second_jobs}
    assert cancelled in rerun
    assert not rerun & done_first
    # Every job of the DAG ran as a SLURM job, each in the partition its rule asks for.
    assert Counter(rule_of(job) for job in jobs if job["State"] == "COMPLETED") == dag
    for job in jobs:
        on_gpu = rule_of(job) in MODEL_RULES
        assert job["Partition"] == ("gpu" if on_gpu else "cpu"), job
        assert ("gres/gpu=1" in job["AllocTRES"]) == on_gpu, job

    # what they made is what the local run made
    compared = [("answers", ANSWERS), ("scores", TARGETS[0]), ("alt_metrics", TARGETS[1])]
    for kind, path in compared:
        pd.testing.assert_frame_equal(
            read_table(kind, project / path), read_table(kind, smoke_run / path), obj=path
        )
