"""Question loaders (docs/protocol.md §2): read a dataset, normalise, shuffle, draw, de-duplicate.

Each loader yields raw records; :func:`load_questions` turns them into a ``questions`` table
(``artifacts.SCHEMAS["questions"]``). Nothing here writes files.
"""

from __future__ import annotations

import csv
import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from selfreflect.artifacts import SCHEMAS
from selfreflect.errors import InputError
from selfreflect.fileio import BadJson, loads_json, read_json
from selfreflect.text import LETTERS, question_form

log = logging.getLogger(__name__)


def normalize_question(text: str) -> str:
    """Strip; prefix ``Question: `` and suffix ``?`` unless already there."""
    return question_form(text.strip())


def question_id(question: str) -> str:
    """Stable key: the first 16 hex digits of the SHA-256 of the normalised question.

    Normalising first gives "Who wrote Hamlet" and "Question: Who wrote Hamlet?" one id, so
    reference files with or without the prefix match the pipeline's questions (which are
    stored normalised; normalising is idempotent).
    """
    return hashlib.sha256(normalize_question(question).encode("utf-8")).hexdigest()[:16]


def format_mmlu(question: str, choices: list[str], subject: str | None) -> str:
    """The authors' zero-shot multiple-choice prompt: a header naming the subject (underscores
    as spaces), the question, ``A. ...`` lines, then ``Answer:``; texts are not stripped."""
    about = f" about {subject.replace('_', ' ')}" if subject else ""
    header = f"The following are multiple choice questions (with answers){about}.\n\n"
    options = [f"{LETTERS[i]}. {choice}" for i, choice in enumerate(choices)]
    return header + "\n".join([question, *options, "Answer:"])


# --- dataset kinds -------------------------------------------------------------------------


def _answer_value(record: dict[str, Any]) -> str | None:
    """TriviaQA's ``answer.value``; the hidden test answers (empty or ``<unk>``) are None."""
    answer = record.get("answer")
    value = answer.get("value") if isinstance(answer, dict) else None
    return value if isinstance(value, str) and value not in ("", "<unk>") else None


def _answer_string(record: dict[str, Any]) -> str | None:
    """A string ``answer`` field (SimpleQA, local files), else None: a blank one too, as a CSV
    file's empty cell is what the other formats leave out."""
    value = record.get("answer")
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class Preset:
    """Defaults of one dataset kind; ``choices`` names the multiple-choice field (MMLU)."""

    path: str | None
    name: str | None
    split: str | None
    field: str
    gold: Callable[[dict[str, Any]], str | None] = lambda record: None
    choices: str | None = None


DATASET_KINDS = {  # each kind's defaults, by its name (the schema's enum of datasets.*.source)
    "natural_questions": Preset(
        "google-research-datasets/natural_questions", "dev", "validation", "question.text"
    ),
    "trivia_qa": Preset("mandarjoshi/trivia_qa", "rc", "test", "question", _answer_value),
    "simpleqa": Preset("basicv8vc/SimpleQA", None, "test", "problem", _answer_string),
    "mmlu": Preset("cais/mmlu", "all", "test", "question", choices="choices"),
    "local": Preset(None, None, None, "question", _answer_string),
}


# --- reading records -------------------------------------------------------------------------

Records = list[tuple[str, dict[str, Any]]]  # (where, record), e.g. ("line 3", {...})


def _lookup(record: Any, field: str) -> Any:
    """``record[field]``, following dots into nested records; ``KeyError`` if absent."""
    if isinstance(record, dict) and field in record:
        return record[field]
    for key in field.split("."):
        if not isinstance(record, dict) or key not in record:
            raise KeyError(field)
        record = record[key]
    return record


def _read_json(path: Path) -> Records:
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    return [(f"record {i}", record) for i, record in enumerate(data)]


def _read_jsonl(path: Path) -> Records:
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((f"line {number}", loads_json(line)))
        except json.JSONDecodeError as err:
            raise InputError(f"{path}: line {number}: malformed JSON: {err.msg}") from None
        except BadJson as err:
            raise InputError(f"{path}: line {number}: {err}") from None
    return records


OTHER_DELIMITERS = (";", "\t", "|")  # a spreadsheet's CSV export in some locales: one column


def _read_csv(path: Path) -> Records:
    """Rows of a CSV file with a header, each named by the line it starts on; bad quoting, a
    repeated column, a header split by another delimiter or a row with more fields than the
    header (an unquoted comma) is an error naming the line."""
    records = []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle, strict=True)
        start = 1  # the line the record being read starts on
        try:
            header = reader.fieldnames or []
            repeated = [name for name in header if header.count(name) > 1]
            if repeated:
                raise InputError(f"{path}: line 1: column '{repeated[0]}' appears twice")
            other = [d for d in OTHER_DELIMITERS if len(header) == 1 and d in header[0]]
            if other:
                raise InputError(
                    f"{path}: line 1: one column '{header[0]}': fields are separated by"
                    f" commas, not {other[0]!r}"
                )
            start = reader.line_num + 1
            for row in reader:
                if None in row:
                    fields = len(header) + len(row[None])
                    raise InputError(
                        f"{path}: line {start}: {fields} fields, the header has {len(header)}"
                        " (quote a field that holds a comma)"
                    )
                records.append((f"line {start}", row))
                start = reader.line_num + 1
        except csv.Error as err:
            hint = " (a quote is never closed)" if "end of data" in str(err) else ""
            raise InputError(f"{path}: line {start}: malformed CSV: {err}{hint}") from None
    return records


def _read_parquet(path: Path) -> Records:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path).to_pylist()
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(f"{path}: not a readable Parquet file ({err})") from None
    return [(f"record {i}", row) for i, row in enumerate(rows)]


READERS: dict[str, Callable[[Path], Records]] = {
    ".json": _read_json,
    ".jsonl": _read_jsonl,
    ".csv": _read_csv,
    ".parquet": _read_parquet,
}


def _read_local(path: str | None) -> Records:
    """Records of a local JSON (list of records), JSONL, CSV or Parquet file."""
    if path is None:
        raise InputError("local dataset: 'path' is required")
    file = Path(path)
    reader = READERS.get(file.suffix.lower())
    if reader is None:
        known = ", ".join(READERS)
        raise InputError(f"{file}: unsupported file extension '{file.suffix}' (use {known})")
    if not file.is_file():
        raise InputError(f"{file}: file not found")
    try:
        return reader(file)
    except UnicodeDecodeError as err:
        raise InputError(f"{file}: not UTF-8 text ({err.reason})") from None


def _config_args(directory: str, name: str | None) -> dict[str, Any]:
    """``load_dataset`` arguments selecting config ``name`` in a local directory.

    A directory whose README declares configs is used as on the hub; otherwise a subfolder
    ``name`` (the hub layout ``dev/validation-*.parquet``) is the data directory, and a flat
    folder is its own single config.
    """
    import datasets

    configs = datasets.get_dataset_config_names(directory)
    if name is None or name in configs or configs != ["default"]:
        return {"name": name}
    return {"data_dir": name} if (Path(directory) / name).is_dir() else {}


def _read_hub(path: str, name: str | None, split: str, columns: set[str]) -> Records:
    """Records of an HF dataset (a hub id, or a local directory in the hub's layout).

    Only the top-level ``columns`` are kept (NQ records also carry whole documents).
    """
    import datasets

    local = Path(path).expanduser()
    if not local.exists() and path.startswith(("/", ".", "~")):
        raise InputError(f"{path}: dataset directory not found")
    args = _config_args(str(local), name) if local.is_dir() else {"name": name}
    try:
        dataset = datasets.load_dataset(str(local) if local.is_dir() else path, split=split, **args)
    except (OSError, ValueError) as err:
        message = str(err).replace("\n", " ")
        raise InputError(f"{path} (config {name}, split {split}): cannot load: {message}") from None
    keep = [column for column in dataset.column_names if column in columns]
    if keep:  # with no column at all, the dataset would look empty
        dataset = dataset.select_columns(keep)
    return [(f"record {i}", record) for i, record in enumerate(dataset)]


# --- building the table ------------------------------------------------------------------------


def _text(record: dict[str, Any], field: str, at: str) -> str:
    """The non-blank string at ``field``; ``at`` (file and record) names it in errors."""
    try:
        value = _lookup(record, field)
    except KeyError:
        raise InputError(f"{at}: missing field '{field}'") from None
    if not isinstance(value, str):
        raise InputError(f"{at}: field '{field}' is {type(value).__name__}, expected a string")
    if not value.strip():
        raise InputError(f"{at}: field '{field}' is empty")
    return value


def _choices(record: dict[str, Any], field: str, at: str) -> list[str]:
    try:
        choices = _lookup(record, field)
    except KeyError:
        raise InputError(f"{at}: missing field '{field}'") from None
    if not (isinstance(choices, list) and 0 < len(choices) <= len(LETTERS)):
        raise InputError(f"{at}: field '{field}' must be a list of 1 to {len(LETTERS)} strings")
    if not all(isinstance(choice, str) for choice in choices):
        raise InputError(f"{at}: field '{field}' must be a list of strings")
    return choices


def _mmlu_gold(record: dict[str, Any], choices: list[str]) -> str | None:
    """The letter of the gold choice index ``answer`` (0-based), if there is one."""
    answer = record.get("answer")
    if isinstance(answer, int) and not isinstance(answer, bool) and 0 <= answer < len(choices):
        return LETTERS[answer]
    return None


def _row(record: dict[str, Any], preset: Preset, field: str, at: str) -> dict[str, Any]:
    """The id, question, choices and gold of one record."""
    text = _text(record, field, at)
    if preset.choices is None:
        question, choices, gold = normalize_question(text), None, preset.gold(record)
    else:
        choices = _choices(record, preset.choices, at)
        subject = record.get("subject")
        question = format_mmlu(text, choices, subject if isinstance(subject, str) else None)
        gold = _mmlu_gold(record, choices)
    return {"id": question_id(question), "question": question, "choices": choices, "gold": gold}


def _records(spec: dict[str, Any], preset: Preset, field: str) -> tuple[str, Records]:
    """The source's name (file, directory or hub id) and its records."""
    path = spec.get("path") or preset.path
    if preset.path is None:  # local
        return str(path), _read_local(path)
    split = spec.get("split") or preset.split
    columns = {field, field.split(".")[0], "answer", "subject", preset.choices or field}
    return str(path), _read_hub(str(path), spec.get("name") or preset.name, str(split), columns)


def in_train_part(key: str, share: float, seed: int) -> bool:
    """Whether a question falls in the ``train`` part of the seeded split, by its ``key`` alone
    (its id, or its template: questions sharing one fall on one side)."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") < share * 2**64


def in_part(question_id: str, record: dict[str, Any], part: dict[str, Any], at: str) -> bool:
    """Whether a record falls in the part a dataset's ``part`` keeps (split by id or template)."""
    key = question_id
    if part.get("by", "id") == "template":
        key = record.get("template")
        if key is None or (isinstance(key, str) and not key.strip()):
            raise InputError(f"{at}: template: missing or empty (part.by: template)")
        if not isinstance(key, str):
            raise InputError(f"{at}: template: expected text, got {type(key).__name__}")
    return in_train_part(key, part["share"], part["seed"]) == (part["keep"] == "train")


def _keeps_none(part: dict[str, Any], total: int, source: str) -> str:
    """Why a dataset's ``part`` keeps none of the ``total`` questions of ``source``."""
    split = ", ".join(f"{key} {part.get(key, 'id')}" for key in ("keep", "share", "seed", "by"))
    return f"keeps none of the {total} questions of {source} ({split})"


def question_clusters(spec: dict[str, Any]) -> pd.Series:
    """Each question of a dataset (one validated entry of the config's ``datasets``), by id:
    the cluster it was written in, its record's ``template`` or else its ``subject`` (MMLU);
    questions with neither are left out (each is a cluster of its own)."""
    preset = DATASET_KINDS[str(spec.get("source"))]
    field = spec.get("field") or preset.field
    source, records = _records(spec, preset, field)
    clusters = {}
    for where, record in records:
        label = (
            record.get("template") or record.get("subject") if isinstance(record, dict) else None
        )
        if isinstance(label, str):
            clusters[_row(record, preset, field, f"{source}: {where}")["id"]] = label
    return pd.Series(clusters, dtype=object, name="cluster")


def load_questions(name: str, spec: dict[str, Any], num_questions: int, seed: int) -> pd.DataFrame:
    """Load dataset ``name`` (one validated entry of the config's ``datasets``).

    Questions are normalised (MMLU: formatted), shuffled with ``seed``, the first
    ``num_questions`` drawn, and duplicates among them (same id) dropped keeping the first, as
    the authors' tool samples; the dropped source indices are logged and kept in the table's
    ``attrs["dropped_duplicates"]``. ``source_index`` is the record's position in the source.
    A ``part`` keeps one side of a seeded split by id or by the records' ``template`` field
    (:func:`in_train_part`) before the draw. A source (or part) holding fewer than
    ``num_questions`` gives all it holds, with a warning.
    """
    preset = DATASET_KINDS.get(str(spec.get("source")))
    if preset is None:
        known = ", ".join(DATASET_KINDS)
        raise InputError(
            f"dataset '{name}': unknown dataset kind '{spec.get('source')}' (known: {known})"
        )
    field = spec.get("field") or preset.field
    source, records = _records(spec, preset, field)
    part = spec.get("part")
    rows, total = [], 0
    for index, (where, record) in enumerate(records):
        at = f"{source}: {where}"
        if not isinstance(record, dict):
            raise InputError(f"{at}: expected an object, got {type(record).__name__}")
        row = {**_row(record, preset, field, at), "dataset": name, "source_index": index}
        total += 1
        if part and not in_part(row["id"], record, part, at):
            continue
        rows.append(row)
    if not rows and total:
        raise InputError(f"dataset '{name}': part: {_keeps_none(part, total, source)}")
    if not rows:
        raise InputError(f"{source}: no questions (field '{field}')")
    if len(rows) < num_questions:
        held = f"{len(rows)} questions" + (" in its part" if part else "")
        log.warning(
            "dataset '%s': %s holds %s, fewer than num_questions (%d): all are drawn",
            *(name, source, held, num_questions),
        )
    order = np.random.default_rng(seed).permutation(len(rows))[:num_questions]
    drawn = pd.DataFrame([rows[i] for i in order], columns=SCHEMAS["questions"].names)
    duplicated = drawn["id"].duplicated()
    table = drawn[~duplicated].reset_index(drop=True)
    table.attrs["dropped_duplicates"] = [int(i) for i in drawn["source_index"][duplicated]]
    if duplicated.any():
        log.info(
            "%s: dropped %d duplicate question(s) among those drawn (source indices %s)",
            source,
            int(duplicated.sum()),
            table.attrs["dropped_duplicates"],
        )
    return table
