"""Answer sets as Hugging Face ``datasets`` folders: Parquet shards and a dataset card.

``data/train-XXXXX-of-YYYYY.parquet`` are ``answers`` artifacts (same schema, same provenance
metadata), so ``datasets.load_dataset("parquet", data_dir=...)`` and the Hub's viewer read the
folder as it is, and :func:`read_answer_set` gives back the table it came from, failures
included. ``README.md`` is the card: its YAML header names the subject model, the sampling
settings, the seed and the source dataset.

Each shard's metadata records the SHA-256 of its rows (:data:`DIGEST`, :func:`rows_digest`),
checked on reading (:func:`check_digest`): a set whose answers were edited after export is not
the subject's and is refused, not imported with its original provenance; so is one exported
before sets carried a digest.

A set joins a run only where it fits (:func:`check_fits`): the subject and its model's hash, the
dataset, the seed and the sampling settings are the run's, and it answers each of the run's
questions once.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import yaml

from selfreflect.artifacts import SCHEMAS, one_label, read_metadata, read_table, write_table
from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir, check_replaceable
from selfreflect.seeds import question_seed
from selfreflect.sharding import check_shards, identity

DATA = "data"
CARD = "README.md"
SHARD_ROWS = 10_000  # questions per Parquet shard
OWNER = "selfreflect export-answers"  # the command whose marker an answer set holds
# the sampling settings that shape the answers (checkpoint_every does not)
SAMPLING = ("num_answers", "temperature", "top_p", "max_tokens", "choice_truth", "choice_samples")
# what an answer set must share with the run it joins; import-answers --accept takes these
CHECKED = ("subject", "model", "dataset", "seed", *SAMPLING)
RECORDED = ("dataset", "subject", "models", "seed", "settings")  # what each shard must record
DIGEST = "rows_sha256"  # in each shard's metadata: the digest of its rows (rows_digest)

CARD_BODY = """
# SelfReflect answer set: {subject} on {dataset}

Answers sampled by the [selfreflect workflow](https://arxiv.org/abs/2505.20295): per question,
`test_answers` (held out, masked when scoring) and `conditioning_answers`, {num_answers} each.
A question whose sampling failed keeps its row with the reason in `error`. The header above
names the subject model, the sampling settings, the seed and the source dataset.

```python
import datasets

answers = datasets.load_dataset("parquet", data_dir="{DATA}", split="train")
```

To score it with the workflow, import it into a run of the same subject model, dataset and
sampling settings: `selfreflect import-answers --config CONFIG FOLDER answers.parquet`.
"""


def card(answers: pd.DataFrame, metadata: dict[str, Any], source: dict[str, Any] | None) -> str:
    """The dataset card of an answers table with its provenance ``metadata``."""
    subject = metadata.get("subject") or _one(answers["model"])
    settings = metadata.get("settings", {})
    header = {
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": "train", "path": f"{DATA}/train-*.parquet"}],
            }
        ],
        "tags": ["selfreflect", "llm-answers"],
        "selfreflect": {
            "subject": {"name": subject, **metadata.get("models", {}).get(subject, {})},
            "dataset": metadata.get("dataset"),
            "sampling": settings,
            "seed": metadata.get("seed"),
            "source_dataset": source,
            "questions": len(answers),
            "failed": int(answers["error"].notna().sum()),
            "git_commit": metadata.get("git_commit"),
            "packages": metadata.get("packages"),
        },
    }
    body = CARD_BODY.format(
        subject=subject,
        dataset=(source or {}).get("dataset", "its questions"),
        num_answers=settings.get("num_answers", "N"),
        DATA=DATA,
    )
    return f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n{body}"


def _one(values: pd.Series) -> str | None:
    distinct = values.dropna().unique()
    return str(distinct[0]) if len(distinct) == 1 else None


def write_answer_set(
    answers_path: str | os.PathLike, out: str | os.PathLike, questions_path: str | None
) -> int:
    """Write the answers table at ``answers_path`` as an answer-set folder ``out`` (replaced
    whole, atomically); ``questions_path``, the answers' questions table, names the source
    dataset. Returns the number of shards."""
    check_replaceable(out, OWNER)
    answers = read_table("answers", answers_path)
    metadata = {k: v for k, v in read_metadata(answers_path).items() if k != "kind"}
    questions = source = None
    if questions_path:
        questions = run_questions(questions_path, metadata.get("dataset") or None)
        meta = read_metadata(questions_path)
        source = {"dataset": meta.get("dataset"), **(meta.get("source") or {})}
    check_questions(answers, questions, answers_path, questions_path)
    shards = max(1, -(-len(answers) // SHARD_ROWS))
    with atomic_dir(out, OWNER) as tmp:
        for i in range(shards):
            part = answers.iloc[i * SHARD_ROWS : (i + 1) * SHARD_ROWS]
            shard = tmp / DATA / f"train-{i:05d}-of-{shards:05d}.parquet"
            write_table("answers", part, shard, {**metadata, DIGEST: rows_digest(part)})
        (tmp / CARD).write_text(card(answers, metadata, source), encoding="utf-8")
    return shards


def read_answer_set(folder: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The answers table of an answer-set folder and its provenance metadata."""
    shards = sorted((Path(folder) / DATA).glob("*.parquet"))
    if not shards:
        raise InputError(f"{folder}: no Parquet shards in {DATA}/")
    tables = [read_table("answers", shard) for shard in shards]
    metas = [read_metadata(shard) for shard in shards]
    names = list(map(str, shards))
    identities = list(map(identity, metas, tables, names))
    for shard_identity, name in zip(identities, names, strict=True):
        if missing := [key for key in RECORDED if shard_identity[key] is None]:
            raise InputError(
                f"{name}: {', '.join(missing)}: not recorded (each shard of an answer set names"
                " the run it comes from)"
            )
    check_shards(None, identities, names)
    for table, meta, name in zip(tables, metas, names, strict=True):
        check_digest(table, meta, name)
        check_rows(table, meta, name)
    answers = pd.concat(tables, ignore_index=True)
    metadata = {k: v for k, v in metas[0].items() if k not in ("kind", DIGEST)}
    return answers, metadata


def rows_digest(answers: pd.DataFrame) -> str:
    """The SHA-256 of an answers table's rows: every schema field of every row, in order, as
    JSON (an edit of any answer, question or label changes it; the Parquet encoding does not)."""
    schema = SCHEMAS["answers"]
    frame = answers.assign(**{name: None for name in schema.names if name not in answers})
    rows = pa.Table.from_pandas(frame[schema.names], schema=schema, preserve_index=False)
    text = json.dumps(rows.to_pylist(), ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_digest(answers: pd.DataFrame, metadata: dict[str, Any], source: str) -> None:
    """Refuse, with one line naming the shard ``source``, rows whose :func:`rows_digest` is not
    the one its ``metadata`` recorded at export, or a shard that recorded none (exported before
    sets carried one: refused rather than imported as unverified, since a removed digest would
    then pass an edit; exporting again is one command)."""
    recorded = metadata.get(DIGEST)
    if recorded is None:
        raise InputError(
            f"{source}: metadata: no {DIGEST} (exported before answer sets carried a digest of"
            " their rows): export it again with `selfreflect export-answers --format hf`"
        )
    if rows_digest(answers) != recorded:
        raise InputError(
            f"{source}: its rows are not the ones exported ({DIGEST} differs): an answer set"
            " edited after export is not the subject's answers"
        )


def check_rows(answers: pd.DataFrame, metadata: dict[str, Any], source: str) -> None:
    """Refuse, with one line naming the question and field, a row that is not what the
    table's ``metadata`` says: another model or seed than the subject's and the question's
    (:func:`selfreflect.seeds.question_seed`), or, answered, other than N test and N
    conditioning answers."""
    n = (metadata.get("settings") or {}).get("num_answers")
    for row in answers.itertuples(index=False):
        if row.model != metadata["subject"]:
            raise InputError(
                f"{source}: question {row.id}: model {row.model!r}, not the set's subject"
                f" {metadata['subject']!r}"
            )
        if row.seed != question_seed(metadata["seed"], row.id):
            raise InputError(
                f"{source}: question {row.id}: seed {row.seed}, not the one the set's seed"
                f" {metadata['seed']} gives it"
            )
        counts = (len(row.test_answers), len(row.conditioning_answers))
        if row.error is None and counts != (n, n):
            raise InputError(
                f"{source}: question {row.id}: {counts[0]} test and {counts[1]} conditioning"
                f" answers, not num_answers {n} each"
            )


def run_questions(path: str | os.PathLike, dataset: str | None) -> pd.DataFrame:
    """The questions table at ``path``, refused (one line naming it) unless its questions are
    of ``dataset`` (None: any one dataset)."""
    questions = read_table("questions", path)
    found = one_label(questions, "dataset", path)
    if dataset is not None and found != dataset:
        raise InputError(f"{path}: questions of dataset {found!r}, not of the answers' {dataset!r}")
    return questions


def check_questions(
    answers: pd.DataFrame,
    questions: pd.DataFrame | None,
    source: str | os.PathLike,
    questions_path: str | os.PathLike | None,
) -> None:
    """Refuse answers (from ``source``) holding a question twice or, given the ``questions``
    table at ``questions_path``, not answering exactly its questions, with their texts."""
    repeated = answers["id"][answers["id"].duplicated()]
    if len(repeated):
        raise InputError(f"{source}: question {repeated.iloc[0]} is answered more than once")
    if questions is None:
        return
    texts = dict(zip(questions["id"], questions["question"], strict=True))
    for qid, text in zip(answers["id"], answers["question"], strict=True):
        if qid not in texts:
            raise InputError(f"{source}: question {qid} is not among {questions_path}'s questions")
        if text != texts[qid]:
            raise InputError(f"{source}: question {qid}: its text is not {questions_path}'s")
    missing = questions["id"][~questions["id"].isin(answers["id"])]
    if len(missing):
        raise InputError(f"{source}: no answers to question {missing.iloc[0]} of {questions_path}")


def claims(metadata: dict[str, Any]) -> dict[str, Any]:
    """What an answers table's provenance ``metadata`` says it is, by :data:`CHECKED` field;
    its model by hash or hub revision (the path differs between machines)."""
    subject = metadata.get("subject")
    model = (metadata.get("models") or {}).get(subject) or {}
    settings = metadata.get("settings") or {}
    return {
        "subject": subject,
        "model": model.get("sha256") or model.get("revision"),
        "dataset": metadata.get("dataset"),
        "seed": metadata.get("seed"),
        **{key: settings.get(key) for key in SAMPLING},
    }


def check_fits(
    found: dict[str, Any], expected: dict[str, Any], accept: set[str], source: str
) -> dict[str, dict[str, Any]]:
    """Refuse, with one line naming the field and both values, an answer set whose
    :func:`claims` (``found``) differ from the run's (``expected``) in a field not in
    ``accept``; an unknown model never fits. The accepted mismatches: field -> both values."""
    accepted = {}
    for field in CHECKED:
        mine, theirs = found[field], expected[field]
        same = mine == theirs and isinstance(mine, bool) == isinstance(theirs, bool)  # True != 1.0
        if same and not (field == "model" and mine is None):
            continue
        if field not in accept:
            raise InputError(
                f"{source}: {field}: the set's {mine!r}, the run's {theirs!r} "
                f"(--accept {field} imports it anyway)"
            )
        accepted[field] = {"set": mine, "run": theirs}
    return accepted
