"""The fault suite: jobs killed with SIGKILL at deterministic points (tests/kill_at.py) rerun to
exactly the results of an uninterrupted run; a read-only or full output location fails with one
line and loses nothing. Small: the tiny model on the hf backend, four questions."""

from __future__ import annotations

import json
import os
import random
import shlex
import string
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table, write_table
from selfreflect.config import read_config_file
from selfreflect.questions import normalize_question, question_id
from tests.conftest import REPO

KILL_AT = str(REPO / "tests" / "kill_at.py")
QUESTIONS = [normalize_question(q) for q in ["Who wrote Hamlet", "Where is Paris", "Why", "How"]]


@pytest.fixture(scope="module")
def work(tmp_path_factory, tiny_model):
    """A folder with a config (subject, summariser and judge: the tiny model on hf, one
    question per checkpoint) and a questions table."""
    folder = tmp_path_factory.mktemp("faults")
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["models"] = {"tiny": {**config["models"]["tiny-hf"], "path": str(tiny_model)}}
    config.update(summarizer=None, judges=["tiny"])
    config["answers"].update(num_answers=2, max_tokens=8, checkpoint_every=1)
    config["summaries"].update(plugins={}, strategies=["greedy"])
    config["scoring"].update(stopwords="none")
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    frame = pd.DataFrame({"question": QUESTIONS, "id": [question_id(q) for q in QUESTIONS]})
    frame = frame.assign(dataset="d", source_index=range(4), choices=None, gold=None)
    write_table("questions", frame, folder / "q.parquet")
    return folder


def command(work, stage: str, out) -> list[str]:
    common = ["--config", str(work / "config.yaml"), "--out", str(out)]
    if stage == "answers":
        return ["answers", *common, "--subject", "tiny", "--questions", str(work / "q.parquet")]
    if stage == "summarize":
        args = ["--subject", "tiny", "--strategy", "greedy", "--questions", str(work / "q.parquet")]
        return ["summarize", *common, *args]
    if stage == "judge":  # its result cache beside the output's folder, one per folder
        cache = out.parent.parent / f"{out.parent.name}-judge-cache"
        args = ["--dataset", "d", "--subject", "tiny", "--judge", "tiny", "--cache", str(cache)]
        inputs = [
            "--questions",
            str(work / "q.parquet"),
            "--answers",
            str(work / "answers.parquet"),
        ]
        return ["judge", *common, *args, *inputs, str(work / "s.parquet")]
    inputs = ["--answers", str(work / "answers.parquet"), "--summaries", str(work / "s.parquet")]
    return ["score", *common, "--judge", "tiny", *inputs]


def selfreflect(args: list[str]) -> None:
    result = subprocess.run(["selfreflect", *args], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def reference(work):
    """Uninterrupted runs of each stage (the later stages read the earlier outputs)."""
    outputs = {
        "answers": "answers.parquet",
        "summarize": "s.parquet",
        "score": "scores.parquet",
        "judge": "judgements.parquet",
    }
    for stage, name in outputs.items():
        selfreflect(command(work, stage, work / name))
    return {stage: work / name for stage, name in outputs.items()}


KIND = {"answers": "answers", "summarize": "summaries", "score": "scores", "judge": "judgements"}
# Four questions, one per answers checkpoint or result-cache entry (score, judge): atomic writes
# 1-4 are those, write 5 the output.
# (Kills right after a checkpoint: tests/test_resume_and_shards.py.)
POINTS = [
    ("answers", "before-rename", 3),  # checkpoint 3 written, not yet renamed
    ("answers", "before-rename", 5),  # the output written, not yet renamed
    ("summarize", "before-rename", 1),
    ("score", "before-rename", 2),
    ("judge", "before-rename", 3),  # two results of the judge pass cached, the third not yet
]


def results(stage: str, path) -> pd.DataFrame:
    """The table a stage wrote, less wall-clock timings."""
    return read_table(KIND[stage], path).drop(columns=["seconds"], errors="ignore")


@pytest.mark.parametrize(("stage", "point", "n"), POINTS, ids=lambda v: str(v))
def test_killed_job_reruns_to_identical_results(work, reference, tmp_path, stage, point, n):
    out = tmp_path / "out.parquet"
    killed = subprocess.run(
        [sys.executable, KILL_AT, point, str(n), "--", *command(work, stage, out)],
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -9, killed.stderr
    assert not out.exists(), "a killed job must not leave an output that looks complete"
    selfreflect(command(work, stage, out))
    pd.testing.assert_frame_equal(results(stage, out), results(stage, reference[stage]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.parquet"], "leftover files"


def _namespace_available() -> bool:
    probe = ["unshare", *_UNSHARE, "true"]
    return subprocess.run(probe, capture_output=True).returncode == 0


_UNSHARE = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
needs_namespace = pytest.mark.skipif(
    not _namespace_available(), reason="needs a mount namespace (unshare)"
)


def in_namespace(setup: str, args: list[str], check: str = "true") -> subprocess.CompletedProcess:
    """Run ``selfreflect ARGS`` between the shell commands ``setup`` and ``check`` in a private
    mount namespace (a read-only or a tiny folder, even for root); its exit status."""
    script = f"{setup} && {{ selfreflect {shlex.join(args)}; status=$?; {check}; exit $status; }}"
    return subprocess.run(
        ["unshare", *_UNSHARE, "sh", "-c", script], capture_output=True, text=True
    )


def assert_one_line(result, *fragments: str) -> None:
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@needs_namespace
@pytest.mark.parametrize("stage", ["answers", "summarize", "score"])
def test_read_only_output_folder_fails_before_any_model_loads(work, reference, tmp_path, stage):
    folder = tmp_path / "ro"
    folder.mkdir()
    out = folder / "out.parquet"
    out.write_bytes(b"earlier result")
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["models"]["tiny"]["path"] = str(tmp_path / "no-model")  # loading it would fail
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    args = command(work, stage, out)
    args[args.index("--config") + 1] = str(tmp_path / "config.yaml")
    readonly = f"mount --bind {folder} {folder} && mount -o remount,bind,ro {folder}"
    result = in_namespace(readonly, args)
    assert_one_line(result, str(out), "not writable")
    assert out.read_bytes() == b"earlier result"
    assert sorted(p.name for p in folder.iterdir()) == ["out.parquet"]


@needs_namespace
def test_full_disk_fails_with_one_line_and_keeps_the_earlier_output(tmp_path):
    letters = random.Random(0)
    records = [
        {
            "question": f"Question {i}?",
            "masked_out_task_answers": ["".join(letters.choices(string.ascii_letters, k=400))],
            "conditioning_answers": ["x"],
        }
        for i in range(300)
    ]
    (tmp_path / "big.json").write_text(json.dumps(records))
    (tmp_path / "old.parquet").write_bytes(b"earlier result")
    disk, out = tmp_path / "disk", tmp_path / "disk" / "a.parquet"
    disk.mkdir()
    setup = f"mount -t tmpfs -o size=64k tmpfs {disk} && cp {tmp_path / 'old.parquet'} {out}"
    check = f"ls -A {disk} >&2; cmp -s {tmp_path / 'old.parquet'} {out} || echo changed >&2"
    result = in_namespace(setup, ["import-answers", str(tmp_path / "big.json"), str(out)], check)
    error, *listing = result.stderr.strip().splitlines()
    assert listing == ["a.parquet"], "the earlier output changed or a temporary file was left"
    assert result.returncode == 1 and error.startswith("error: ") and str(out) in error
    assert "No space left" in error
