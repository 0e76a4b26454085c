"""Strict inputs: files that a lenient reader would half-accept, plug-ins and model files that
fail, shards of another run. Each case exits non-zero with exactly one stderr line naming the
file and what is wrong, raises no traceback and leaves no file behind (the harness of
``tests/test_cli_errors.py``, in-process through ``selfreflect.cli.main``). The faults that need
a full disk or a corrupt checkpoint follow the corpus.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pandas as pd
import pytest

from selfreflect import checkpoints
from selfreflect.artifacts import read_table, write_table
from selfreflect.cli import main
from selfreflect.model_sources import package_file
from tests.conftest import SMOLLM2_FILE, SMOLLM2_PACKAGE
from tests.test_cli_errors import (
    ANSWERS_ROW,
    GOOD_ANSWERS,
    QUESTIONS,
    QUESTIONS_ROW,
    SCORE,
    Case,
    config,
    materialise,
    questions_with,
    run_main,
)
from tests.test_faults import assert_one_line, in_namespace, needs_namespace


def q_case(name: str, filename: str, content: str, *expect: str) -> Case:
    """Dataset ``d`` reads ``filename``."""
    files = {"c.yaml": questions_with(filename), filename: content}
    return Case(name, files, QUESTIONS, (filename, *expect))


def c_case(name: str, text: str, *expect: str) -> Case:
    """A config, run through the questions command."""
    return Case(name, {"c.yaml": text, "q.jsonl": '{"question": "Q?"}\n'}, QUESTIONS, expect)


def openai_model(**settings) -> str:
    model = {"path": "gpt", "backend": "openai", "base_url": "http://127.0.0.1:9/v1", **settings}
    return config(lambda c: c["models"].update(tiny=model))


VOTE = "def vote(ctx):\n    return 'a'\n"


def plugin_case(name: str, module: str, code: str | None, *expect: str) -> Case:
    """A config whose strategy ``vote`` is the plug-in ``module:vote`` (``code``, if any, is
    ``module``'s file in the working directory); its error names the config file and key."""
    plugins = {"strategies": ["vote"], "plugins": {"vote": f"{module}:vote"}}
    with_plugin = {"summaries": plugins, "report": {"baseline": "vote"}}
    files = {"c.yaml": config(lambda c: c.update(with_plugin))}
    if code is not None:
        files[f"{module}.py"] = code
    args = ["summarize", "--config", "{tmp}/c.yaml", "--subject", "tiny", "--strategy", "vote"]
    args += ["--questions", "{tmp}/q.pq", "--out", "{tmp}/o/s.pq"]
    return Case(name, files, args, ("c.yaml: summaries.plugins.vote: strategy 'vote'", *expect))


def smollm2_head(size: int):
    """A writer of the first ``size`` bytes of SmolLM2's GGUF file (a truncated download)."""

    def write(path: Path) -> None:
        with package_file(SMOLLM2_PACKAGE, SMOLLM2_FILE).open("rb") as source:
            path.write_bytes(source.read(size))

    return write


def gguf_case(name: str, content, *expect: str) -> Case:
    files = {"c.yaml": config(lambda c: c["models"].update(tiny={"gguf": "{tmp}/m.gguf"}))}
    args = ["convert-model", "--config", "{tmp}/c.yaml", "--model", "tiny", "--out", "{tmp}/o/m"]
    return Case(
        name, {**files, "m.gguf": content}, args, ("m.gguf", "not a readable GGUF", *expect)
    )


def table(kind: str, row: dict, run: str | None = None, **change):
    """A writer of a one-row ``kind`` artifact recorded as written by ``run``."""
    frame = pd.DataFrame([{**row, **change}])
    return lambda path: write_table(kind, frame, path, {"run": run} if run else None)


def no_rows(kind: str, row: dict):
    """A writer of a ``kind`` artifact with the columns of ``row`` and no row."""
    return lambda path: write_table(kind, pd.DataFrame([row]).iloc[:0], path)


def merge_case(name: str, shard, *expect: str) -> Case:
    files = {"q.pq": table("questions", QUESTIONS_ROW, run="t"), "p0.pq": shard}
    args = ["merge", "answers", "--questions", "{tmp}/q.pq", "--out", "{tmp}/o/a.pq", "{tmp}/p0.pq"]
    return Case(name, files, args, ("p0.pq", *expect))


def judge_case(name: str, metadata: dict, rows: int, *expect: str) -> Case:
    """``selfreflect judge`` given an answers file of ``rows`` rows labelled ``metadata``."""
    answers = pd.DataFrame([ANSWERS_ROW] * rows or [ANSWERS_ROW]).iloc[:rows]
    files = {
        "c.yaml": config(),
        "q.pq": table("questions", QUESTIONS_ROW),
        "a.pq": lambda path: write_table("answers", answers, path, metadata),
    }
    args = ["judge", "--config", "{tmp}/c.yaml", "--dataset", "d", "--subject", "tiny"]
    args += ["--judge", "tiny", "--questions", "{tmp}/q.pq", "--answers", "{tmp}/a.pq"]
    args += ["--cache", "{tmp}/cache", "--out", "{tmp}/o/j.pq"]
    return Case(name, files, args, ("a.pq", *expect))


SUMMARY_ROW = {
    **{"id": "x", "question": "Question: Q?", "strategy": "greedy", "summary": "a"},
    **{"summarizer": "tiny", "prompt_tokens": 1, "completion_tokens": 1, "seconds": 0.1},
    **{"dataset": "d", "subject": "tiny", "error": None},
}


def score_parquet_case(name: str, answers, summaries, *expect: str) -> Case:
    """``selfreflect score`` of the summaries table ``summaries`` given the answers table
    ``answers`` (writers of the two Parquet files)."""
    args = ["score", "--judge", "{tmp}/judge", "--answers", "{tmp}/a.pq"]
    args += ["--summaries", "{tmp}/s.pq", "--out", "{tmp}/o/s.pq"]
    return Case(name, {"a.pq": answers, "s.pq": summaries}, args, expect)


SUMMARIES = table("summaries", SUMMARY_ROW)
ANSWERS = table("answers", ANSWERS_ROW)

DUPLICATE_SUMMARY = '[{"question": "Q?", "summaries": {"a": "x", "a": "y"}}]'

CASES = [
    # --- YAML: repeated keys, errors that name the file -----------------------------------------
    c_case("yaml-repeated-key", "run: t\nseed: 1\nseed: 2\n", "c.yaml", "line 3", "key 'seed'"),
    c_case(
        "yaml-repeated-nested-key",
        "run: t\nmodels:\n  tiny: {path: a, path: b}\n",
        "c.yaml",
        "line 3",
        "duplicate key 'path'",
    ),
    c_case("yaml-tab-indent", "run: t\n\tseed: 1\n", "c.yaml", "malformed YAML", "line 2"),
    # --- the openai backend's keys ----------------------------------------------------------------
    c_case(
        "openai-without-base-url",
        config(lambda c: c["models"].update(tiny={"path": "gpt", "backend": "openai"})),
        "c.yaml",
        "models.tiny.base_url",
        "required",
    ),
    c_case("openai-timeout-zero", openai_model(timeout=0), "c.yaml", "models.tiny.timeout"),
    c_case(
        "openai-retries-negative", openai_model(max_retries=-1), "c.yaml", "models.tiny.max_retries"
    ),
    # --- CSV: quoting, repeated and extra columns -----------------------------------------------
    q_case(
        "csv-unterminated-quote",
        "q.csv",
        'question\n"Who wrote Hamlet?\nWhere is Paris?\n',
        "line 2",
        "never closed",
    ),
    q_case("csv-text-after-quote", "q.csv", 'question\nA?\n"Who" me?\n', "line 3", "malformed"),
    q_case("csv-repeated-column", "q.csv", "question,question\nA?,B?\n", "line 1", "twice"),
    q_case("csv-unquoted-comma", "q.csv", "question\nWho, me?\n", "line 2", "2 fields"),
    # --- JSON and JSON Lines: repeated keys, bad quoting ------------------------------------------
    q_case(
        "jsonl-repeated-key",
        "q.jsonl",
        '{"question": "A?"}\n{"question": "B?", "question": "C?"}\n',
        "line 2",
        "duplicate key 'question'",
    ),
    q_case("jsonl-unterminated-string", "q.jsonl", '{"question": "A?}\n', "line 1", "malformed"),
    q_case("json-repeated-key", "q.json", '[{"question": "A?", "question": "B?"}]', "'question'"),
    Case(
        "reference-repeated-key",
        {"ref.json": '[{"question": "Q?", "question": "R?"}]'},
        ["import-answers", "{tmp}/ref.json", "{tmp}/o/a.pq"],
        ("ref.json", "duplicate key 'question'"),
    ),
    Case(
        "reference-summaries-repeated-key",
        {"a.json": json.dumps(GOOD_ANSWERS), "s.json": DUPLICATE_SUMMARY},
        [*SCORE, "--summaries", "{tmp}/s.json", "--out", "{tmp}/o/s.json"],
        ("s.json", "duplicate key 'a'"),
    ),
    # --- plug-ins: read at the config's check, imported by the job -----------------------------
    plugin_case(
        "plugin-raises", "plugin_raises", f"raise RuntimeError('boom')\n{VOTE}", "RuntimeError"
    ),
    plugin_case("plugin-syntax", "plugin_syntax", "def vote(:\n", "plugin_syntax.py:1:"),
    plugin_case(
        "plugin-missing-dependency",
        "plugin_dependency",
        f"import no_such_dependency_xyz\n{VOTE}",
        "no_such_dependency_xyz",
    ),
    plugin_case("plugin-no-function", "plugin_empty", "x = 1\n", "defines no 'vote'"),
    plugin_case(
        "plugin-not-a-function",
        "plugin_value",
        "vote = 'a'\n",
        "plugin_value.py binds 'vote' to a value, not a function",
    ),
    plugin_case("plugin-shadowed", "json", VOTE, "imported is", "json.py (a module of"),
    plugin_case("plugin-not-of-the-project", "this", None, "'this' is no .py file of the project"),
    # --- GGUF files -------------------------------------------------------------------------------
    gguf_case("gguf-not-gguf", b"hello, not a model", "magic"),
    gguf_case("gguf-truncated-header", smollm2_head(100)),
    gguf_case("gguf-truncated-tensors", smollm2_head(5 * 2**20), "reshape"),
    # --- merging shards of another run ------------------------------------------------------------
    merge_case("merge-shard-of-another-run", table("answers", ANSWERS_ROW, run="u"), "run 'u'"),
    merge_case(
        "merge-shard-with-other-questions",
        table("answers", ANSWERS_ROW, id="y"),
        "question y is not among the questions",
    ),
    # --- answers files with nulls where every row holds a value ----------------------------------
    *[
        Case(
            f"answers-null-{name}-{fmt}",
            {"a.pq": table("answers", ANSWERS_ROW, **change)},
            ["export-answers", "--format", fmt, "{tmp}/a.pq", f"{{tmp}}/o/{out}"],
            ("a.pq", expect, "row 0 (id x)"),
        )
        for name, change, expect in [
            ("list", {"test_answers": None}, "field 'test_answers' is empty"),
            ("item", {"conditioning_answers": ["b", None]}, "'conditioning_answers' has an empty"),
            ("question", {"question": None}, "field 'question' is empty"),
        ]
        for fmt, out in [("reference", "a.json"), ("hf", "set")]
    ],
    # --- answers that are not the scored summaries' -----------------------------------------------
    score_parquet_case(
        "score-no-answers", no_rows("answers", ANSWERS_ROW), SUMMARIES, "a.pq: no answers to judge"
    ),
    score_parquet_case(
        "score-no-summaries",
        ANSWERS,
        no_rows("summaries", SUMMARY_ROW),
        "s.pq: no summaries to score",
    ),
    score_parquet_case(
        "score-answers-of-other-questions",
        table("answers", ANSWERS_ROW, id="y"),
        SUMMARIES,
        "s.pq: no summary's question is in",
        "a.pq",
    ),
    score_parquet_case(
        "score-answers-of-another-subject",
        lambda path: write_table("answers", pd.DataFrame([ANSWERS_ROW]), path, {"subject": "u"}),
        SUMMARIES,
        "a.pq: subject: answers of 'u', not of 'tiny'",
    ),
    # --- answers that are not the judge job's -----------------------------------------------------
    judge_case("judge-no-answers", {"dataset": "d", "subject": "tiny"}, 0, "no answers to judge"),
    judge_case(
        "judge-answers-of-another-dataset",
        {"dataset": "e", "subject": "tiny"},
        1,
        "dataset: answers of 'e', not of 'd'",
    ),
    judge_case(
        "judge-answers-of-another-subject",
        {"dataset": "d", "subject": "other"},
        1,
        "subject: answers of 'other', not of 'tiny'",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_strict_input_fails_with_one_line(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))  # plug-ins put the folder on it
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # nor may a plug-in leave a .pyc
    args = materialise(case, tmp_path)
    before = sorted(tmp_path.rglob("*"))
    code, stderr = run_main(args, monkeypatch, capsys)
    assert code not in (0, None)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for fragment in case.expect:
        assert fragment in lines[0], (fragment, lines[0])
    assert sorted(tmp_path.rglob("*")) == before, "a failed command left a file behind"


def test_merge_accepts_the_shards_of_its_run(tmp_path, monkeypatch):
    """The checks above refuse only foreign shards: the run's own merge as before."""
    monkeypatch.chdir(tmp_path)
    table("questions", QUESTIONS_ROW, run="t")(tmp_path / "q.pq")
    table("answers", ANSWERS_ROW, run="t")(tmp_path / "p0.pq")
    args = ["merge", "answers", "--questions", "q.pq", "--out", "a.pq", "p0.pq"]
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args])
    main()
    assert list(read_table("answers", tmp_path / "a.pq")["id"]) == ["x"]


# --- faults -----------------------------------------------------------------------------------


@needs_namespace
def test_full_disk_under_a_model_folder_is_one_line_naming_it(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    result = in_namespace(
        f"mount -t tmpfs -o size=64k tmpfs {disk}",
        ["tiny-model", "--out", str(disk / "tiny")],
        f"ls -A {disk} >&2",
    )
    assert_one_line(result, str(disk / "tiny"), "cannot write", "No space left")


def test_corrupt_checkpoint_is_set_aside_and_its_chunk_computed_again(tmp_path, caplog):
    items = pd.DataFrame([{**QUESTIONS_ROW, "id": f"q{i}", "source_index": i} for i in range(4)])
    computed = []

    def work(chunk: pd.DataFrame) -> pd.DataFrame:
        computed.append(list(chunk["id"]))
        return chunk

    directory = tmp_path / ".out.checkpoints" / "key"
    first = checkpoints.run_chunked("questions", items, work, directory, 2)
    damaged = sorted(directory.iterdir())[1]
    truncated = damaged.read_bytes()[:50]
    damaged.write_bytes(truncated)
    computed.clear()
    with caplog.at_level(logging.WARNING, logger="selfreflect.checkpoints"):
        again = checkpoints.run_chunked("questions", items, work, directory, 2)
    pd.testing.assert_frame_equal(again, first)
    assert computed == [["q2", "q3"]], "only the damaged chunk is computed again"
    aside = tmp_path / ".out.checkpoints" / "corrupt" / f"key-{damaged.name}"
    assert aside.read_bytes() == truncated
    assert [r.getMessage().split(";")[0] for r in caplog.records] == [
        f"corrupt checkpoint moved to {aside}"
    ]
    assert read_table("questions", damaged)["id"].tolist() == ["q2", "q3"]  # rewritten
