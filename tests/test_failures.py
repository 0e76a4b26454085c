"""Failed questions are counted and too many of them stop a job; a crash is no question's failure.

``never`` is a summary plug-in, referenced as ``tests.test_failures:never``.
"""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest
import torch
import yaml

from selfreflect.artifacts import read_metadata, write_table
from selfreflect.failures import TooManyFailures, check_failures
from selfreflect.scoring.experiment import score_table
from selfreflect.scoring.hf_judge import HfJudge
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.strategies import Context, QuestionFailed
from tests.conftest import REPO, tiny_format

QUESTIONS = ["Question: What is the capital of France?", "Question: Who wrote Hamlet?"]


def never(ctx: Context) -> str:
    raise QuestionFailed("no summary today")


def answers_table(conditioning: list[str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["q0", "q1"],
            "question": QUESTIONS,
            "test_answers": [["Paris is the capital"], ["Shakespeare wrote it"]],
            "conditioning_answers": [conditioning, conditioning],
            "backend": "hf",
            "model": "tiny",
            "seed": 0,
            "error": None,
        }
    )


def summaries_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": ["q0", "q1"],
            "question": QUESTIONS,
            "dataset": "d",
            "subject": "tiny",
            "strategy": "greedy",
            "summary": ["Paris", "Shakespeare"],
            "summarizer": "tiny",
            "prompt_tokens": 1,
            "completion_tokens": 1,
            "seconds": 0.0,
            "error": None,
        }
    )


@pytest.fixture
def project(tmp_path, tiny_model):
    """Answers without conditioning answers (every question fails scoring) and two configs."""
    write_table("answers", answers_table([]), tmp_path / "answers.parquet")
    write_table("summaries", summaries_table(), tmp_path / "greedy.parquet")
    write_table(
        "questions",
        pd.DataFrame({"id": ["q0", "q1"], "question": QUESTIONS, "dataset": "smoke"}).assign(
            source_index=0, choices=None, gold=None
        ),
        tmp_path / "questions.parquet",
    )
    base = {
        "models": {"tiny": {"path": str(tiny_model), "backend": "hf", "dtype": "float32"}},
        "subjects": ["tiny"],
        "judges": ["tiny"],
        "datasets": {"smoke": {"source": "local", "path": "x.jsonl"}},
        "summaries": {"plugins": {"never": "tests.test_failures:never"}},
    }
    for name, share in [("strict", 0.5), ("lenient", 1.0)]:
        config = {**base, "max_failed_share": share}
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return tmp_path


def selfreflect(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True, cwd=REPO)


def score(project, config: str, out) -> subprocess.CompletedProcess:
    return selfreflect(
        "score", "--config", str(project / f"{config}.yaml"), "--judge", "tiny",
        "--answers", str(project / "answers.parquet"),
        "--summaries", str(project / "greedy.parquet"), "--out", str(out),
    )  # fmt: skip


def test_scoring_job_where_every_question_fails_exits_non_zero(project):
    out = project / "scores.parquet"
    result = score(project, "strict", out)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "error: scoring with tiny (strategy greedy): 2 of 2 questions failed, more than "
        "max_failed_share=0.5: 2x 'no conditioning answers'"
    )
    assert not out.exists()
    assert score(project, "lenient", out).returncode == 0
    meta = read_metadata(out)  # the scores carry their provenance
    assert meta["judge"] == "tiny" and len(meta["models"]["tiny"]["sha256"]) == 64
    assert meta["git_commit"] and len(meta["config_hash"]) == 64


def test_judge_job_where_every_question_fails_writes_nothing(project):
    """The judge writes its rows as it goes, beside its output: a job refused for its failures
    leaves neither the output nor those rows."""
    folder = project / "shards"
    folder.mkdir()
    args = ["judge", "--dataset", "smoke", "--subject", "tiny", "--judge", "tiny", "--no-studies"]
    args += ["--questions", str(project / "questions.parquet")]
    args += ["--answers", str(project / "answers.parquet"), "--cache", str(project / "cache")]
    args += ["--out", str(folder / "tiny-0.parquet"), str(project / "greedy.parquet")]
    result = selfreflect(*args, "--config", str(project / "strict.yaml"))
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "error: scoring with tiny (strategy greedy): 2 of 2 questions failed, more than "
        "max_failed_share=0.5: 2x 'no conditioning answers'"
    )
    assert list(folder.iterdir()) == []
    assert selfreflect(*args, "--config", str(project / "lenient.yaml")).returncode == 0
    assert [path.name for path in folder.iterdir()] == ["tiny-0.parquet"]


def test_summary_job_where_every_question_fails_exits_non_zero(project):
    out = project / "never.parquet"
    args = ["summarize", "--subject", "tiny", "--strategy", "never"]
    args += ["--questions", str(project / "questions.parquet"), "--out", str(out)]
    result = selfreflect(*args, "--config", str(project / "strict.yaml"))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "error: strategy 'never': 2 of 2 questions failed, more than max_failed_share=0.5: "
        "2x 'no summary today'"
    )
    assert not out.exists()
    assert selfreflect(*args, "--config", str(project / "lenient.yaml")).returncode == 0
    meta = read_metadata(out)  # the summaries carry their provenance
    assert meta["strategy"] == "never" and len(meta["models"]["tiny"]["sha256"]) == 64


def test_share_is_checked_per_group_and_reasons_are_counted():
    table = pd.DataFrame({"strategy": ["a", "a", "b", "b"], "error": [None, "x", "y" * 200, "z"]})
    with pytest.raises(TooManyFailures, match=r"^job: 3 of 4 questions failed"):
        check_failures(table, 0.5, "job")
    per_strategy = r"^job \(strategy b\): 2 of 2 .*: 1x 'y{80}'; 1x 'z'$"
    with pytest.raises(TooManyFailures, match=per_strategy):
        check_failures(table, 0.5, "job", "strategy")
    check_failures(table[table["strategy"] == "a"], 0.5, "job", "strategy")  # half: not more


class CrashingJudge(HfJudge):
    """The tiny model's judge running out of memory on its first forward pass."""

    def prepare(self, *args, **kwargs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")


def test_judge_crash_is_not_recorded_as_a_question_failure(tiny_model):
    from selfreflect.backends.hf_engine import load_hf_model

    tokenizer, model = load_hf_model({"path": str(tiny_model), "dtype": "float32"})
    judge = CrashingJudge("tiny", tiny_format(tokenizer), model, batch_size=4)
    answers = answers_table(["Paris, the capital of France", "Shakespeare wrote Hamlet"])
    with pytest.raises(torch.OutOfMemoryError):
        score_table(judge, answers, summaries_table(), 5.0, stopword_policy("none"))
