"""Provenance rides on every artifact; a merged table keeps each shard's."""

import subprocess

import pandas as pd

from selfreflect.artifacts import read_metadata, write_table
from selfreflect.provenance import merged_provenance
from tests.conftest import REPO


def answers(ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ids,
            "question": [f"Question {i}?" for i in ids],
            "test_answers": [["a"]] * len(ids),
            "conditioning_answers": [["b"]] * len(ids),
            "backend": "hf",
            "model": "tiny",
            "seed": 0,
            "error": None,
        }
    )


def test_merged_provenance_keeps_common_fields_and_every_shard():
    shards = [{"seed": 1, "git_commit": "a", "shard": [0, 2]}, {"seed": 1, "git_commit": "b"}]
    meta = merged_provenance(shards)
    assert meta == {"seed": 1, "shard": None, "merged_from": 2, "shards": shards}


def test_merge_command_keeps_each_shards_provenance(tmp_path):
    questions = answers(["q0", "q1", "q2"])[["id", "question"]].assign(
        dataset="d", source_index=0, choices=None, gold=None
    )
    write_table("questions", questions, tmp_path / "q.parquet")
    parts = []
    for shard, ids in enumerate([["q0", "q1"], ["q2"]]):
        parts.append(tmp_path / f"answers-{shard}.parquet")
        meta = {"seed": 1, "git_commit": f"commit{shard}", "shard": [shard, 2]}
        write_table("answers", answers(ids), parts[-1], meta)
    out = tmp_path / "answers.parquet"
    command = ["selfreflect", "merge", "answers", "--questions", str(tmp_path / "q.parquet")]
    command += ["--out", str(out), *map(str, parts)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    meta = read_metadata(out)
    assert [s["git_commit"] for s in meta["shards"]] == ["commit0", "commit1"]
    assert [s["shard"] for s in meta["shards"]] == [[0, 2], [1, 2]]
    assert meta["seed"] == 1 and "git_commit" not in meta and meta["merged_from"] == 2
