"""The jobs that see every question stream their inputs: their peak memory does not grow with
the number of questions (issue 49), measured on the real command in a subprocess."""

import filecmp
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml

from selfreflect.artifacts import (
    SCHEMAS,
    TASK,
    arrow_table,
    read_metadata,
    read_tables,
    write_arrow,
    write_table,
)
from selfreflect.bench.explorer import synthetic_tables
from selfreflect.bench.synthetic import answer_words, task_lists, vocabulary
from selfreflect.config import read_config_file
from selfreflect.provenance import merged_provenance
from selfreflect.sharding import shard
from tests.conftest import REPO

SHARD_QUESTIONS = 50  # a shard's questions, the same at both sizes
STRATEGIES = 4
ANSWERS = 9  # test answers per question: about 88 scoring tasks per strategy row
PAIR_ROWS = 2  # rows without tasks per question (a controlled pair's sides)
PAIR_SUMMARY = "a controlled summary " * 100  # 2,100 characters


def judgement_rows(
    rng: np.random.Generator, words: np.ndarray, part: pd.DataFrame, pair_summary: str = "s"
) -> pd.DataFrame:
    """The judgements of the questions ``part``, laid out as the judge writes them (every
    strategy's rows, then the pairs', whose summaries are ``pair_summary``)."""
    scored = task_lists(rng, words, answer_words(rng, len(part), ANSWERS))
    strategy = [part.assign(kind="strategy", strategy=f"s{s}") for s in range(STRATEGIES)]
    pairs = [part.assign(kind="pair", side=f"side{s}") for s in range(PAIR_ROWS)]
    rows = pd.concat([*strategy, *pairs], ignore_index=True)
    nulls = pa.nulls(len(part) * PAIR_ROWS, pa.list_(TASK))
    tasks = pa.concat_arrays([scored] * STRATEGIES + [nulls])
    return rows[["id", "kind"]].assign(
        dataset="d", subject="tiny", judge="tiny", strategy=rows["strategy"],
        pair_type=None, side=rows["side"], temperature=np.nan, axis=None, size=None,
        summary=np.where(rows["kind"] == "pair", pair_summary, "s"), score=0.5, num_tasks=1,
        error=None,
        tasks=pd.arrays.ArrowExtensionArray(tasks),
    )  # fmt: skip


def judgement_shards(folder, count: int, shard_questions: int = SHARD_QUESTIONS) -> list[str]:
    """``count`` questions and their judgements (:func:`judgement_rows`) cut into shards of
    ``shard_questions``, in ``folder``; returns the shard files."""
    rng = np.random.default_rng(0)
    words = vocabulary(rng)
    ids = [f"q{i:06d}" for i in range(count)]
    questions = pd.DataFrame({"id": ids, "question": "?", "dataset": "d", "source_index": 0})
    write_table("questions", questions.assign(choices=None, gold=None), folder / "q.parquet")
    shards = count // shard_questions
    parts = []
    for index in range(shards):
        rows = judgement_rows(rng, words, shard(questions, index, shards))
        parts.append(str(folder / f"p{index}.parquet"))
        meta = {"run": "r", "judge": "tiny", "shard": [index, shards]}
        write_table("judgements", rows, parts[-1], meta)
    return parts


def judgements_file(path, count: int) -> None:
    """The judgements of ``count`` questions (:func:`judgement_rows` of
    :data:`SHARD_QUESTIONS` questions at a time, pair summaries of :data:`PAIR_SUMMARY`) in one
    file at ``path``."""
    rng = np.random.default_rng(0)
    words = vocabulary(rng)
    ids = pd.DataFrame({"id": [f"q{i:06d}" for i in range(count)]})
    parts = (
        arrow_table(
            "judgements",
            judgement_rows(rng, words, ids.iloc[start : start + SHARD_QUESTIONS], PAIR_SUMMARY),
        )
        for start in range(0, count, SHARD_QUESTIONS)
    )
    write_arrow("judgements", parts, path, {"run": "r", "judge": "tiny"})


def merge_command(folder, parts: list[str]) -> list[str]:
    """``selfreflect merge`` of the judgement shards ``parts`` of :func:`judgement_shards`."""
    files = ["--questions", str(folder / "q.parquet"), "--out", str(folder / "merged.parquet")]
    return ["selfreflect", "merge", "judgements", *files, *parts]


# Starts a command and prints its peak resident memory (KiB) and exit status. A command the
# test process started itself would inherit this process's peak, the inputs it wrote included:
# Linux counts the peak of the memory a child is forked (or vforked) with as the child's own.
LAUNCHER = """
import os, subprocess, sys
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(process.pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def peak_mib(command: list[str]) -> float:
    """The peak resident memory of ``command``, run to success, in MiB (started by a small
    process of its own: :data:`LAUNCHER`)."""
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCHER, *command], capture_output=True, text=True, check=True
    )
    peak_kib, status = map(int, launched.stdout.split())
    assert status == 0, launched.stderr
    return peak_kib / 1024


def test_merge_memory_does_not_grow_with_questions(tmp_path):
    """Merging the judgement shards of 6,000 questions peaks less than 60 MiB above merging
    those of 2,000 (shards of 50 questions, 4 strategies of about 88 scoring tasks each: about
    390 MiB of tasks in Arrow at 6,000 questions, so a merge holding them all fails). Measured
    on an idle machine: 200 questions 217 MiB, 2,000 295, 4,000 292, 6,000 303 (pyarrow's
    allocator warms up over the first row groups and gives freed memory back after a delay;
    with MIMALLOC_PURGE_DELAY=0: 186, 230, 245); with answers of 25 words (4 per question, 84
    tasks), the merge that read every shard whole peaked at 245 and 653 MiB at 200 and 2,000
    questions. (Compared from 200 questions at first, it failed on an idle machine.) Measured
    again by :data:`LAUNCHER` (2026-12-03, a benchmark running beside it): 287 and 295 MiB."""
    peaks = {}
    for count in (2000, 6000):
        folder = tmp_path / str(count)
        folder.mkdir()
        peaks[count] = peak_mib(merge_command(folder, judgement_shards(folder, count)))
    assert peaks[6000] - peaks[2000] < 60, peaks


@pytest.fixture(scope="module")
def judgements_files(tmp_path_factory) -> dict[int, Path]:
    """The judgements of 1,100 and of 9,000 questions (:func:`judgements_file`)."""
    folder = tmp_path_factory.mktemp("judgements")
    for count in (1100, 9000):
        judgements_file(folder / f"{count}.parquet", count)
    return {count: folder / f"{count}.parquet" for count in (1100, 9000)}


def test_strategy_scores_memory_does_not_grow_with_questions(judgements_files, tmp_path):
    """A strategy's scores of the judgements of 9,000 questions peak less than 100 MiB above
    those of 1,100 (more than one row group, 1,024 rows, of its rows: the writer holds one).
    Measured on an idle machine: 294 MiB at 1,100 questions, 337 at 3,000, 356 at 6,000 and
    344 at 9,000 (pyarrow's allocator, mimalloc, gives freed memory back after a delay, so the
    peak creeps up, then levels; with MIMALLOC_PURGE_DELAY=0: 270, 284 and 287); the command
    that read its strategy's rows whole peaked at 277 at 1,100 questions and 377 at 4,000, about
    270 MiB more at 9,000. (Compared with 3,000 questions and 30 MiB at first, it failed on an
    idle machine.) Measured again by :data:`LAUNCHER` (2026-12-03): 318 and 345 MiB."""
    peaks = {}
    for count, path in judgements_files.items():
        args = ["--config", str(REPO / "config" / "smoke.yaml"), "--strategy", "s1"]
        args += ["--judgements", str(path), "--out", str(tmp_path / f"scores-{count}.parquet")]
        peaks[count] = peak_mib(["selfreflect", "strategy-scores", *args])
    assert peaks[9000] - peaks[1100] < 100, peaks


def test_a_studys_memory_does_not_grow_with_questions(judgements_files, tmp_path):
    """The controlled pairs' scores of the judgements of 9,000 questions peak less than 40 MiB
    above those of 1,100 (two pair rows a question, summaries of 2,100 characters: 36 MiB of
    text at 9,000 questions), as every study of the judgements (pairs, multiple-choice,
    convergence) is written: a batch of its rows at a time, as they are read. Measured by
    :data:`LAUNCHER` on 2026-12-03: 183 MiB at 1,100 questions, 190 at 9,000; the command that
    read the pair rows whole (at 4bcc284's parent) 378 and 491. (Started from the test process,
    the command was measured at 361 and 368–371, the test process's own peak: a test that could
    not fail.)"""
    alternatives = tmp_path / "alt.parquet"
    write_table("alt_metrics", pd.DataFrame(columns=SCHEMAS["alt_metrics"].names), alternatives)
    peaks = {}
    for count, path in judgements_files.items():
        args = ["--config", str(REPO / "config" / "smoke.yaml"), "--judgements", str(path)]
        args += ["--alternatives", str(alternatives), "--out", str(tmp_path / f"{count}.parquet")]
        peaks[count] = peak_mib(["selfreflect", "report", "controlled-scores", *args])
    assert peaks[9000] - peaks[1100] < 40, peaks


def test_explorer_memory_does_not_grow_with_questions(tmp_path):
    """The explorer of 2,200 questions peaks less than 60 MiB above that of 1,100 (4 strategies,
    9 test and 9 conditioning answers: more than one row group of each file). Measured on an
    idle machine: 461–470 MiB at 1,100 questions, 489–493 at 2,200 and 506 at 3,000 (its
    question table and its checks' keys grow, about 0.02 MiB a question); the explorer that read
    its tables whole peaked at 258 MiB at 400 questions and 448 at 1,600 (0.16 MiB a question),
    where it failed: a scores file of more than one row group was not read as one array. (The
    tolerance was 40 MiB at first; two runs measured 19 and 32.) Measured again by
    :data:`LAUNCHER` (2026-12-03): 458 and 498 MiB."""
    config = read_config_file(REPO / "config" / "smoke.yaml")
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    peaks = {}
    for count in (1100, 2200):
        files = synthetic_tables(tmp_path / str(count), count, strategies=4, answers=ANSWERS)
        args = ["--config", str(tmp_path / "config.yaml"), "--out", str(tmp_path / f"x{count}")]
        peaks[count] = peak_mib(["selfreflect", "explorer", *args, *map(str, files)])
    assert peaks[2200] - peaks[1100] < 60, peaks


def test_answer_clusters_memory_does_not_grow_with_questions(tmp_path):
    """Clustering the conditioning answers of 9,000 questions peaks less than 60 MiB above
    clustering those of 1,100 (9 distinct answers each, more than one row group of the answers
    file): a batch of questions is read, clustered and written at a time. Grouped here by
    normalised string, so that no embedder's time is measured; MiniLM's vectors live for one
    batch too (docs/scale.md measures it at 1,000 and 10,000 questions). Measured: 164 MiB at
    500 questions, 170 at 1,100, 192 at 3,000 and 197–207 at 9,000 (its ids are read whole and
    checked first); started from the test process, it measured 248 at 1,100 and 478 at 9,000,
    the test process's peak after writing the inputs."""
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["summaries"]["cluster"] = {"embedder": "string"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    peaks = {}
    for count in (1100, 9000):
        answers = synthetic_tables(tmp_path / str(count), count, strategies=1, answers=ANSWERS)[0]
        args = ["--config", str(tmp_path / "config.yaml"), "--answers", str(answers)]
        args += ["--out", str(tmp_path / f"clusters-{count}.parquet")]
        peaks[count] = peak_mib(["selfreflect", "cluster-answers", *args])
    assert peaks[9000] - peaks[1100] < 60, peaks


def test_merge_writes_the_whole_tables_file(tmp_path):
    """The streaming merge writes, byte for byte, what writing the shards' rows sorted in
    question order (each question's rows in its shard's order) writes: here shards of 1,200
    rows (two row groups each, their rows in the judge's order), given last first."""
    parts = judgement_shards(tmp_path, 400, shard_questions=200)[::-1]
    subprocess.run(merge_command(tmp_path, parts), check=True, capture_output=True)
    rows = read_tables("judgements", parts)
    rows = rows.iloc[rows["id"].argsort(kind="stable")]  # ids sort in question order
    provenance = merged_provenance([read_metadata(part) for part in parts])
    write_table("judgements", rows, tmp_path / "whole.parquet", provenance)
    assert filecmp.cmp(tmp_path / "merged.parquet", tmp_path / "whole.parquet", shallow=False)


def test_tables_written_as_they_come_make_the_file_written_at_once(tmp_path):
    """``write_arrow`` joins and cuts what it is given (a judge's question at a time, a few rows
    each, or a large table) into the row groups ``write_table`` writes: byte for byte its file
    of the rows joined."""
    parts = judgement_shards(tmp_path, 200, shard_questions=200)
    rows = read_tables("judgements", parts)
    sizes = [1, 7, 1500, 3, 900, 0, 1]
    bounds = np.cumsum([0, *sizes, len(rows) - sum(sizes)])
    tables = [arrow_table("judgements", rows.iloc[start:end]) for start, end in pairwise(bounds)]
    metadata = {"run": "r"}
    write_arrow("judgements", tables, tmp_path / "streamed.parquet", metadata)
    write_table("judgements", rows, tmp_path / "whole.parquet", metadata)
    assert filecmp.cmp(tmp_path / "streamed.parquet", tmp_path / "whole.parquet", shallow=False)
