"""Answer sets as Hugging Face datasets folders: exported from the smoke run and from the laptop
run's real SmolLM2 answers, loaded with `datasets`, imported back with nothing lost (failures
included)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from selfreflect import answer_sets, paths
from selfreflect.artifacts import read_metadata, read_table, write_table
from tests import workflow_utils as workflow
from tests.workflow_utils import clone_completed, copy_project, job_counts, snakemake

pytestmark = pytest.mark.workflow


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True)


@pytest.fixture
def answers_with_a_failure(smoke_run, tmp_path):
    """The smoke run's answers with one question failed, as sampling records it."""
    source = smoke_run / paths.ANSWERS.format(run="smoke", dataset="smoke", subject="tiny")
    answers = read_table("answers", source)
    answers.at[1, "error"] = "prompt too long"
    answers.at[1, "test_answers"], answers.at[1, "conditioning_answers"] = [], []
    path = tmp_path / "answers.parquet"
    write_table("answers", answers, path, read_metadata(source))
    return path


def plain(value):
    """A table cell as `datasets` gives it back: arrays and numpy scalars as Python values,
    missing values (NA, NaN) as None."""
    if pd.api.types.is_scalar(value) and pd.isna(value):
        return None
    return getattr(value, "tolist", lambda: value)()


def round_trip(answers: Path, questions: Path, folder: Path) -> pd.DataFrame:
    """Export ``answers`` as a datasets folder, load it with `datasets` and import it back:
    every column and the metadata come back as they were. The exported table."""
    back = folder.with_suffix(".parquet")
    hf = ["export-answers", "--format", "hf", "--questions", str(questions)]
    assert run(*hf, str(answers), str(folder)).returncode == 0
    assert run("import-answers", str(folder), str(back)).returncode == 0
    original = read_table("answers", answers)
    pd.testing.assert_frame_equal(read_table("answers", back), original)
    assert read_metadata(back) == read_metadata(answers)

    import datasets

    loaded = datasets.load_dataset("parquet", data_dir=str(folder / "data"), split="train")
    assert loaded.column_names == list(original.columns)
    for column in original.columns:
        expected = [plain(v) for v in original[column]]
        assert loaded[column] == expected, column
    return original


def card_header(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text().split("---\n")[1])["selfreflect"]


def test_export_load_and_import_lose_nothing(smoke_run, answers_with_a_failure, tmp_path):
    questions = smoke_run / paths.QUESTIONS.format(run="smoke", dataset="smoke")
    original = round_trip(answers_with_a_failure, questions, tmp_path / "set")
    header = card_header(tmp_path / "set")
    assert header["subject"]["name"] == "tiny" and "sha256" in header["subject"]
    assert header["sampling"]["num_answers"] == 4 and header["seed"] == 1
    assert header["source_dataset"]["path"] == "data/questions/smoke.jsonl"
    assert header["failed"] == 1 and header["questions"] == len(original)


def test_the_laptop_runs_real_answers_travel_losslessly(tmp_path):
    """SmolLM2's own answers (real text: quotes, newlines, cut-off sentences), sampled by the
    laptop config's jobs."""
    project = copy_project(tmp_path / "project", "config/laptop.yaml")
    answers = paths.ANSWERS.format(run="laptop", dataset="real", subject="smollm2")
    questions = paths.QUESTIONS.format(run="laptop", dataset="real")
    workflow.run(
        ["snakemake", "--configfile", "config/laptop.yaml", "--cores", "2", answers], project
    )
    original = round_trip(project / answers, project / questions, tmp_path / "set")
    assert original["test_answers"].map(len).eq(3).all()
    header = card_header(tmp_path / "set")
    assert header["subject"]["name"] == "smollm2" and header["questions"] == len(original) == 6


def test_large_sets_are_sharded(answers_with_a_failure, tmp_path, monkeypatch):
    monkeypatch.setattr(answer_sets, "SHARD_ROWS", 7)
    folder = tmp_path / "set"
    shards = answer_sets.write_answer_set(answers_with_a_failure, folder, None)
    original = read_table("answers", answers_with_a_failure)
    assert shards == len(list((folder / "data").glob("train-*-of-*.parquet"))) > 1
    pd.testing.assert_frame_equal(answer_sets.read_answer_set(folder)[0], original)


def test_export_never_replaces_a_folder_that_is_not_an_answer_set(answers_with_a_failure, tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = run("export-answers", "--format", "hf", str(answers_with_a_failure), str(tmp_path))
    assert result.returncode == 1 and (tmp_path / "notes.txt").read_text() == "mine"
    assert (
        result.stderr
        == f"error: {tmp_path}: exists and is not an answer set folder (no README.md)\n"
    )


def test_a_later_run_starts_from_an_imported_answer_set(smoke_run, tmp_path):
    """As the README says: a fresh checkout with the run's questions imports the answer set
    where the run keeps its answers, and Snakemake samples nothing."""
    answers = paths.ANSWERS.format(run="smoke", dataset="smoke", subject="tiny")
    folder = tmp_path / "set"
    assert (
        run("export-answers", "--format", "hf", str(smoke_run / answers), str(folder)).returncode
        == 0
    )
    project = clone_completed(smoke_run, tmp_path / "later")
    shutil.rmtree(project / ".snakemake")
    shutil.rmtree(project / Path(answers).parent)
    assert run("import-answers", str(folder), str(project / answers)).returncode == 0
    jobs = job_counts(snakemake(project, "-n").stdout)
    assert "answers" not in jobs and "answers_shard" not in jobs
    assert jobs["score"] == jobs["summaries"] > 0
