"""One schema per artifact kind, one validating reader and one atomic writer.

Every artifact is a Parquet table keyed by the question ``id``. File-level metadata
(provenance: models, seeds, versions) rides in the Parquet key-value metadata under
``selfreflect``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from selfreflect.errors import InputError
from selfreflect.fileio import atomic_path, loads_json

_STR = pa.string()
_STRS = pa.list_(pa.string())

_PROBS = pa.list_(pa.float32())
# One scoring task (selfreflect.scoring.records.task_records): the target token of a masked
# word of a held-out answer, its distance, and the judge's top tokens given the summary and the
# reference.
TASK = pa.struct(
    [
        ("answer", pa.int32()),  # index among the test answers
        ("position", pa.int32()),  # index of the masked word among the answer's words
        ("word", _STR),
        ("token", _STR),
        ("distance", pa.float64()),
        ("summary_top", _STRS),
        ("summary_p", _PROBS),
        ("reference_top", _STRS),
        ("reference_p", _PROBS),
    ]
)

# the experiment a summary, score or study row belongs to: tables say what they are, so no
# reader parses it back out of a file name
EXPERIMENT_FIELDS = [("dataset", _STR), ("subject", _STR), ("judge", _STR)]
EXPERIMENT = [name for name, _ in EXPERIMENT_FIELDS]

SCHEMAS: dict[str, pa.Schema] = {
    "questions": pa.schema(
        [
            ("id", _STR),
            ("question", _STR),
            ("dataset", _STR),
            ("source_index", pa.int64()),
            ("choices", _STRS),  # multiple-choice options (MMLU), else null
            ("gold", _STR),  # reference answer where the dataset has one, else null
        ]
    ),
    "answers": pa.schema(
        [
            ("id", _STR),
            ("question", _STR),
            ("test_answers", _STRS),  # original tool: masked_out_task_answers (held out)
            ("conditioning_answers", _STRS),
            ("backend", _STR),
            ("model", _STR),
            ("seed", pa.int64()),
            ("error", _STR),  # null when the question succeeded
            # a multiple-choice question's truth (selfreflect.mc_study.choices.choice_truth), else
            # null: the subject's distribution over the choices then "none", how it was found
            # (logprobs | samples) and its expected sampling error in total variation
            ("choice_probs", pa.list_(pa.float64())),
            ("choice_source", _STR),
            ("choice_error", pa.float64()),
        ]
    ),
    # each question's conditioning answers clustered (selfreflect.cli.cluster_answers), largest
    # cluster first: its most frequent answer and its number of answers
    "answer_clusters": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS[:2],  # dataset, subject
            ("clusters", pa.list_(pa.struct([("text", _STR), ("count", pa.int64())]))),
        ]
    ),
    "summaries": pa.schema(
        [
            ("id", _STR),
            ("question", _STR),
            *EXPERIMENT_FIELDS[:2],  # dataset, subject
            ("strategy", _STR),
            ("summary", _STR),
            ("summarizer", _STR),
            ("prompt_tokens", pa.int64()),
            ("completion_tokens", pa.int64()),
            ("seconds", pa.float64()),
            ("error", _STR),
        ]
    ),
    "scores": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,  # dataset, subject (null for reference-format summaries), judge
            ("strategy", _STR),
            ("score", pa.float64()),
            ("num_tasks", pa.int64()),
            ("error", _STR),
            ("tasks", pa.list_(TASK)),  # one per task (scoring.keep_tasks), else null
        ]
    ),
    # everything an experiment judges (selfreflect.scoring.table): one row per question and thing
    # judged; ``kind`` says which (strategy, pair, mc, convergence) and which labels are set
    "judgements": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("kind", _STR),
            ("strategy", _STR),  # strategy, convergence
            ("pair_type", _STR),  # pair
            ("side", _STR),  # pair: good | bad
            ("temperature", pa.float64()),  # mc
            ("axis", _STR),  # convergence: conditioning | test
            ("size", pa.int64()),  # convergence
            ("summary", _STR),
            ("score", pa.float64()),
            ("num_tasks", pa.int64()),
            ("error", _STR),
            ("tasks", pa.list_(TASK)),  # strategy rows (scoring.keep_tasks), else null
        ]
    ),
    # the controlled pairs' alternative metrics (selfreflect.report.alt_metrics.alt_metrics_table)
    "alt_metrics": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("pair_type", _STR),
            ("side", _STR),
            ("summary", _STR),
            ("llm_rating", pa.float64()),
            ("p_true", pa.float64()),
            ("embedding", pa.float64()),
        ]
    ),
    # finetuning data (selfreflect.finetune.data): SFT targets and DPO preference pairs
    "sft_data": pa.schema([("id", _STR), ("question", _STR), ("target", _STR)]),
    "dpo_data": pa.schema(
        [
            ("id", _STR),
            ("question", _STR),
            ("chosen", _STR),
            ("rejected", _STR),
            ("chosen_strategy", _STR),
            ("rejected_strategy", _STR),
            ("gap", pa.float64()),  # rejected score - chosen score: the preference strength
        ]
    ),
    "grpo_data": pa.schema(
        [
            ("id", _STR),
            ("question", _STR),
            ("test_answers", _STRS),  # what a sampled summary's reward is measured against
            ("conditioning_answers", _STRS),
        ]
    ),
    # report studies (selfreflect.report.studies, selfreflect.mc_study.scores): metric values of
    # constructed summaries
    "controlled_scores": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("pair_type", _STR),
            ("side", _STR),  # good | bad
            ("summary", _STR),
            ("selfreflect", pa.float64()),
            ("llm_rating", pa.float64()),
            ("embedding", pa.float64()),
            ("p_true", pa.float64()),
            ("error", _STR),  # why selfreflect is null
        ]
    ),
    "mc_scores": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("temperature", pa.float64()),
            ("summary", _STR),
            ("w1", pa.float64()),  # true distance of the stated distribution to the truth
            ("choice_source", _STR),  # how the truth was found: logprobs | samples
            ("choice_error", pa.float64()),  # its expected sampling error (0: exact)
            ("ambiguous_conditioning", pa.int64()),  # answers naming two or more choices
            ("ambiguous_test", pa.int64()),
            # the truth against the shares of the choices all its answers name: their total
            # variation and its expected sampling error (selfreflect.mc_study.scores.truth_check)
            ("truth_tv", pa.float64()),
            ("truth_tv_expected", pa.float64()),
            ("score", pa.float64()),
            ("error", _STR),
        ]
    ),
    "convergence_scores": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("strategy", _STR),
            ("axis", _STR),  # conditioning | test: which answer set was subsampled
            ("size", pa.int64()),
            ("score", pa.float64()),
            ("error", _STR),
        ]
    ),
    # the first questions' summaries scored with scoring.backend and each of
    # report.agreement_backends (selfreflect.report.agreement.backend_scores)
    "agreement_scores": pa.schema(
        [
            ("id", _STR),
            *EXPERIMENT_FIELDS,
            ("strategy", _STR),
            (
                "backend",
                _STR,
            ),  # the judge backend (selfreflect.scoring.registry.JUDGES) that scored it
            ("score", pa.float64()),
            ("num_tasks", pa.int64()),
            ("error", _STR),
        ]
    ),
}
# Fields added to a kind after files of it were shared (e.g. answer sets on a DVC remote): a
# file or frame without them reads and writes them as null.
LATER_FIELDS: dict[str, tuple[str, ...]] = {
    "answers": ("choice_probs", "choice_source", "choice_error"),
}
# Fields every row of a kind holds (a null there, or in one of a list's items, is a damaged or
# hand-made file, refused when read); every kind's rows have an ``id``.
FILLED: dict[str, tuple[str, ...]] = {
    "questions": ("question",),
    "answers": ("question", "test_answers", "conditioning_answers"),
    "answer_clusters": ("dataset", "subject", "clusters"),
    "summaries": ("strategy",),
    "scores": ("strategy",),
    "judgements": ("kind",),
    "sft_data": ("question", "target"),
    "dpo_data": ("question", "chosen", "rejected"),
    "grpo_data": ("question", "test_answers", "conditioning_answers"),
}
# Fields whose values lie in a closed range: a total-variation score in [0, 1] (up to float
# rounding, SLACK). A null passes (a failed question's score), as does NaN.
BOUNDED: dict[str, dict[str, tuple[float, float]]] = {
    "scores": {"score": (0.0, 1.0)},
    "judgements": {"score": (0.0, 1.0)},
}
SLACK = 1e-6
# What names one row of each kind: a reader refuses a row given twice, in one file or in two it
# reads together (a backup copy beside the table would count every row twice). Answers name
# their dataset and subject in their metadata: a file's ids are checked when it is read, rows
# of several files where a reader labels them (explorer).
ROW_KEYS: dict[str, tuple[str, ...]] = {
    "answers": ("dataset", "subject", "id"),
    "answer_clusters": ("dataset", "subject", "id"),
    "summaries": ("dataset", "subject", "id", "strategy"),
    "scores": (*EXPERIMENT, "id", "strategy"),
    "judgements": (
        *EXPERIMENT,
        "id",
        "kind",
        "strategy",
        "pair_type",
        "side",
        "temperature",
        "axis",
        "size",
    ),
    "alt_metrics": (*EXPERIMENT, "id", "pair_type", "side"),
    "controlled_scores": (*EXPERIMENT, "id", "pair_type", "side"),
    "mc_scores": (*EXPERIMENT, "id", "temperature"),
    "convergence_scores": (*EXPERIMENT, "id", "strategy", "axis", "size"),
    "agreement_scores": (*EXPERIMENT, "id", "strategy", "backend"),
}
# The controlled_scores metrics and whether a higher value means a better summary.
HIGHER_IS_BETTER = {"selfreflect": False, "llm_rating": True, "embedding": True, "p_true": True}

METADATA_KEY = b"selfreflect"
# rows per Parquet row group: a reader streams a table a group at a time (a group of judgements
# holds about 100 questions' strategy rows at the paper's size, each with its scoring tasks)
ROW_GROUP_ROWS = 1024
ROW_BATCH = 64  # rows a filtered read decodes at a time (artifacts.read_arrow: where)


def _unreadable(path: str | Path, err: Exception) -> InputError:
    """The error for an artifact Parquet cannot read (cut short by a full disk or a copy): one
    the workflow made (under ``results/`` or ``reports/``) looks up to date to Snakemake, whose
    dates it keeps, so the message says how to have it made again (DVC, which compares content,
    sees it changed: `dvc checkout` restores it); no rule makes a file of the user's."""
    made = Path(path).parts[:1] in (("results",), ("reports",))
    again = f"; `snakemake --forcerun {path}` makes it again" if made else ""
    return InputError(f"{path}: not a readable Parquet file ({err}){again}")


def arrow_table(kind: str, frame: pd.DataFrame) -> pa.Table:
    """``frame`` cast to the ``kind`` schema (the fields written later filled with nulls)."""
    schema = SCHEMAS[kind]
    later = [name for name in LATER_FIELDS.get(kind, ()) if name not in frame.columns]
    frame = frame.assign(**dict.fromkeys(later))
    missing = [name for name in schema.names if name not in frame.columns]
    if missing:
        raise ValueError(f"{kind} table lacks columns {missing}")
    return pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)


def write_table(
    kind: str, frame: pd.DataFrame, path: str | os.PathLike, metadata: dict[str, Any] | None = None
) -> None:
    """Cast ``frame`` to the ``kind`` schema and write it atomically to ``path``."""
    table = arrow_table(kind, frame).replace_schema_metadata(_file_metadata(kind, metadata))
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, row_group_size=ROW_GROUP_ROWS)


def write_arrow(
    kind: str,
    tables: Iterable[pa.Table],
    path: str | os.PathLike,
    metadata: dict[str, Any] | None = None,
) -> int:
    """Write the Arrow ``tables`` (of the ``kind`` schema, any number of rows each) atomically
    to ``path`` as one table, as they come: the file :func:`write_table` writes of them joined,
    holding no more than about two row groups (:data:`ROW_GROUP_ROWS` rows); returns the rows
    written."""
    schema = SCHEMAS[kind].with_metadata(_file_metadata(kind, metadata))
    rows = 0
    with atomic_path(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
        for group in _row_groups(tables):
            writer.write_table(group, row_group_size=ROW_GROUP_ROWS)
            rows += len(group)
            del group  # not held while the next is made
        if not rows:  # one empty row group, as write_table writes it
            writer.write_table(schema.empty_table())
    return rows


def _row_groups(tables: Iterable[pa.Table]) -> Iterator[pa.Table]:
    """``tables`` joined and cut into tables of :data:`ROW_GROUP_ROWS` rows, the last shorter."""
    pending: list[pa.Table] = []
    held = 0
    for table in tables:
        pending.append(table)
        held += len(table)
        while held >= ROW_GROUP_ROWS:
            joined = pa.concat_tables(pending)
            yield joined.slice(0, ROW_GROUP_ROWS).combine_chunks()
            pending = [joined.slice(ROW_GROUP_ROWS)]  # no copy: a large table is cut once
            held = len(pending[0])
    if held:
        yield pa.concat_tables(pending).combine_chunks()


def read_row_groups(kind: str, path: str | os.PathLike) -> Iterator[pa.Table]:
    """The ``kind`` artifact at ``path`` a row group at a time, in the kind's schema."""
    for group in range(pq.read_metadata(path).num_row_groups):
        yield _row_group(kind, path, group)


def _file_metadata(kind: str, metadata: dict[str, Any] | None) -> dict[bytes, str]:
    """A ``kind`` artifact's file-level metadata: its kind and provenance ``metadata``."""
    return {METADATA_KEY: json.dumps({"kind": kind, **(metadata or {})}, sort_keys=True)}


def read_table(
    kind: str,
    path: str | os.PathLike,
    columns: list[str] | None = None,
    where: dict[str, str] | None = None,
    seen: dict[tuple[Any, ...], str] | None = None,
) -> pd.DataFrame:
    """Read a ``kind`` artifact's ``columns`` (all by default) of the rows whose columns hold
    the values of ``where``, checking that every schema field is there with its type and that
    no row is given twice (:func:`check_new_rows`, ``seen`` holding other files' rows)."""
    return to_frame(read_arrow(kind, path, columns, where, seen))


def read_tables(
    kind: str, files: Iterable[str | os.PathLike], columns: list[str] | None = None
) -> pd.DataFrame:
    """The ``kind`` tables of ``files`` in one frame (:func:`read_table`), a row given twice, in
    one file or in two, refused."""
    seen: dict[tuple[Any, ...], str] = {}
    frames = [read_table(kind, file, columns, seen=seen) for file in files]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def check_new_rows(
    kind: str, table: pd.DataFrame, file: str | os.PathLike, seen: dict[tuple[Any, ...], str]
) -> None:
    """Record each row of ``table`` (read from ``file``) under its kind and key (those of
    :data:`ROW_KEYS` among its columns) in ``seen``; one seen before, in this file or another,
    is refused with one line naming the key and both files."""
    names = [name for name in ROW_KEYS[kind] if name in table.columns]
    keys = table[names].astype(object)
    keys = keys.where(keys.notna(), None)  # a null is one value, NaN or None
    for key in keys.itertuples(index=False, name=None):
        if other := seen.get((kind, *key)):
            row = ", ".join(f"{n} {v}" for n, v in zip(names, key, strict=True) if v is not None)
            where = "twice in this file" if other == str(file) else f"also in {other}"
            raise InputError(f"{file}: {kind} row ({row}) is {where}")
        seen[(kind, *key)] = str(file)


def to_frame(table: pa.Table) -> pd.DataFrame:
    """``table`` as a frame, its scoring tasks left in Arrow (a row's become Python objects only
    when that row is read): the tasks of a run are most of its data."""
    if "tasks" not in table.column_names:
        return table.to_pandas()
    frame = table.drop_columns(["tasks"]).to_pandas()
    return frame.assign(tasks=pd.arrays.ArrowExtensionArray(table.column("tasks")))


def columns_but_tasks(kind: str) -> list[str]:
    """Every column of a ``kind`` table but its scoring tasks (a reader that shows no task)."""
    return [name for name in SCHEMAS[kind].names if name != "tasks"]


def read_arrow(
    kind: str,
    path: str | os.PathLike,
    columns: list[str] | None = None,
    where: dict[str, str] | None = None,
    seen: dict[tuple[Any, ...], str] | None = None,
) -> pa.Table:
    """A ``kind`` artifact's ``columns`` (all by default) of the rows whose columns hold the
    values of ``where`` (all rows by default) as an Arrow table, every schema field checked to
    be there with its type; only the columns asked for are read (with ``where``, a batch of
    :data:`ROW_BATCH` rows at a time). Where they hold its :data:`ROW_KEYS`, a row given twice
    is refused (``seen``: the rows of the other files read with it)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        found = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise _unreadable(path, err) from None
    for field in SCHEMAS[kind]:
        if field.name not in found.names and field.name not in LATER_FIELDS.get(kind, ()):
            raise InputError(f"{path}: missing field '{field.name}' of a {kind} table")
        actual = found.field(field.name).type if field.name in found.names else pa.null()
        if actual != field.type and not pa.types.is_null(actual):
            raise InputError(
                f"{path}: field '{field.name}' has type {actual}, expected {field.type}"
            )
    columns = columns or SCHEMAS[kind].names
    try:
        read = [name for name in columns if name in found.names]
        table = _read_rows(path, read, where) if where else pq.read_table(path, columns=read)
    except (pa.ArrowInvalid, OSError) as err:
        raise _unreadable(path, err) from None
    _check_values(kind, path, table)
    keys = ROW_KEYS.get(kind, ())
    in_file = [name for name in keys if name in found.names]  # the others: the file's metadata
    if in_file and set(in_file) <= set(table.column_names):
        rows = table.select(in_file).to_pandas()
        labelled = len(in_file) == len(keys)  # else unique within this file, as its label is
        check_new_rows(kind, rows, path, {} if seen is None or not labelled else seen)
    return _with_later_fields(kind, table, columns)


def _with_later_fields(kind: str, table: pa.Table, columns: list[str]) -> pa.Table:
    """The ``columns`` of ``table``, a later field its file was written without all null."""
    for name in columns:
        if name not in table.schema.names:
            field = SCHEMAS[kind].field(name)
            table = table.append_column(field, pa.nulls(len(table), field.type))
    return table.select(columns)


def _check_values(
    kind: str, path: Path, table: pa.Table | pa.RecordBatch, first_row: int = 0
) -> None:
    """One line naming the file, field and row for a null in a field every row holds
    (:data:`FILLED`), or in one of its list's items, or for a value out of its field's range
    (:data:`BOUNDED`; ``table``: the file's rows from ``first_row`` on)."""
    for name in ("id", *FILLED.get(kind, ())):
        if name not in table.column_names:
            continue
        column = table[name]
        if column.null_count:
            row = pc.index(pc.is_null(column), True).as_py()
            at = f"row {first_row + row}{_row_id(table, row)}"
            raise InputError(f"{path}: field '{name}' is empty in {at}")
        if pa.types.is_list(column.type) and pc.list_flatten(column).null_count:
            row = next(i for i, items in enumerate(column.to_pylist()) if None in items)
            at = f"row {first_row + row}{_row_id(table, row)}"
            raise InputError(f"{path}: field '{name}' has an empty item in {at}")
    for name, (low, high) in BOUNDED.get(kind, {}).items():
        if name not in table.column_names:
            continue
        column = table[name]
        outside = pc.or_(pc.less(column, low - SLACK), pc.greater(column, high + SLACK))
        if pc.any(outside).as_py():
            row = pc.index(outside, True).as_py()
            at = f"row {first_row + row}{_row_id(table, row)}"
            value = column[row].as_py()
            raise InputError(f"{path}: field '{name}' is {value} in {at}, not in [{low}, {high}]")


def _row_id(table: pa.Table, row: int) -> str:
    if "id" not in table.column_names or table["id"][row].as_py() is None:
        return ""
    return f" (id {table['id'][row].as_py()})"


def _read_rows(path: Path, columns: list[str], where: dict[str, str]) -> pa.Table:
    """The ``columns`` of the rows of the Parquet file ``path`` whose columns hold the values of
    ``where``, read a batch at a time (at most one batch of other rows in memory)."""
    schema = pq.read_schema(path)
    fields = pa.schema([schema.field(name) for name in columns])
    return pa.Table.from_batches(list(read_batches(path, columns, where)), fields)


def read_batches(
    path: str | os.PathLike, columns: list[str], where: dict[str, str] | None = None
) -> Iterator[pa.RecordBatch]:
    """The ``columns`` of the rows of the Parquet file ``path`` whose columns hold the values of
    ``where`` (all rows by default), a batch of at most :data:`ROW_BATCH` rows at a time,
    unchecked: check the file first (:func:`read_table` of a few of its columns)."""
    where = where or {}
    with pq.ParquetFile(path) as parquet:
        for group in range(parquet.num_row_groups):  # one at a time: the reader reads ahead
            read = list(dict.fromkeys([*columns, *where]))
            for batch in parquet.iter_batches(ROW_BATCH, [group], read):
                yield _where(batch, where).select(columns)


def read_frames(kind: str, path: str | os.PathLike, columns: list[str]) -> Iterator[pd.DataFrame]:
    """A ``kind`` artifact's ``columns`` as frames of at most :data:`ROW_BATCH` rows (a later
    field its file was written without all null), each checked as it comes for a null in a
    field every row holds (:data:`FILLED`), for a reader whose memory must not grow with the
    file; check its fields first (:func:`read_table` of its ids)."""
    found = pq.read_schema(path).names
    first_row = 0
    for batch in read_batches(path, [name for name in columns if name in found]):
        _check_values(kind, Path(path), batch, first_row)
        first_row += len(batch)
        yield to_frame(_with_later_fields(kind, pa.Table.from_batches([batch]), columns))


def _where(batch: pa.RecordBatch, where: dict[str, str]) -> pa.RecordBatch:
    """The rows of ``batch`` whose columns hold the values of ``where``."""
    if not where:
        return batch
    keep = None
    for name, value in where.items():
        equal = pc.equal(batch.column(name), value)
        keep = equal if keep is None else pc.and_(keep, equal)
    return batch.filter(keep)


def read_keys(kind: str, path: str | os.PathLike) -> pd.DataFrame:
    """The columns that name the rows of the ``kind`` artifact at ``path`` (id, experiment
    labels, :data:`ROW_KEYS`), the file checked as :func:`read_table` checks it, holding no more
    than :data:`ROW_GROUP_ROWS` rows of its other columns at a time."""
    names = dict.fromkeys(("id", *EXPERIMENT, *ROW_KEYS.get(kind, ())))
    keys = read_table(kind, path, [name for name in names if name in SCHEMAS[kind].names])
    filled = [name for name in FILLED.get(kind, ()) if name not in keys.columns]
    first_row = 0
    try:
        with pq.ParquetFile(path) as parquet:
            for batch in parquet.iter_batches(ROW_GROUP_ROWS, columns=["id", *filled]):
                _check_values(kind, Path(path), batch, first_row)
                first_row += len(batch)
    except (pa.ArrowInvalid, OSError) as err:
        raise _unreadable(path, err) from None
    return keys


def read_in_order(
    kind: str, paths: list[str | os.PathLike], file: np.ndarray, row: np.ndarray
) -> Iterator[pa.Table]:
    """The rows ``row`` of the ``kind`` artifacts ``paths[file]``, in that order, as Arrow
    tables of :data:`ROW_GROUP_ROWS` rows (which :func:`write_arrow` writes as
    :func:`write_table` would).

    A row group is read when the first of its rows is due and let go after the last: rows in
    their files' order stream a group at a time. Check the files first (:func:`read_keys`).
    """
    files = [pq.read_metadata(path) for path in paths]  # a file opened holds buffers: not kept
    sizes = [[f.row_group(g).num_rows for g in range(f.num_row_groups)] for f in files]
    # each group's first row in its file
    starts = np.concatenate([np.cumsum([0, *s], dtype=np.int64)[:-1] for s in sizes])
    first = np.cumsum([0, *map(len, sizes)])  # each file's first group among all files' groups
    group = first[file]  # each row's group among all files' groups
    for index in range(len(files)):
        mine = file == index
        bounds = starts[first[index] : first[index + 1]]
        group[mine] += np.searchsorted(bounds, row[mine], side="right") - 1
    last = np.full(first[-1], -1)  # each group's last row due
    np.maximum.at(last, group, np.arange(len(group)))
    held: dict[int, pa.Table] = {}
    for begin in range(0, len(group), ROW_GROUP_ROWS):
        rows, groups = row[begin : begin + ROW_GROUP_ROWS], group[begin : begin + ROW_GROUP_ROWS]
        due = np.unique(groups)
        for g in due:
            if g not in held:
                index = int(np.searchsorted(first, g, side="right")) - 1
                held[g] = _row_group(kind, paths[index], int(g - first[index]))
        ends = np.cumsum([0, *(len(held[g]) for g in due)])
        local = ends[np.searchsorted(due, groups)] + rows - starts[groups]
        yield pa.concat_tables([held[g] for g in due]).take(local)
        for g in due[last[due] < begin + len(rows)]:
            del held[g]


def _row_group(kind: str, path: str | os.PathLike, group: int) -> pa.Table:
    """Row group ``group`` of the ``kind`` artifact at ``path``, in the kind's schema."""
    schema = SCHEMAS[kind]
    try:
        with pq.ParquetFile(path) as parquet:
            found = parquet.schema_arrow.names
            columns = [name for name in schema.names if name in found]
            table = parquet.read_row_group(group, columns=columns, use_threads=False)
    except (pa.ArrowInvalid, OSError) as err:
        raise _unreadable(path, err) from None
    return _with_later_fields(kind, table, schema.names).cast(schema)


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The file-level ``selfreflect`` metadata of an artifact; a file that is not Parquet or
    whose metadata is not a JSON object raises one ``InputError`` naming it."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        meta = pq.read_schema(path).metadata or {}
    except (pa.ArrowInvalid, OSError) as err:
        raise _unreadable(path, err) from None
    try:
        metadata = loads_json(meta.get(METADATA_KEY, b"{}").decode())
    except (ValueError, UnicodeDecodeError) as err:  # JSONDecodeError, DuplicateKey
        raise InputError(f"{path}: metadata '{METADATA_KEY.decode()}': not JSON ({err})") from None
    if not isinstance(metadata, dict):
        kind = type(metadata).__name__
        raise InputError(
            f"{path}: metadata '{METADATA_KEY.decode()}': expected a JSON object, found {kind}"
        )
    return metadata


def one_label(table: pd.DataFrame, column: str, path: str | os.PathLike) -> str | None:
    """The one value of experiment label ``column`` (dataset, subject) in the table at ``path``
    (None where it has none or no such column); several are an error: one experiment a file."""
    values = list(table[column].dropna().unique()) if column in table else []
    if len(values) > 1:
        raise InputError(f"{path}: {column}: several values {values}; one experiment per file")
    return values[0] if values else None


def answers_experiment(metadata: dict[str, Any], path: str | os.PathLike) -> tuple[str, str]:
    """The dataset and subject the answers table at ``path`` records in its ``metadata``; one
    line naming the file and what is missing where it does not."""
    missing = [key for key in ("dataset", "subject") if not metadata.get(key)]
    if missing:
        raise InputError(
            f"{path}: metadata: no {' or '.join(missing)} (imported without them: "
            "`selfreflect import-answers --dataset D --subject S`; or made before answers "
            "recorded them: rerun `selfreflect answers`)"
        )
    return metadata["dataset"], metadata["subject"]


def check_answers(answers: pd.DataFrame, path: str | os.PathLike, experiment: dict) -> None:
    """Refuse (one line naming ``path``) an answers table with no rows or whose metadata
    labels it with another dataset or subject than ``experiment`` (a label given as None is
    not checked)."""
    if answers.empty:
        raise InputError(f"{path}: no answers to judge")
    metadata = read_metadata(path) if any(experiment.values()) else {}
    for label, expected in experiment.items():
        found = metadata.get(label)
        if None not in (found, expected) and found != expected:
            raise InputError(f"{path}: {label}: answers of {found!r}, not of {expected!r}")
