"""GPU placement: concurrent jobs on one machine each hold GPUs no other holds
(:mod:`selfreflect.gpus`), in real processes and in a real Snakemake run. The GPUs are names
only this test uses (``CUDA_VISIBLE_DEVICES`` entries), so their locks are its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest
import yaml

from selfreflect.config import read_config_file
from selfreflect.gpus import lock_folder
from tests.workflow_utils import copy_project, run

# a job: takes GPUs, logs as the command line does, prints what it holds and sees, then waits
JOB = """
import logging, os, sys
from selfreflect.gpus import claim_gpus
logging.basicConfig(level=logging.INFO, format="%(message)s")
held = claim_gpus(int(sys.argv[1]))
print(",".join(held), os.environ.get("CUDA_VISIBLE_DEVICES"), flush=True)
sys.stdin.read()
"""


@pytest.fixture
def gpus():
    """Four GPU names of this test's own, their locks removed after it."""
    names = [f"GPU-{uuid.uuid4()}" for _ in range(4)]
    yield names
    for name in names:
        (lock_folder() / f"{name}.lock").unlink(missing_ok=True)


@pytest.fixture
def jobs():
    started: list[subprocess.Popen] = []
    yield started
    for job in started:
        job.kill()
        job.wait()


def start(count: int, visible: list[str] | str) -> subprocess.Popen:
    """A job taking ``count`` of the GPUs ``visible`` (a list, or CUDA_VISIBLE_DEVICES's text)."""
    listed = visible if isinstance(visible, str) else ",".join(visible)
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": listed}
    return subprocess.Popen(
        [sys.executable, "-c", JOB, str(count)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def held(job: subprocess.Popen) -> tuple[str, str]:
    """What ``job`` holds and what it sees, once it has taken its GPUs."""
    assert job.stdout is not None
    gpus, seen = job.stdout.readline().rstrip("\n").split(" ")
    return gpus, seen


def test_concurrent_jobs_hold_and_see_distinct_gpus(jobs, gpus):
    seen = []
    for count in (2, 1, 1):  # one after another: each takes the first GPUs still free
        jobs.append(start(count, gpus))
        seen.append(held(jobs[-1]))
    a, b, c, d = gpus
    assert seen == [(f"{a},{b}", f"{a},{b}"), (c, c), (d, d)]


def test_a_job_waits_for_a_gpu_a_killed_job_held(jobs, gpus):
    two = gpus[:2]
    jobs += [start(1, two), start(1, two)]
    holders = {held(job)[0]: job for job in jobs}
    assert sorted(holders) == sorted(two)
    waiting = start(1, two)
    jobs.append(waiting)
    assert waiting.stderr is not None
    assert (
        waiting.stderr.readline()
        == f"waiting for 1 of GPUs {','.join(two)}: other jobs hold them\n"
    )
    os.kill(holders[two[1]].pid, signal.SIGKILL)  # the operating system releases what it held
    assert held(waiting) == (two[1], two[1])
    assert (
        waiting.stderr.readline() == f"on GPU {two[1]} of {','.join(two)} (CUDA_VISIBLE_DEVICES)\n"
    )


@pytest.mark.parametrize("visible", ["one", "", "-1"])
def test_a_job_that_sees_no_more_gpus_than_it_takes_changes_nothing(jobs, gpus, visible):
    visible = gpus[0] if visible == "one" else visible
    jobs.append(start(1, visible))
    assert held(jobs[0]) == (visible if visible != "-1" else "", visible)
    assert not (lock_folder() / f"{gpus[0]}.lock").exists()


@pytest.mark.workflow
def test_a_model_job_of_the_workflow_takes_a_gpu_no_other_job_holds(jobs, gpus, tmp_path):
    """`--resources gpu=N` on a machine with more GPUs: each model job passes its `gpu`
    resource on (`--gpus`) and runs on GPUs no other holds, here the one a job holds not."""
    project = copy_project(tmp_path / "project")
    config = read_config_file(project / "config" / "smoke.yaml")
    config["run"] = "gpus"
    config["models"]["tiny"]["gpus"] = 1
    (project / "config" / "gpus.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    two = gpus[:2]
    jobs.append(start(1, two))
    assert held(jobs[0]) == (two[0], two[0])
    target = "results/gpus/smoke/tiny/answers.parquet"
    args = ["snakemake", target, "--configfile", "config/gpus.yaml", "--cores", "2"]
    run([*args, "--resources", "gpu=1"], project, env={"CUDA_VISIBLE_DEVICES": ",".join(two)})
    log = next((project / "logs" / "gpus" / "answers").rglob("*.log")).read_text()
    assert f"on GPU {two[1]} of {','.join(two)} (CUDA_VISIBLE_DEVICES)" in log
