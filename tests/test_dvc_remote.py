"""Answer sets round-trip through a real S3-protocol server (moto) and are never resampled."""

import shutil
import subprocess
import time

import boto3
import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table
from tests.workflow_utils import commit_all, free_port, run, snakemake

pytestmark = pytest.mark.workflow

ANSWERS = "results/smoke/smoke/tiny/answers.parquet"
BUCKET = "selfreflect-test"


@pytest.fixture(scope="module")
def s3(monkeypatch_module):
    port = free_port()
    server = subprocess.Popen(
        [shutil.which("moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch_module.setenv(key, value)
    client = boto3.client("s3", endpoint_url=endpoint)
    deadline = time.monotonic() + 30
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    yield endpoint, client
    server.terminate()
    server.wait(timeout=10)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


@pytest.fixture(scope="module")
def pushed(s3, smoke_dvc_run):
    """The smoke project reproduced by DVC, with everything pushed to the S3 server."""
    endpoint, _ = s3
    project = smoke_dvc_run
    run(["dvc", "remote", "modify", "s3", "url", f"s3://{BUCKET}/cache"], project)
    run(["dvc", "remote", "modify", "s3", "endpointurl", endpoint], project)
    run(["dvc", "remote", "default", "s3"], project)
    commit_all(project, "use the test's S3 server")
    run(["dvc", "push"], project)
    return project


def answers_md5(project) -> str:
    """The content hash dvc.lock records for the answer set."""
    lock = yaml.safe_load((project / "dvc.lock").read_text())
    outs = [out for stage in lock["stages"].values() for out in stage.get("outs", [])]
    return next(out["md5"] for out in outs if out["path"] == ANSWERS)


def fresh_clone(origin, dest):
    run(["git", "clone", "-q", str(origin), str(dest)], origin.parent)
    return dest


def test_pull_restores_everything_without_rerunning(pushed, tmp_path):
    clone = fresh_clone(pushed, tmp_path / "clone")
    run(["dvc", "pull"], clone)
    pd.testing.assert_frame_equal(
        read_table("answers", clone / ANSWERS), read_table("answers", pushed / ANSWERS)
    )
    # the pull wrote timestamps in arbitrary order: a dry run plans and names the command
    # that dates them, after which Snakemake has nothing to do
    planned = snakemake(clone, "-n")
    assert "`selfreflect dvc-sync --config config/smoke.yaml` re-dates them" in planned.stderr
    run(["selfreflect", "dvc-sync", "--config", "config/smoke.yaml"], clone)
    done = snakemake(clone)
    assert "Nothing to be done" in done.stdout + done.stderr, done.stderr
    assert "up to date" in run(["dvc", "status"], clone).stdout
    repro = run(["dvc", "repro"], clone).stdout
    assert "Running stage" not in repro, repro


def test_a_pull_keeps_your_own_run_and_its_force_hint_would_delete_it(pushed, s3, tmp_path):
    """docs/answer-sets.md: a plain pull stops at an output that a run of your own changed,
    hinting --force, and leaves it; --force deletes an output neither cache nor remote holds."""
    _, client = s3
    clone = fresh_clone(pushed, tmp_path / "clone")
    run(["dvc", "pull"], clone)
    mine = b"answers of a run of your own"
    (clone / ANSWERS).write_bytes(mine)
    stopped = run(["dvc", "pull"], clone, check=False)
    assert stopped.returncode != 0 and "Use `--force` to force" in stopped.stderr, stopped.stderr
    assert (clone / ANSWERS).read_bytes() == mine
    md5 = answers_md5(pushed)
    held = f"cache/files/md5/{md5[:2]}/{md5[2:]}"
    original = client.get_object(Bucket=BUCKET, Key=held)["Body"].read()
    client.delete_object(Bucket=BUCKET, Key=held)
    try:
        shutil.rmtree(clone / ".dvc" / "cache")
        assert run(["dvc", "pull", "--force"], clone, check=False).returncode != 0
        assert not (clone / ANSWERS).exists()
    finally:
        client.put_object(Bucket=BUCKET, Key=held, Body=original)


def test_corrupted_remote_object_is_detected(pushed, s3, tmp_path):
    _, client = s3
    md5 = answers_md5(pushed)
    victim = f"cache/files/md5/{md5[:2]}/{md5[2:]}"
    original = client.get_object(Bucket=BUCKET, Key=victim)["Body"].read()
    client.put_object(Bucket=BUCKET, Key=victim, Body=b"corrupted" + original[9:])
    try:
        clone = fresh_clone(pushed, tmp_path / "clone")
        result = run(["dvc", "pull", "--with-deps", "merge_answers@smoke-tiny"], clone, check=False)
        assert result.returncode != 0
        assert "failed" in (result.stdout + result.stderr).lower()
        assert not (clone / ANSWERS).exists(), "a corrupted object must not be checked out"
    finally:
        client.put_object(Bucket=BUCKET, Key=victim, Body=original)
