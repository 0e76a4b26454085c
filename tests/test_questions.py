"""Question loaders: normalisation, ids, MMLU prompts, every source kind, every bad input."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import datasets
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from selfreflect.artifacts import SCHEMAS, read_table, write_table
from selfreflect.config import load_config
from selfreflect.errors import InputError
from selfreflect.questions import (
    format_mmlu,
    load_questions,
    normalize_question,
    question_id,
)

REPO = Path(__file__).resolve().parents[1]
SMOKE = REPO / "data" / "questions" / "smoke.jsonl"


@pytest.fixture(autouse=True)
def _hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the datasets cache of each test inside its tmp_path."""
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


def local(path: Path, field: str | None = None) -> dict:
    return {"source": "local", "path": str(path), "name": None, "split": None, "field": field}


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_parquet(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(records), path)
    return path


# --- normalisation, ids, prompts ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is X", "Question: What is X?"),
        ("  What is X?  \n", "Question: What is X?"),
        ("Question: What is X?", "Question: What is X?"),
        ("Question: What is X", "Question: What is X?"),
        ("what is x?", "Question: what is x?"),
    ],
)
def test_normalize_question(text: str, expected: str) -> None:
    assert normalize_question(text) == expected
    assert normalize_question(expected) == expected


def test_question_id_is_stable_short_hex() -> None:
    qid = question_id("Question: What is X?")
    assert qid == question_id("Question: What is X?")
    assert len(qid) == 16 and int(qid, 16) >= 0
    assert question_id("Question: Déjà vu?") != question_id("Question: Deja vu?")
    assert question_id("abc") == "d2ac6275d877baed"  # sha256("Question: abc?"): normalised


def test_format_mmlu_is_the_authors_prompt() -> None:
    """A header naming the subject; question and choices are not stripped."""
    prompt = format_mmlu(" What is 2+2? ", ["3", " 4", "5", "22"], "elementary_mathematics")
    assert prompt == (
        "The following are multiple choice questions (with answers) about elementary"
        " mathematics.\n\n What is 2+2? \nA. 3\nB.  4\nC. 5\nD. 22\nAnswer:"
    )
    assert format_mmlu("Q?", ["a"], None).startswith(
        "The following are multiple choice questions (with answers).\n\nQ?\nA. a\n"
    )


# --- local files ------------------------------------------------------------------------------


def test_smoke_file_loads() -> None:
    frame = load_questions("smoke", local(SMOKE), 1000, seed=0)
    assert 15 <= len(frame) <= 30
    assert frame["question"].str.startswith("Question: ").all()
    assert frame["question"].str.endswith("?").all()
    assert frame["id"].is_unique


def test_local_json_reference_format(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"question": "Question: A?"}, {"question": "B"}]))
    frame = load_questions("ref", local(path), 10, seed=1)
    assert list(frame.columns) == SCHEMAS["questions"].names
    assert sorted(frame["question"]) == ["Question: A?", "Question: B?"]
    assert set(frame["dataset"]) == {"ref"}
    assert frame["choices"].isna().all() and frame["gold"].isna().all()
    by_question = dict(zip(frame["question"], frame["source_index"], strict=True))
    assert by_question == {"Question: A?": 0, "Question: B?": 1}
    write_table("questions", frame, tmp_path / "out.parquet")  # fits the artifact schema
    assert len(read_table("questions", tmp_path / "out.parquet")) == 2


def test_local_answer_field_is_the_gold(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    records = [{"question": "Capital of Kenya?", "answer": "Nairobi"}, {"question": "Name a fruit"}]
    path.write_text("\n".join(json.dumps(record) for record in records))
    frame = load_questions("q", local(path), 10, seed=1)
    gold = dict(zip(frame["question"], frame["gold"], strict=True))
    assert gold == {"Question: Capital of Kenya?": "Nairobi", "Question: Name a fruit?": None}
    csv = tmp_path / "q.csv"
    csv.write_text("question,answer\nCapital of Kenya?,Nairobi\nName a fruit,\n")
    from_csv = load_questions("q", local(csv), 10, seed=1)
    assert dict(zip(from_csv["question"], from_csv["gold"], strict=True)) == gold


def test_local_jsonl_dotted_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"q": {"text": "A"}}, {"q": {"text": "B"}}])
    frame = load_questions("d", local(path, "q.text"), 10, seed=0)
    assert sorted(frame["question"]) == ["Question: A?", "Question: B?"]


def test_local_csv(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    pd.DataFrame({"prompt": ["A, really", "B"], "other": [1, 2]}).to_csv(path, index=False)
    frame = load_questions("c", local(path, "prompt"), 10, seed=0)
    assert sorted(frame["question"]) == ["Question: A, really?", "Question: B?"]


def test_local_csv_column_with_dot_in_name(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question.text\nA\n", encoding="utf-8")
    frame = load_questions("c", local(path, "question.text"), 10, seed=0)
    assert list(frame["question"]) == ["Question: A?"]


def test_local_parquet_nested_field(tmp_path: Path) -> None:
    path = write_parquet(
        tmp_path / "q.parquet", [{"question": {"text": f"Q{i}"}} for i in range(5)]
    )
    frame = load_questions("p", local(path, "question.text"), 3, seed=0)
    assert len(frame) == 3
    assert set(frame["question"]) <= {f"Question: Q{i}?" for i in range(5)}


def test_duplicates_are_dropped_after_drawing_and_recorded(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The draw is the authors' (shuffle all records, take the first n);
    duplicates among the drawn are dropped afterwards, keeping the first drawn."""
    records = [{"question": "A"}, {"question": " Question: A? "}, {"question": "B"}]
    path = write_jsonl(tmp_path / "q.jsonl", records)
    with caplog.at_level(logging.INFO, logger="selfreflect.questions"):
        frame = load_questions("d", local(path), 10, seed=0)
    order = [int(i) for i in np.random.default_rng(0).permutation(3)]
    later = max((0, 1), key=order.index)
    assert list(frame["source_index"]) == [i for i in order if i != later]
    assert frame.attrs["dropped_duplicates"] == [later]
    assert "dropped 1 duplicate" in caplog.text
    # the draw is the first n of the shuffled records, duplicates or not
    records = [{"question": f"Q{i % 4}"} for i in range(8)]
    drawn = load_questions("d", local(write_jsonl(tmp_path / "w.jsonl", records)), 5, seed=4)
    kept_and_dropped = [*drawn["source_index"], *drawn.attrs["dropped_duplicates"]]
    assert sorted(kept_and_dropped) == sorted(np.random.default_rng(4).permutation(8)[:5])
    assert drawn["id"].is_unique and len(drawn) < 5


# --- shuffling --------------------------------------------------------------------------------


def test_shuffle_is_deterministic_and_truncates(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": f"Q{i}"} for i in range(50)])
    spec = local(path)
    first = load_questions("d", spec, 50, seed=7)
    assert list(first["id"]) == list(load_questions("d", spec, 50, seed=7)["id"])
    assert list(first["id"]) != list(load_questions("d", spec, 50, seed=8)["id"])
    assert sorted(first["source_index"]) == list(range(50))
    assert list(first["source_index"]) != list(range(50))
    assert list(load_questions("d", spec, 10, seed=7)["id"]) == list(first["id"][:10])
    assert "fewer than" not in caplog.text
    assert list(load_questions("d", spec, 500, seed=7)["id"]) == list(first["id"])
    assert f"dataset 'd': {path} holds 50 questions, fewer than num_questions (500)" in caplog.text


def test_seeded_split_parts_are_disjoint_by_id_and_cover_the_source(tmp_path: Path) -> None:
    """A training part and the evaluated rest of one source (same share and seed) share no
    question id, together hold every question, and the train part is about its share; another
    seed splits otherwise."""
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": f"Q{i}"} for i in range(400)])

    def part(keep: str, seed: int = 3) -> set[str]:
        spec = {**local(path), "part": {"keep": keep, "share": 0.25, "seed": seed}}
        return set(load_questions("d", spec, 1000, seed=1)["id"])

    train, rest = part("train"), part("rest")
    assert not train & rest
    assert train | rest == set(load_questions("d", local(path), 1000, seed=1)["id"])
    assert 70 <= len(train) <= 130
    assert part("train", seed=4) != train


def test_a_split_by_template_keeps_each_template_on_one_side(tmp_path: Path) -> None:
    """Split by the records' template (``part.by: template``): the questions of one template
    fall on one side together; the shipped questions' split of config/finetune.yaml gives both
    sides at least 40; a record without a template is refused with one line naming it."""
    rows = [{"question": f"Q{i}", "template": f"t{i % 20}"} for i in range(200)]
    path = write_jsonl(tmp_path / "q.jsonl", rows)
    template = {question_id(r["question"]): r["template"] for r in rows}

    def part(keep: str, spec: dict) -> set[str]:
        split = {**spec, "part": {"keep": keep, "share": 0.5, "seed": 3, "by": "template"}}
        return set(load_questions("d", split, 1000, seed=1)["id"])

    train, rest = part("train", local(path)), part("rest", local(path))
    assert train | rest == set(template) and not train & rest
    assert not {template[i] for i in train} & {template[i] for i in rest}
    finetune = load_config(REPO / "config" / "finetune.yaml")["datasets"]
    shipped = {
        name: {**finetune[name], "path": str(REPO / finetune[name]["path"])} for name in finetune
    }
    sides = [load_questions(name, shipped[name], 1000, seed=1) for name in ("real", "real_train")]
    assert min(map(len, sides)) >= 40
    for name, template, message in [
        ("bare", None, "missing or empty"),
        ("blank", " ", "missing or empty"),
        ("number", 5, "expected text, got int"),
    ]:
        second = {"question": "R"} if template is None else {"question": "R", "template": template}
        write_jsonl(tmp_path / f"{name}.jsonl", [{"question": "Q", "template": "t"}, second])
        with pytest.raises(InputError, match=rf"{name}.jsonl: line 2: template: {message}"):
            part("train", local(tmp_path / f"{name}.jsonl"))


# --- HF kinds through the real datasets API, from local directories in the hub layout --------


def test_natural_questions_local_directory(tmp_path: Path) -> None:
    records = [
        {"id": str(i), "question": {"text": f"who wrote book {i}", "tokens": ["who"]}}
        for i in range(4)
    ]
    write_parquet(tmp_path / "nq" / "dev" / "validation-00000-of-00001.parquet", records)
    spec = {"source": "natural_questions", "path": str(tmp_path / "nq")}
    frame = load_questions("nq", spec, 10, seed=0)
    assert sorted(frame["question"]) == [f"Question: who wrote book {i}?" for i in range(4)]
    assert frame["gold"].isna().all()


def test_trivia_qa_local_directory(tmp_path: Path) -> None:
    records = [
        {"question": "Which planet is red?", "answer": {"value": "Mars", "aliases": ["Mars"]}},
        {"question": "Hidden answer", "answer": {"value": "<unk>", "aliases": []}},
    ]
    write_parquet(tmp_path / "tqa" / "rc" / "test-00000-of-00001.parquet", records)
    spec = {"source": "trivia_qa", "path": str(tmp_path / "tqa"), "name": None, "split": None}
    frame = load_questions("tqa", spec, 10, seed=0).set_index("source_index")
    assert frame.loc[0, "question"] == "Question: Which planet is red?"
    assert frame.loc[0, "gold"] == "Mars"
    assert pd.isna(frame.loc[1, "gold"])


def test_simpleqa_local_directory(tmp_path: Path) -> None:
    (tmp_path / "sqa").mkdir()
    pd.DataFrame(
        {
            "metadata": ["{}", "{}"],
            "problem": ["Who won in 1990", "Who won in 1991"],
            "answer": ["X", "Y"],
        }
    ).to_csv(tmp_path / "sqa" / "simple_qa_test_set.csv", index=False)
    frame = load_questions("sqa", {"source": "simpleqa", "path": str(tmp_path / "sqa")}, 10, 0)
    assert dict(zip(frame["question"], frame["gold"], strict=True)) == {
        "Question: Who won in 1990?": "X",
        "Question: Who won in 1991?": "Y",
    }


def test_mmlu_local_directory_with_readme_configs(tmp_path: Path) -> None:
    root = tmp_path / "mmlu"
    planets = ["Mars", "Jupiter", "Venus", "Earth"]
    records = [
        {
            "question": "What is 2+2?",
            "subject": "math",
            "choices": ["3", "4", "5", "6"],
            "answer": 1,
        },
        {"question": "Largest planet?", "subject": "astro", "choices": planets, "answer": 1},
    ]
    write_parquet(root / "all" / "test-00000-of-00001.parquet", records)
    write_parquet(root / "other" / "test-00000-of-00001.parquet", records[:1])
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        "- config_name: all\n  data_files:\n  - split: test\n    path: all/test-*.parquet\n"
        "- config_name: other\n  data_files:\n  - split: test\n    path: other/test-*.parquet\n"
        "---\n",
        encoding="utf-8",
    )
    frame = load_questions("mmlu", {"source": "mmlu", "path": str(root)}, 10, seed=0)
    frame = frame.set_index("source_index")
    assert frame.loc[0, "question"] == (
        "The following are multiple choice questions (with answers) about math.\n\n"
        "What is 2+2?\nA. 3\nB. 4\nC. 5\nD. 6\nAnswer:"
    )
    assert list(frame.loc[1, "choices"]) == ["Mars", "Jupiter", "Venus", "Earth"]
    assert list(frame["gold"]) == ["B", "B"]
    assert frame.loc[0, "id"] == question_id(frame.loc[0, "question"])


# --- bad inputs: one-line InputError naming the file and the field or record --------------


def expect_error(spec: dict, *fragments: str, name: str = "d") -> None:
    with pytest.raises(InputError) as info:
        load_questions(name, spec, 10, seed=0)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, message


def test_missing_file(tmp_path: Path) -> None:
    expect_error(local(tmp_path / "nope.jsonl"), "nope.jsonl", "not found")


def test_malformed_json(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text('[\n{"question": "A"},\n{"question": }\n]')
    expect_error(local(path), "q.json", "line 3")


def test_json_not_a_list(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text('{"question": "A"}')
    expect_error(local(path), "q.json", "list")


def test_malformed_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "A"}\n\n{"question": "B"\n')
    expect_error(local(path), "q.jsonl", "line 3")


def test_record_missing_field(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": "A"}, {"prompt": "B"}])
    expect_error(local(path), "q.jsonl", "line 2", "'question'")


def test_record_missing_nested_field(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"question": {"text": "A"}}, {"question": {"tokens": []}}]))
    expect_error(local(path, "question.text"), "q.json", "record 1", "'question.text'")


@pytest.mark.parametrize("blank", ["", "   \n\t"])
def test_blank_question(tmp_path: Path, blank: str) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"question": "A"}, {"question": "B"}, {"question": blank}]))
    expect_error(local(path), "q.json", "record 2", "'question'", "empty")


def test_blank_csv_cell(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question,other\nA,1\n,2\n", encoding="utf-8")
    expect_error(local(path), "q.csv", "line 3", "'question'", "empty")


@pytest.mark.parametrize("delimiter", [";", "\t"])
def test_a_csv_file_with_another_delimiter(tmp_path: Path, delimiter: str) -> None:
    path = tmp_path / "q.csv"
    path.write_text(f"question{delimiter}answer\nWho?{delimiter}Me\n", encoding="utf-8")
    expect_error(local(path), "q.csv", "line 1", "one column", f"not {delimiter!r}")


def test_non_string_question(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": 42}])
    expect_error(local(path), "q.jsonl", "line 1", "'question'", "int")


def test_record_not_an_object(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": "A"}, "B"])
    expect_error(local(path), "q.jsonl", "line 2")


def test_unknown_source_kind() -> None:
    expect_error({"source": "squad", "path": None}, "dataset 'mine'", "squad", name="mine")


def test_unsupported_extension(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("What?\n")
    expect_error(local(path), "q.txt", "extension")


@pytest.mark.parametrize(
    ("file", "text"), [("q.json", "[]"), ("q.jsonl", "\n"), ("q.csv", "question\n")]
)
def test_no_questions(tmp_path: Path, file: str, text: str) -> None:
    path = tmp_path / file
    path.write_text(text)
    expect_error(local(path), file, "no questions")


def test_a_part_that_keeps_no_question_names_the_part(tmp_path: Path) -> None:
    """A training part that kept none of the source's questions blamed the whole file ("no
    questions"); the message names the part and its split."""
    path = write_jsonl(tmp_path / "q.jsonl", [{"question": "A?"}, {"question": "B?"}])
    spec = {**local(path), "part": {"keep": "train", "share": 1e-9, "seed": 0}}
    expect_error(spec, "dataset 'd': part: keeps none of the 2 questions of", "share 1e-09")


def test_local_source_without_path() -> None:
    expect_error({"source": "local", "path": None}, "local", "path")


def test_hf_directory_not_found(tmp_path: Path) -> None:
    spec = {"source": "simpleqa", "path": str(tmp_path / "missing")}
    expect_error(spec, "missing", "not found")


def test_hf_unknown_split(tmp_path: Path) -> None:
    write_parquet(tmp_path / "sqa" / "test-00000-of-00001.parquet", [{"problem": "A"}])
    spec = {"source": "simpleqa", "path": str(tmp_path / "sqa"), "split": "train"}
    expect_error(spec, "sqa", "split train")


def test_hf_record_missing_field(tmp_path: Path) -> None:
    write_parquet(tmp_path / "sqa" / "test-00000-of-00001.parquet", [{"question": "A"}])
    expect_error(
        {"source": "simpleqa", "path": str(tmp_path / "sqa")}, "sqa", "record 0", "'problem'"
    )


def test_mmlu_bad_choices(tmp_path: Path) -> None:
    records = [{"question": "Q", "choices": [], "answer": 0}]
    write_parquet(tmp_path / "mmlu" / "all" / "test-00000-of-00001.parquet", records)
    expect_error({"source": "mmlu", "path": str(tmp_path / "mmlu")}, "record 0", "'choices'")
    eleven = [{"question": "Q", "choices": list("abcdefghijk"), "answer": 0}]
    write_parquet(tmp_path / "mmlu" / "all" / "test-00000-of-00001.parquet", eleven)
    expect_error({"source": "mmlu", "path": str(tmp_path / "mmlu")}, "list of 1 to 10 strings")


def test_mmlu_ten_choices_and_a_gold_index_beyond_them(tmp_path: Path) -> None:
    """Ten options (A to J) load; an ``answer`` that names no option is no gold."""
    records = [
        {"question": "Ten?", "choices": list("abcdefghij"), "answer": 9},
        {"question": "Four?", "choices": list("abcd"), "answer": 4},
    ]
    write_parquet(tmp_path / "mmlu" / "all" / "test-00000-of-00001.parquet", records)
    frame = load_questions("mmlu", {"source": "mmlu", "path": str(tmp_path / "mmlu")}, 10, 0)
    frame = frame.set_index("source_index")
    assert len(frame.loc[0, "choices"]) == 10 and frame.loc[0, "gold"] == "J"
    assert pd.isna(frame.loc[1, "gold"])


def test_utf8_csv_with_byte_order_mark_is_read(tmp_path):
    """Spreadsheet programs save UTF-8 CSV with a BOM."""
    path = tmp_path / "q.csv"
    path.write_bytes("question,notes\nWho wrote Hamlet,x\nWhere is Paris,y\n".encode("utf-8-sig"))
    table = load_questions("d", {"source": "local", "path": str(path)}, 10, seed=1)
    assert sorted(table["question"]) == ["Question: Where is Paris?", "Question: Who wrote Hamlet?"]


def test_question_ids_hash_the_normalised_question():
    """One rule, so reference files without the prefix match the pipeline's ids."""
    assert question_id("Who wrote Hamlet") == question_id("Question: Who wrote Hamlet?")
    assert question_id("  Who wrote Hamlet?  ") == question_id("Question: Who wrote Hamlet?")
    assert question_id("Who wrote Hamlet") != question_id("Who wrote Macbeth")


def test_a_csv_file_with_a_repeated_column_or_an_unquoted_comma_is_refused(tmp_path):
    """A repeated header column (one of the two values would be dropped) and a row with more
    fields than the header (an unquoted comma: the extra text would be dropped) are errors
    naming the line, not questions read short."""
    path = tmp_path / "q.csv"
    path.write_text("question,answer,question\nWho?,Me,Whom?\n", encoding="utf-8")
    expect_error(local(path), "q.csv", "line 1", "column 'question' appears twice")
    path.write_text("question,answer\nWho?,Me\nWhere, then?,Here\n", encoding="utf-8")
    expect_error(local(path), "q.csv", "line 3", "3 fields, the header has 2")


def test_a_csv_header_with_a_semicolon_in_one_of_its_columns_is_read(tmp_path):
    """The other-delimiter hint is for a header read as one column; a semicolon inside one of
    several comma-separated column names is no such header."""
    path = tmp_path / "q.csv"
    path.write_text("notes;more,question\nx,Who?\n", encoding="utf-8")
    assert list(load_questions("d", local(path), 10, seed=0)["question"]) == ["Question: Who?"]


def test_an_upper_case_extension_is_read(tmp_path):
    """``Q.JSONL`` is a JSONL file (the extension's case is the file system's, not a format)."""
    path = write_jsonl(tmp_path / "Q.JSONL", [{"question": "A?"}])
    assert list(load_questions("d", local(path), 10, seed=0)["question"]) == ["Question: A?"]


def test_an_mmlu_gold_answer_that_is_true_or_false_is_no_index(tmp_path):
    """``answer: true`` is no choice index (bool is an int in Python): no gold."""
    records = [
        {"question": "Bool?", "choices": list("abcd"), "answer": True},
        {"question": "Other?", "choices": list("abcd"), "answer": False},
    ]
    write_parquet(tmp_path / "mmlu" / "all" / "test-00000-of-00001.parquet", records)
    frame = load_questions("mmlu", {"source": "mmlu", "path": str(tmp_path / "mmlu")}, 10, 0)
    assert len(frame) == 2 and frame["gold"].isna().all()
