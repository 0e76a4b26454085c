"""The bad-input corpus: every wrong config, question file, reference JSON, Parquet artifact and
command-line argument a new user is likely to try. Each case must exit non-zero with exactly one
stderr line naming the file and the field, raise no traceback and leave no file behind.

The CLI runs in-process through its real entry point (``selfreflect.cli.main``); no case loads a
model, as each error must come before any model loads.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from selfreflect.artifacts import write_table
from selfreflect.cli import main

BASE = {
    "run": "t",
    "models": {"tiny": {"path": "{tmp}/no-model"}},
    "subjects": ["tiny"],
    "judges": ["tiny"],
    "datasets": {"d": {"source": "local", "path": "{tmp}/q.jsonl"}},
}
QUESTIONS = ["questions", "--config", "{tmp}/c.yaml", "--dataset", "d", "--out", "{tmp}/o/q.pq"]
GOOD_ANSWERS = [{"question": "Q?", "masked_out_task_answers": ["a"], "conditioning_answers": ["b"]}]


def config(change: Callable[[dict], object] = lambda c: None) -> str:
    """The base config as YAML, after ``change`` edits a copy of it."""
    data = json.loads(json.dumps(BASE))
    change(data)
    return yaml.safe_dump(data)


def questions_with(path: str, **spec: str) -> str:
    """A config whose dataset ``d`` reads ``path`` (relative to the test folder)."""
    return config(lambda c: c["datasets"]["d"].update(path=f"{{tmp}}/{path}", **spec))


def parquet(frame: pd.DataFrame) -> Callable[[Path], None]:
    return lambda path: pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)


def artifact(kind: str, frame: pd.DataFrame) -> Callable[[Path], None]:
    return lambda path: write_table(kind, frame, path)


ANSWERS_ROW = {
    "id": "x",
    "question": "Question: Q?",
    "test_answers": ["a"],
    "conditioning_answers": ["b"],
    "backend": "vllm",
    "model": "m",
    "seed": 1,
    "error": None,
}
QUESTIONS_ROW = {
    "id": "x",
    "question": "Question: Q?",
    "dataset": "d",
    "source_index": 0,
    "choices": None,
    "gold": None,
}


@dataclass
class Case:
    """Input files (name -> text, bytes or writer), the command line, expected fragments."""

    name: str
    files: dict[str, str | bytes | Callable[[Path], None]]
    args: list[str]
    expect: tuple[str, ...]
    absent: tuple[str, ...] = field(default=())  # must not appear in stderr (secrets)


def q_case(name: str, filename: str, content, *expect: str, **spec: str) -> Case:
    """A questions-file case: dataset ``d`` reads ``filename``."""
    files = {"c.yaml": questions_with(filename, **spec), filename: content}
    return Case(name, files, QUESTIONS, (filename, *expect))


def c_case(name: str, text: str | bytes, *expect: str, absent: tuple[str, ...] = ()) -> Case:
    """A config case, run through the questions command."""
    files = {"c.yaml": text, "q.jsonl": '{"question": "Q?"}\n'}
    return Case(name, files, QUESTIONS, ("c.yaml", *expect), absent)


def import_case(name: str, content, *expect: str) -> Case:
    files = {"ref.json": content}
    return Case(name, files, ["import-answers", "{tmp}/ref.json", "{tmp}/o/a.pq"], expect)


SCORE = ["score", "--judge", "{tmp}/judge", "--answers", "{tmp}/a.json"]


def score_case(name: str, summaries, *expect: str) -> Case:
    files = {"a.json": json.dumps(GOOD_ANSWERS), "s.json": summaries}
    args = [*SCORE, "--summaries", "{tmp}/s.json", "--out", "{tmp}/o/s.json"]
    return Case(name, files, args, expect)


def export_case(name: str, writer, *expect: str) -> Case:
    files = {"a.pq": writer}
    return Case(name, files, ["export-answers", "{tmp}/a.pq", "{tmp}/o/a.json"], ("a.pq", *expect))


def with_metadata(text: bytes) -> Callable[[Path], None]:
    """An answers artifact whose ``selfreflect`` metadata is ``text``."""

    def write(path: Path) -> None:
        write_table("answers", pd.DataFrame([ANSWERS_ROW]), path)
        table = pq.read_table(path)
        pq.write_table(table.replace_schema_metadata({b"selfreflect": text}), path)

    return write


def metadata_case(name: str, text: bytes, expect: str) -> Case:
    """``merge answers`` reading a shard whose ``selfreflect`` metadata is ``text``."""
    files = {
        "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW])),
        "p0.pq": with_metadata(text),
    }
    args = ["merge", "answers", "--questions", "{tmp}/q.pq", "--out", "{tmp}/o/a.pq", "{tmp}/p0.pq"]
    return Case(name, files, args, ("p0.pq", expect))


JUDGEMENT_ROW = {
    **{key: None for key in ("strategy", "pair_type", "side", "axis", "size", "summary")},
    **{"error": None, "tasks": None, "score": 0.5, "num_tasks": 1, "temperature": 1.0},
    **{"id": "y", "dataset": "d", "subject": "tiny", "judge": "tiny", "kind": "mc"},
}
REPORT_TABLE = ["--config", "{tmp}/c.yaml", "--out-dir", "{tmp}/o"]
EXPERIMENT_ARGS = [
    "--config",
    "{tmp}/c.yaml",
    "--dataset",
    "d",
    "--subject",
    "tiny",
    "--judge",
    "tiny",
]
MC_INPUTS = ["--questions", "{tmp}/q.pq", "--answers", "{tmp}/a.pq", "--judgements", "{tmp}/j.pq"]


def twice_case(name: str, command: list[str], *files: str) -> Case:
    """A report command given the same file twice (by the paths ``files``)."""
    args = ["report", *command, *[f"{{tmp}}/{file}" for file in files]]
    return Case(name, {"c.yaml": config(), "s.pq": b"not read"}, args, ("given twice",))


SECRET = "sk-proj-Xy12secret"
ANSWERS_CMD = ["answers", "--config", "{tmp}/c.yaml", "--subject", "tiny"]
OUT_A = ["--out", "{tmp}/o/a.pq"]

CASES = [
    # --- configs -------------------------------------------------------------------------------
    Case("config-missing", {}, QUESTIONS, ("c.yaml", "config file not found")),
    c_case("config-malformed-yaml", "run: [t\nseed: 1\n", "malformed YAML", "line"),
    c_case("config-empty", "", "mapping"),
    c_case("config-list", "- run\n- seed\n", "mapping"),
    c_case("config-not-utf8", b"run: \xff\xfe\n", "not UTF-8"),
    c_case("config-unknown-key", config(lambda c: c.update(sede=1)), "sede"),
    c_case(
        "config-none-of-the-alternatives",
        config(lambda c: c.update(scoring={"token_budget": "big"})),
        "scoring.token_budget: 'big' is none of: an integer >= 1, null, 'auto'",
    ),
    c_case(
        "config-negative-value",
        config(lambda c: c.update(answers={"max_tokens": -5})),
        "answers.max_tokens",
    ),
    c_case(
        "config-wrong-type",
        config(lambda c: c.update(questions={"num_questions": "ten"})),
        "questions.num_questions",
    ),
    c_case("config-unknown-subject", config(lambda c: c.update(subjects=["big"])), "subjects"),
    c_case(
        "config-unknown-summary-dataset",
        config(lambda c: c.update(summaries={"datasets": ["nq"]})),
        "summaries.datasets",
    ),
    c_case(
        "config-bad-backend",
        config(lambda c: c["models"]["tiny"].update(backend="llama")),
        "models.tiny.backend",
    ),
    c_case(
        "config-bad-agreement-backend",
        config(lambda c: c.update(report={"agreement_backends": ["hf", "llama"]})),
        "report.agreement_backends",
        "'llama'",
    ),
    c_case("config-bad-run-name", config(lambda c: c.update(run="a/b")), "run"),
    c_case(
        "config-pasted-api-key",  # the key must not be echoed
        config(lambda c: c["models"]["tiny"].update(backend="openai", api_key_env=SECRET)),
        "models.tiny.api_key_env",
        absent=(SECRET, "Xy12secret"),
    ),
    c_case(
        "config-alias-bomb",
        "\n".join(
            [f"l0: &l0 [{', '.join(['lol'] * 9)}]"]
            + [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
        ),
        "line 5",
        "aliases expand to more than 100000 nodes and characters",
    ),
    c_case(
        "config-baseline-not-a-strategy",
        config(lambda c: c.update(report={"baseline": "nosuch"})),
        "report.baseline: 'nosuch' is not a strategy of this run",
    ),
    Case(
        "config-unknown-dataset-argument",
        {"c.yaml": config()},
        [*QUESTIONS[:4], "nq", *QUESTIONS[5:]],
        ("c.yaml", "unknown dataset 'nq'"),
    ),
    # --- question files ------------------------------------------------------------------------
    Case("questions-missing", {"c.yaml": questions_with("gone.jsonl")}, QUESTIONS, ("gone.jsonl",)),
    q_case("questions-extension", "q.txt", "Q?\n", "unsupported file extension"),
    q_case("json-malformed", "q.json", '[{"question": "Q?"', "malformed JSON"),
    q_case("json-object", "q.json", '{"question": "Q?"}', "expected a JSON list"),
    q_case("json-empty-list", "q.json", "[]", "no questions"),
    q_case("json-record-not-object", "q.json", '[{"question": "Q?"}, 3]', "record 1"),
    q_case("json-missing-field", "q.json", '[{"text": "Q?"}]', "record 0", "'question'"),
    q_case("json-field-not-string", "q.json", '[{"question": 7}]', "'question'", "int"),
    q_case("jsonl-malformed-line", "q.jsonl", '{"question": "A?"}\n{"question"\n', "line 2"),
    q_case("jsonl-blank-question", "q.jsonl", '{"question": "A?"}\n{"question": " "}\n', "line 2"),
    q_case("jsonl-not-utf8", "q.jsonl", b'{"question": "\xe9t\xe9?"}\n', "not UTF-8"),
    q_case(
        "jsonl-lone-surrogate",
        "q.jsonl",
        '{"question": "A?"}\n{"question": "cut \\ud800 here?"}\n',
        'line 2: ["question"]: a lone UTF-16 surrogate',
    ),
    q_case(
        "jsonl-nested-field",
        "q.jsonl",
        '{"question": {"title": "A?"}}\n',
        "'question.text'",
        field="question.text",
    ),
    q_case("csv-missing-column", "q.csv", "text\nWho?\n", "line 2", "'question'"),
    q_case("csv-header-only", "q.csv", "question\n", "no questions"),
    q_case("csv-latin1", "q.csv", "question\nQui \xe9tait-ce?\n".encode("latin-1"), "not UTF-8"),
    q_case("parquet-garbage", "q.parquet", b"PAR1 not really", "not a readable Parquet"),
    q_case(
        "parquet-missing-column",
        "q.parquet",
        parquet(pd.DataFrame({"text": ["Q?"]})),
        "record 0",
        "'question'",
    ),
    # --- reference JSON ------------------------------------------------------------------------
    import_case("ref-missing", None, "ref.json", "file not found"),
    import_case("ref-empty-list", "[]", "ref.json", "no records"),
    import_case("ref-malformed", '[{"question": "Q?", ', "ref.json", "malformed JSON"),
    import_case("ref-not-list", '{"question": "Q?"}', "ref.json", "JSON list"),
    import_case("ref-record-not-object", '["Q?"]', "ref.json", "record 0"),
    import_case(
        "ref-missing-field",
        '[{"question": "Q?", "masked_out_task_answers": []}]',
        "ref.json",
        "'conditioning_answers'",
    ),
    import_case(
        "ref-answers-not-strings",
        '[{"question": "Q?", "masked_out_task_answers": [1], "conditioning_answers": []}]',
        "ref.json",
        "'masked_out_task_answers'",
    ),
    import_case(
        "ref-question-not-string",
        '[{"question": 1, "masked_out_task_answers": [], "conditioning_answers": []}]',
        "ref.json",
        "'question'",
    ),
    *[
        import_case(
            f"ref-answered-{name}-{field}",
            json.dumps([GOOD_ANSWERS[0], {**GOOD_ANSWERS[0], "question": "R?", field: value}]),
            "ref.json",
            f"record 1: '{field}' holds no answer with text",
        )
        for name, value in [("empty", []), ("blank", ["", " \n"])]
        for field in ("masked_out_task_answers", "conditioning_answers")
    ],
    import_case(
        "ref-question-blank",
        json.dumps([GOOD_ANSWERS[0], {**GOOD_ANSWERS[0], "question": " "}]),
        "ref.json",
        "record 1: 'question' is empty",
    ),
    import_case(
        "ref-answer-lone-surrogate",
        '[{"question": "Q?", "masked_out_task_answers": ["a", "\\ud83db"],'
        ' "conditioning_answers": ["c"]}]',
        "ref.json",
        '[0]["masked_out_task_answers"][1]: a lone UTF-16 surrogate',
    ),
    import_case(
        "ref-error-not-string",
        json.dumps([{**GOOD_ANSWERS[0], "error": 3}]),
        "ref.json",
        "'error'",
    ),
    score_case("ref-summaries-missing-field", '[{"question": "Q?"}]', "s.json", "'summaries'"),
    score_case(
        "ref-summary-not-string",
        '[{"question": "Q?", "summaries": {"a": 1}}]',
        "s.json",
        "summary 'a'",
    ),
    score_case("ref-summaries-empty", "[]", "s.json", "no records"),
    # --- Parquet artifacts ---------------------------------------------------------------------
    export_case("parquet-not-parquet", b"garbage", "not a readable Parquet"),
    export_case(
        "parquet-wrong-kind",
        artifact("questions", pd.DataFrame([QUESTIONS_ROW])),
        "'test_answers'",
    ),
    export_case(
        "parquet-wrong-type",
        parquet(pd.DataFrame([ANSWERS_ROW]).assign(test_answers="a")),
        "'test_answers'",
        "type",
    ),
    metadata_case("metadata-not-json", b"{oops", "metadata 'selfreflect': not JSON"),
    metadata_case("metadata-a-list", b"[1, 2]", "expected a JSON object, found list"),
    metadata_case("metadata-a-number", b"3", "expected a JSON object, found int"),
    twice_case(
        "report-same-scores-twice",
        ["main-table", *REPORT_TABLE, "--figure-dir", "f"],
        "s.pq",
        "s.pq",
    ),
    twice_case("report-same-file-by-two-paths", ["cost-table", *REPORT_TABLE], "s.pq", "./s.pq"),
    twice_case(
        "report-same-summaries-twice",
        ["agreement-scores", *EXPERIMENT_ARGS, "--answers", "{tmp}/a.pq", "--out", "{tmp}/o/g"],
        "s.pq",
        "s.pq",
    ),
    Case(
        "report-score-without-answers-row",
        {
            "c.yaml": config(),
            "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW])),
            "a.pq": artifact("answers", pd.DataFrame([ANSWERS_ROW])),
            "j.pq": artifact("judgements", pd.DataFrame([JUDGEMENT_ROW])),
        },
        ["report", "mc-scores", "--config", "{tmp}/c.yaml", *MC_INPUTS, "--out", "{tmp}/o/m.pq"],
        ("j.pq", "id 'y' has no row in", "a.pq"),
    ),
    *[
        Case(  # a score is a total-variation distance
            f"report-judgement-score-{value}",
            {
                "c.yaml": config(),
                "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW])),
                "a.pq": artifact("answers", pd.DataFrame([{**ANSWERS_ROW, "id": "y"}])),
                "j.pq": artifact("judgements", pd.DataFrame([{**JUDGEMENT_ROW, "score": value}])),
            },
            [
                "report",
                "mc-scores",
                "--config",
                "{tmp}/c.yaml",
                *MC_INPUTS,
                "--out",
                "{tmp}/o/m.pq",
            ],
            ("j.pq", f"field 'score' is {value} in row 0 (id y), not in [0.0, 1.0]"),
        )
        for value in (float("inf"), -5.0, 1.01)
    ],
    Case(  # the multiple-choice study reads the answers a batch at a time, each checked
        "report-mc-answers-with-an-empty-item-after-the-first-batch",
        {
            "c.yaml": config(),
            "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW])),
            "a.pq": artifact(
                "answers",
                pd.DataFrame([{**ANSWERS_ROW, "id": f"a{i}"} for i in range(69)] + [ANSWERS_ROW])
                .assign(id=lambda rows: [*rows["id"][:-1], "y"])
                .assign(
                    test_answers=lambda rows: [
                        ["a", None] if i == 66 else ["a"] for i in rows.index
                    ]
                ),
            ),
            "j.pq": artifact("judgements", pd.DataFrame([JUDGEMENT_ROW])),
        },
        ["report", "mc-scores", "--config", "{tmp}/c.yaml", *MC_INPUTS, "--out", "{tmp}/o/m.pq"],
        ("a.pq", "field 'test_answers' has an empty item in row 66 (id a66)"),
    ),
    Case(
        "answers-questions-not-a-table",
        {"c.yaml": config(), "q.pq": artifact("answers", pd.DataFrame([ANSWERS_ROW]))},
        [*ANSWERS_CMD, "--questions", "{tmp}/q.pq", "--out", "{tmp}/o/a.pq"],
        ("q.pq", "'dataset'"),
    ),
    Case(
        "merge-missing-part",
        {"q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        ["merge", "answers", "--questions", "{tmp}/q.pq", "--out", "{tmp}/o/a.pq", "{tmp}/p0.pq"],
        ("p0.pq", "file not found"),
    ),
    # --- command-line arguments ----------------------------------------------------------------
    Case("cli-missing-option", {}, ["questions", "--dataset", "d"], ("'--config'",)),
    Case("cli-bad-choice", {}, ["merge", "tables", "x"], ("'tables'", "merge")),
    Case(
        "cli-shard-out-of-range",
        {"c.yaml": config(), "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        [*ANSWERS_CMD, "--questions", "{tmp}/q.pq", "--shard", "3", "--shards", "2", *OUT_A],
        ("shard 3",),
    ),
    Case(
        "cli-unknown-subject",
        {"c.yaml": config(), "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        [
            "answers",
            "--config",
            "{tmp}/c.yaml",
            "--subject",
            "big",
            "--questions",
            "{tmp}/q.pq",
            *OUT_A,
        ],
        ("c.yaml", "'big'"),
    ),
    Case(
        "cli-unknown-strategy",
        {"c.yaml": config(), "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        [
            "summarize",
            "--config",
            "{tmp}/c.yaml",
            "--subject",
            "tiny",
            "--strategy",
            "vote",
            "--questions",
            "{tmp}/q.pq",
            "--out",
            "{tmp}/o/s.pq",
        ],
        ("'vote'",),
    ),
    Case(  # named before a strategy loads it: the config's file and field, not the strategy
        "cli-summarize-missing-model",
        {"c.yaml": config(), "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        [
            *("summarize", "--config", "{tmp}/c.yaml", "--subject", "tiny"),
            *("--strategy", "greedy", "--questions", "{tmp}/q.pq", "--out", "{tmp}/o/s.pq"),
        ],
        ("c.yaml: models.tiny.path:", "no-model", "not found"),
    ),
    Case(
        "cli-unknown-judge",
        {"c.yaml": config(), "a.json": json.dumps(GOOD_ANSWERS)},
        [
            "score",
            "--config",
            "{tmp}/c.yaml",
            "--judge",
            "big",
            "--answers",
            "{tmp}/a.json",
            "--summaries",
            "{tmp}/a.json",
            "--out",
            "{tmp}/o/s.json",
        ],
        ("c.yaml", "'big'"),
    ),
    Case(
        "cli-batch-size-zero",
        {},
        [*SCORE, "--summaries", "s", "--out", "o", "--batch-size", "0"],
        ("--batch-size",),
    ),
    Case(  # a link is the file it links to: its rows would count twice
        "report-same-file-by-a-link",
        {
            "c.yaml": config(),
            "s.pq": b"not read",
            "link.pq": lambda path: path.symlink_to(path.parent / "s.pq"),
        },
        ["report", "cost-table", *REPORT_TABLE, "{tmp}/s.pq", "{tmp}/link.pq"],
        ("link.pq", "given twice"),
    ),
    Case(
        "report-a-folder-as-a-file",
        {"c.yaml": config(), "s.pq": lambda path: path.mkdir()},
        ["report", "cost-table", *REPORT_TABLE, "{tmp}/s.pq"],
        ("s.pq", "is a directory"),
    ),
    Case(
        "cli-questions-a-folder",
        {"c.yaml": config(), "q.pq": lambda path: path.mkdir()},
        [*ANSWERS_CMD, "--questions", "{tmp}/q.pq", *OUT_A],
        ("--questions", "q.pq", "is a directory"),
    ),
    Case(
        "cli-gpus-negative",
        {"c.yaml": config(), "q.pq": artifact("questions", pd.DataFrame([QUESTIONS_ROW]))},
        [*ANSWERS_CMD, "--questions", "{tmp}/q.pq", *OUT_A, "--gpus", "-1"],
        ("--gpus", "-1"),
    ),
    Case(  # the name becomes part of the table's rows and of paths
        "cli-import-answers-bad-dataset-name",
        {"ref.json": json.dumps(GOOD_ANSWERS)},
        ["import-answers", "{tmp}/ref.json", "{tmp}/o/a.pq", "--dataset", "../x"],
        ("--dataset", "'../x' is not a valid name"),
    ),
    Case(
        "cli-output-under-a-file",  # one line, before any model loads
        {
            "a.json": json.dumps(GOOD_ANSWERS),
            "s.json": '[{"question": "Q?", "summaries": {"a": "b"}}]',
            "o": "a file, not a folder",
        },
        [*SCORE, "--summaries", "{tmp}/s.json", "--out", "{tmp}/o/s.json"],
        ("o/s.json", "cannot write"),
    ),
    Case(
        "questions-output-under-a-file",
        {"c.yaml": config(), "q.jsonl": '{"question": "Q?"}\n', "o": "a file"},
        QUESTIONS,
        ("o/q.pq",),
    ),
]


def materialise(case: Case, tmp: Path) -> list[str]:
    """Write the case's files into ``tmp``; its arguments with ``{tmp}`` filled in."""
    for name, content in case.files.items():
        path = tmp / name
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content.replace("{tmp}", str(tmp)), encoding="utf-8")
    return [arg.replace("{tmp}", str(tmp)) for arg in case.args]


def run_main(args: list[str], monkeypatch, capsys) -> tuple[int, str]:
    """Exit status and stderr of ``selfreflect ARGS`` run in-process (tracebacks propagate)."""
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    return exit_.value.code, capsys.readouterr().err


def test_the_corpus_is_large_and_named_uniquely():
    assert len(CASES) >= 40
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_input_fails_with_one_line(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = materialise(case, tmp_path)
    before = sorted(tmp_path.rglob("*"))
    code, stderr = run_main(args, monkeypatch, capsys)
    assert code not in (0, None)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for fragment in case.expect:
        assert fragment in lines[0], (fragment, lines[0])
    for secret in case.absent:
        assert secret not in stderr
    assert sorted(tmp_path.rglob("*")) == before, "a failed command left a file behind"
