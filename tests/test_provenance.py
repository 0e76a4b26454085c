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


def test_a_models_fingerprint_is_its_files_not_who_wrote_the_folder(tmp_path):
    """A model converted by Snakemake (a directory output, with its .snakemake_timestamp) and by
    hand (`selfreflect convert-model`, with our owner marker) is the same model to an adapter's
    check and to the judge cache; a changed file is another model."""
    from selfreflect.fileio import OWNER_MARKER
    from selfreflect.provenance import model_fingerprint

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 8}')
    before = model_fingerprint(str(model))["sha256"]
    (model / ".snakemake_timestamp").write_text("")
    (model / OWNER_MARKER).write_text("convert-model\n")
    assert model_fingerprint(str(model))["sha256"] == before
    (model / "config.json").write_text('{"hidden_size": 16}')
    assert model_fingerprint(str(model))["sha256"] != before


def test_the_commit_is_dirty_for_changed_files_but_dvcs_records(tmp_path, monkeypatch):
    """`dvc repro` rewrites dvc.lock after each stage: the stages after the first would record
    a dirty commit, and their outputs differ from a rerun's for it. From a DVC project's folder
    (where DVC runs the commands), a change anywhere else in the checkout counts."""
    from selfreflect.provenance import git_commit

    project = tmp_path / "dvc" / "laptop"
    project.mkdir(parents=True)
    for path in (tmp_path / "dvc.lock", project / "dvc.lock", tmp_path / "code.py"):
        path.write_text("recorded\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-qm", "c"], cwd=tmp_path, check=True)
    monkeypatch.chdir(project)
    clean = git_commit()
    assert clean and not clean.endswith("-dirty")
    for lock in (tmp_path / "dvc.lock", project / "dvc.lock"):
        lock.write_text("rewritten by dvc repro\n")
    assert git_commit() == clean
    (tmp_path / "code.py").write_text("edited\n")
    assert git_commit() == f"{clean}-dirty"
