"""Answer sets as Hugging Face ``datasets`` folders: Parquet shards and a dataset card.

``data/train-XXXXX-of-YYYYY.parquet`` are ``answers`` artifacts (same schema, same provenance
metadata), so ``datasets.load_dataset("parquet", data_dir=...)`` and the Hub's viewer read the
folder as it is, and :func:`read_answer_set` gives back the table it came from, failures
included. ``README.md`` is the card: its YAML header names the subject model, the sampling
settings, the seed and the source dataset.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from selfreflect.artifacts import read_metadata, read_table, write_table
from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir, check_replaceable

DATA = "data"
CARD = "README.md"
SHARD_ROWS = 10_000  # questions per Parquet shard
OWNER = "selfreflect export-answers"  # the command whose marker an answer set holds

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

To score it with the workflow: `selfreflect import-answers FOLDER answers.parquet`.
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
    whole, atomically); ``questions_path``'s metadata names the source dataset. Returns the
    number of shards."""
    check_replaceable(out, OWNER)
    answers = read_table("answers", answers_path)
    metadata = {k: v for k, v in read_metadata(answers_path).items() if k != "kind"}
    source = None
    if questions_path:
        questions = read_metadata(questions_path)
        source = {"dataset": questions.get("dataset"), **(questions.get("source") or {})}
    shards = max(1, -(-len(answers) // SHARD_ROWS))
    with atomic_dir(out, OWNER) as tmp:
        for i in range(shards):
            part = answers.iloc[i * SHARD_ROWS : (i + 1) * SHARD_ROWS]
            write_table(
                "answers", part, tmp / DATA / f"train-{i:05d}-of-{shards:05d}.parquet", metadata
            )
        (tmp / CARD).write_text(card(answers, metadata, source), encoding="utf-8")
    return shards


def read_answer_set(folder: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The answers table of an answer-set folder and its provenance metadata."""
    shards = sorted((Path(folder) / DATA).glob("*.parquet"))
    if not shards:
        raise InputError(f"{folder}: no Parquet shards in {DATA}/")
    answers = pd.concat([read_table("answers", shard) for shard in shards], ignore_index=True)
    metadata = {k: v for k, v in read_metadata(shards[0]).items() if k != "kind"}
    return answers, metadata
