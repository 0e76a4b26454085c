"""The original tool's JSON files (selfreflect.reference_format): read, exported and imported
with nothing lost, and scored by `selfreflect score` as the tool scores them."""

from __future__ import annotations

import json
import logging
import sys

import pytest

from selfreflect.artifacts import read_table, write_table
from selfreflect.cli import main
from selfreflect.errors import InputError
from selfreflect.reference_format import read_reference_answers

ANSWERS = [
    {
        "question": "Question: Who wrote Hamlet?",
        "masked_out_task_answers": ["Shakespeare wrote it", "Marlowe wrote it"],
        "conditioning_answers": ["Shakespeare wrote Hamlet", "It was Shakespeare"],
    },
    {
        "question": "Question: What is the capital of France?",
        "masked_out_task_answers": ["Paris is the capital", "Lyon"],
        "conditioning_answers": ["Paris", "The capital is Paris"],
    },
]


def selfreflect(args: list[str], monkeypatch, capsys) -> tuple[int, str, str]:
    """Run the CLI in-process: exit status, stdout, stderr."""
    monkeypatch.setattr(sys, "argv", ["selfreflect", *map(str, args)])
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


def test_export_then_import_keeps_a_failed_question(tmp_path, monkeypatch, capsys):
    """A failed question stays failed, with its reason, through the JSON format."""
    answers = read_reference_answers(write_json(tmp_path / "in.json", ANSWERS))
    answers.at[1, "test_answers"], answers.at[1, "conditioning_answers"] = [], []
    answers.at[1, "error"] = "engine died"
    write_table("answers", answers, tmp_path / "a.parquet")
    assert selfreflect(["export-answers", tmp_path / "a.parquet", tmp_path / "a.json"],
                       monkeypatch, capsys)[0] == 0  # fmt: skip
    assert json.loads((tmp_path / "a.json").read_text())[1]["error"] == "engine died"
    assert "error" not in json.loads((tmp_path / "a.json").read_text())[0]
    back = tmp_path / "back.parquet"
    assert selfreflect(["import-answers", tmp_path / "a.json", back], monkeypatch, capsys)[0] == 0
    assert list(read_table("answers", back)["error"]) == [None, "engine died"]


def test_an_empty_answer_beside_others_is_kept(tmp_path):
    """A model may answer with nothing: such an answer is read as it is, among answers with
    text (a list without one is refused: tests/test_cli_errors.py)."""
    record = {**ANSWERS[0], "masked_out_task_answers": ["", "Shakespeare"]}
    answers = read_reference_answers(write_json(tmp_path / "a.json", [record]))
    assert list(answers.at[0, "test_answers"]) == ["", "Shakespeare"]


def test_duplicate_reference_questions_are_scored_once(tmp_path):
    """As the questions loader, the JSON importer keeps a repeated question once."""
    path = write_json(tmp_path / "dup.json", [ANSWERS[0], ANSWERS[1], ANSWERS[0]])
    assert list(read_reference_answers(path)["question"]) == [a["question"] for a in ANSWERS]


def test_a_repeated_question_with_other_answers_is_refused(tmp_path):
    other = {**ANSWERS[0], "conditioning_answers": ["Marlowe"]}
    path = write_json(tmp_path / "dup.json", [ANSWERS[0], ANSWERS[1], other])
    with pytest.raises(InputError, match="record 2 repeats the question of record 0"):
        read_reference_answers(path)


def test_absent_summary_keys_are_not_failures_and_blank_summaries_warn(
    tiny_model, tmp_path, monkeypatch, capsys, caplog
):
    """Each question is scored on its own keys; a blank summary warns.
    The job logs its progress."""
    caplog.set_level(logging.INFO)
    answers = write_json(tmp_path / "a.json", ANSWERS)
    summaries = write_json(
        tmp_path / "s.json",
        [
            {"question": ANSWERS[0]["question"], "summaries": {"a": "Shakespeare", "b": "   "}},
            {"question": ANSWERS[1]["question"], "summaries": {"b": "Paris", "c": "Lyon"}},
        ],
    )
    out = tmp_path / "scores.json"
    args = ["score", "--test-answers", answers, "--summaries", summaries, "--judge", tiny_model,
            "--out", out, "--stopwords", "none"]  # fmt: skip
    code, stdout, stderr = selfreflect(args, monkeypatch, capsys)
    assert code == 0, stderr
    assert "4 scores (0 failed)" in stdout
    assert "s.json: 1 blank summaries (b)" in stderr
    assert [set(record) for record in json.loads(out.read_text())] == [{"a", "b"}, {"b", "c"}]
    assert "judging: questions: 2/2 (100%)" in caplog.text


def test_unwritable_output_is_named_before_the_model_loads(tmp_path, monkeypatch, capsys):
    """Defect 2 (folder case): a path under a file; the judge does not exist, so the error must
    come before any model loads."""
    answers = write_json(tmp_path / "a.json", ANSWERS)
    summaries = write_json(
        tmp_path / "s.json", [{"question": ANSWERS[0]["question"], "summaries": {"a": "b"}}]
    )
    (tmp_path / "out").write_text("a file")
    args = ["score", "--answers", answers, "--summaries", summaries, "--judge", tmp_path / "none",
            "--out", tmp_path / "out" / "scores.parquet"]  # fmt: skip
    code, _, stderr = selfreflect(args, monkeypatch, capsys)
    assert code == 1
    assert stderr.strip() == f"error: {tmp_path}/out/scores.parquet: cannot write here" + (
        f" ({tmp_path}/out is not a folder)"
    )


def test_a_failed_score_is_null_in_the_reference_scores():
    """reference_scores: a failed score (NaN in the table) is None, JSON's null, not NaN (which
    is no JSON); a question without summaries gets ``{}``; each question's keys in order."""
    import pandas as pd

    from selfreflect.reference_format import reference_scores

    answers = pd.DataFrame({"id": ["q1", "q2", "q3"]})
    summaries = pd.DataFrame({"id": ["q1", "q1", "q2"], "strategy": ["b", "a", "a"]})
    scores = pd.DataFrame(
        {"id": ["q1", "q1", "q2"], "strategy": ["a", "b", "a"], "score": [0.25, float("nan"), 1]}
    )
    out = reference_scores(answers, summaries, scores)
    assert out == [{"b": None, "a": 0.25}, {"a": 1.0}, {}]
    assert list(out[0]) == ["b", "a"] and out[0]["b"] is None
