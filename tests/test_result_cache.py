"""The judge's result cache (selfreflect.scoring.cache) returns only entries it can trust:
one stored under another address, altered, of the wrong shape or of the old format is logged
and judged again, giving the fresh judgement. The tiny model on the hf backend."""

from __future__ import annotations

import gzip
import json
import logging
import math
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from selfreflect.artifacts import read_table, write_table
from selfreflect.config import load_config, model_spec, read_config_file
from selfreflect.questions import normalize_question, question_id
from selfreflect.scoring.cache import ResultCache, checksum
from selfreflect.scoring.experiment import judge_question, judgement_rows, judgements_table
from selfreflect.scoring.prompts import QuestionAnswers
from selfreflect.scoring.registry import open_judge
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.scoring.table import COLUMNS
from tests.conftest import REPO
from tests.test_fileio import before_rename, python

ANSWERS = QuestionAnswers(
    "Question: What is the capital of France?",
    ["Paris is the capital", "Lyon"],
    ["Paris", "Paris", "Lyon"],
    [["Paris", "Lyon"]],  # one extra reference context: two distance lists per summary
)
TEXTS = ["Paris", "Mostly Paris, or Lyon."]
FAILED = QuestionAnswers("Question: Who?", ["Bob"], [], [])  # no conditioning answers


@pytest.fixture(scope="module")
def judge(tiny_spec):
    settings = {"backend": "hf", "dtype": "auto", "batch_size": 8}
    with open_judge({**tiny_spec, "backend": "hf"}, settings) as model:
        yield model


def judged(judge, cache=None, answers=ANSWERS):
    return judge_question(judge, answers, TEXTS, 5.0, stopword_policy("none"), True, cache)


@pytest.fixture(scope="module")
def fresh(judge):
    """Each text judged without a cache."""
    return judged(judge)


def read_entry(path: Path) -> Any:
    return json.loads(gzip.decompress(path.read_bytes()))


def write_entry(path: Path, entry: Any) -> None:
    path.write_bytes(gzip.compress(json.dumps(entry).encode()))


def resealed(edit: Callable[[dict], None]) -> Callable[[Path, Path], None]:
    """A corruption: ``edit`` applied to the payload of the first text's entry, its checksum
    recomputed (so only the payload's own check can find it)."""

    def corrupt(path: Path, _: Path) -> None:
        entry = read_entry(path)
        edit(entry["payload"])
        entry["checksum"] = checksum(entry["payload"])
        write_entry(path, entry)

    return corrupt


def edited(edit: Callable[[dict], None]) -> Callable[[Path, Path], None]:
    """A corruption: ``edit`` applied to the whole stored entry of the first text."""

    def corrupt(path: Path, _: Path) -> None:
        entry = read_entry(path)
        edit(entry)
        write_entry(path, entry)

    return corrupt


def swapped(path: Path, other: Path) -> None:
    """The two texts' entries swapped: each holds the other's address."""
    first, second = path.read_bytes(), other.read_bytes()
    path.write_bytes(second)
    other.write_bytes(first)


def truncated(path: Path, _: Path) -> None:
    path.write_bytes(path.read_bytes()[:20])


def old_format(path: Path, _: Path) -> None:
    """The entry as the cache stored it before it recorded its key and checksum."""
    write_entry(path, read_entry(path)["payload"])


def set_distance(value: float) -> Callable[[dict], None]:
    def edit(payload: dict) -> None:
        payload["distances"][0][0] = value

    return edit


def set_field(field: str, value: Any) -> Callable[[dict], None]:
    return lambda payload: payload.__setitem__(field, value)


CORRUPTIONS = {  # name: (corruption, a fragment of the warning)
    "swapped": (swapped, "another address"),
    "truncated": (truncated, "not used"),
    "distance 0": (edited(lambda e: set_distance(0.0)(e["payload"])), "checksum"),
    "distance NaN": (resealed(set_distance(math.nan)), "numbers in [0, 1]"),
    "distance inf": (resealed(set_distance(math.inf)), "numbers in [0, 1]"),
    "distance negative": (resealed(set_distance(-5.0)), "numbers in [0, 1]"),
    "distance above 1": (resealed(set_distance(1.5)), "numbers in [0, 1]"),
    "a reference dropped": (resealed(lambda p: p["distances"].pop()), "2 reference contexts"),
    "a task dropped": (resealed(lambda p: p["distances"][1].pop()), "numbers in [0, 1]"),
    "a string for a list": (resealed(set_field("owners", "0, 1")), "owners"),
    "a string for a distance list": (
        resealed(lambda p: p["distances"].__setitem__(1, "x")),
        "numbers in [0, 1]",
    ),
    "a number as owner": (resealed(lambda p: p["owners"].__setitem__(0, 0.5)), "owners"),
    "an owner past the answers": (
        resealed(lambda p: p["owners"].__setitem__(0, 2)),  # ANSWERS has 2 test answers
        "indices of the 2 test answers",
    ),
    "a negative owner": (resealed(lambda p: p["owners"].__setitem__(0, -1)), "indices"),
    "records not kept": (resealed(set_field("records", None)), "task records were not kept"),
    "records too short": (resealed(lambda p: p["records"].pop()), "records"),
    "records not tasks": (resealed(lambda p: p["records"].__setitem__(0, {})), "task records"),
    "an error not text": (resealed(set_field("error", 3)), "error"),
    "a failed judgement with tasks": (
        resealed(lambda p: p.update(error="out of memory", distances=[])),
        "a failed judgement holds tasks",
    ),
    "a field missing": (resealed(lambda p: p.pop("records")), "fields"),
    "no checksum": (edited(lambda e: e.pop("checksum")), "older format"),
    "old format": (old_format, "older format"),
    "wrong key": (edited(set_field("key", "0" * 64)), "another address"),
    "not an object": (lambda path, _: write_entry(path, [1, 2]), "older format"),
    "nested too deep": (
        lambda path, _: path.write_bytes(gzip.compress(b"[" * 200_000 + b"]" * 200_000)),
        "recursion",
    ),
}


@pytest.mark.parametrize("name", CORRUPTIONS)
def test_an_untrusted_entry_is_judged_again(judge, fresh, tmp_path, caplog, name):
    """The warning names the entry and why; the result is the fresh judgement, stored again."""
    corrupt, reason = CORRUPTIONS[name]
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    judged(judge, cache)
    paths = [cache.path(cache.key(ANSWERS.key(), text)) for text in TEXTS]
    corrupt(*paths)
    before = judge.forward_tokens
    with caplog.at_level(logging.WARNING, logger="selfreflect.scoring.cache"):
        again = judged(judge, cache)
    assert judge.forward_tokens > before
    [warning, *_] = caplog.messages
    assert str(paths[0]) in warning and reason in warning, warning
    assert_same(again, fresh)
    caplog.clear()
    before = judge.forward_tokens
    assert_same(judged(judge, cache), fresh)  # the fresh result overwrote the entry
    assert judge.forward_tokens == before and caplog.messages == []


def assert_same(got: dict, expected: dict) -> None:
    """The same judgements (distances to within float noise of another batch)."""
    assert got.keys() == expected.keys()
    for text, judgement in got.items():
        other = expected[text]
        assert (judgement.owners, judgement.error) == (other.owners, other.error)
        assert len(judgement.distances) == len(other.distances)
        for row, expected_row in zip(judgement.distances, other.distances, strict=True):
            assert row == pytest.approx(expected_row, abs=1e-6)
        assert [r["word"] for r in judgement.records] == [r["word"] for r in other.records]


def test_the_score_and_kept_tasks_are_against_the_full_reference(fresh):
    """A judgement with an extra reference context: its score is the mean of its distances to
    the full conditioning answers (the first context), and its kept task records hold those
    distances, not the extra context's."""
    from selfreflect.scoring import metric

    for judgement in fresh.values():
        full, extra = judgement.distances
        assert full != pytest.approx(extra, abs=1e-6)  # else the test could not tell them apart
        assert judgement.score == pytest.approx(metric.score(full), abs=1e-12)
        assert [r["distance"] for r in judgement.records] == pytest.approx(full, abs=1e-12)


def test_an_entry_that_cannot_be_stored_is_warned_about_and_the_judgement_kept(
    judge, fresh, tmp_path, caplog
):
    """A folder where an entry would go: the judgement is returned all the same, the entry is
    named in a warning, and the other text's entry is stored."""
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    blocked, stored = [cache.path(cache.key(ANSWERS.key(), text)) for text in TEXTS]
    blocked.mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="selfreflect.scoring.cache"):
        assert_same(judged(judge, cache), fresh)
    [warning] = caplog.messages
    assert f"judge cache entry {blocked} not stored" in warning
    assert blocked.is_dir() and stored.is_file()


def test_entries_that_cannot_be_stored_are_counted_and_the_first_warned_about(
    judge, fresh, tmp_path, caplog
):
    """A cache that stores nothing (each entry's path a folder) logs one warning, not one an
    entry, and counts them for the command's last line."""
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    for text in TEXTS:
        cache.path(cache.key(ANSWERS.key(), text)).mkdir(parents=True)
    with caplog.at_level(logging.WARNING, logger="selfreflect.scoring.cache"):
        assert_same(judged(judge, cache), fresh)
    [warning] = caplog.messages
    assert "not stored (others are counted)" in warning
    assert cache.unstored == len(TEXTS) == 2
    expected = f"; 2 not stored in the judge cache {tmp_path} (the log says why)"
    assert cache.unstored_note() == expected


def test_a_failed_judgement_is_read_back(judge, tmp_path, caplog):
    """A question that cannot be judged stores its reason (no distances): a valid entry."""
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    first = judged(judge, cache, FAILED)
    assert all(j.error and j.distances == [] for j in first.values())
    before = judge.forward_tokens
    with caplog.at_level(logging.WARNING, logger="selfreflect.scoring.cache"):
        assert judged(judge, cache, FAILED) == first
    assert judge.forward_tokens == before and caplog.messages == []


STORE = """import sys
from selfreflect.scoring.cache import ResultCache
ResultCache(sys.argv[1], {"judge": "tiny"}).put("q", "Paris", {"distances": []})
"""


def test_two_judges_storing_one_entry_both_store_it_without_a_warning(
    tmp_path, monkeypatch, caplog
):
    """Another judge (process) stores the same entry while this one is about to move its own
    into place: neither warns that it was not stored, and the entry reads back."""
    cache = ResultCache(tmp_path, {"judge": "tiny"})
    others = before_rename(monkeypatch, lambda: python(STORE, tmp_path))
    with caplog.at_level(logging.WARNING, logger="selfreflect.scoring.cache"):
        cache.put("q", "Paris", {"distances": []})
    [other] = others
    assert caplog.messages == []
    assert (other.returncode, other.stderr) == (0, "")
    entry = cache.path(cache.key("q", "Paris"))
    assert cache.get("q", "Paris", lambda payload: payload) == {"distances": []}
    assert list(entry.parent.iterdir()) == [entry]


def test_an_entry_of_another_judge_setup_is_not_found(tmp_path):
    """Entries are addressed by their judge setup (``salt``) too: a cache of another judge, or
    of other settings, under the same root finds none of this one's; the same setup does."""
    ResultCache(tmp_path, {"judge": "tiny"}).put("q", "Paris", {"distances": []})
    other = ResultCache(tmp_path, {"judge": "other"})
    assert other.get("q", "Paris", lambda payload: payload) is None
    same = ResultCache(tmp_path, {"judge": "tiny"})
    assert same.get("q", "Paris", lambda payload: payload) == {"distances": []}


QUESTIONS = [normalize_question(q) for q in ["Who wrote Hamlet", "Where is Paris"]]


@pytest.fixture(scope="module")
def work(tmp_path_factory, tiny_model):
    """A config (the tiny model on hf as judge), questions, their answers and summaries."""
    folder = tmp_path_factory.mktemp("judge-cli")
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["models"] = {"tiny": {**config["models"]["tiny-hf"], "path": str(tiny_model)}}
    config.update(summarizer=None, judges=["tiny"])
    config["summaries"].update(plugins={}, strategies=["greedy"])
    config["scoring"].update(stopwords="none")
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    ids = [question_id(q) for q in QUESTIONS]
    frame = pd.DataFrame({"question": QUESTIONS, "id": ids})
    frame = frame.assign(dataset="d", source_index=range(2), choices=None, gold=None)
    write_table("questions", frame, folder / "q.parquet")
    said = [["Shakespeare wrote it", "Marlowe"], ["In France", "In Texas"]]
    answers = frame[["id", "question"]].assign(
        test_answers=said, conditioning_answers=said, backend="hf", model="tiny", seed=0, error=None
    )
    write_table("answers", answers, folder / "answers.parquet", {"dataset": "d", "subject": "tiny"})
    summaries = frame[["id", "question", "dataset"]].assign(
        subject="tiny", strategy="greedy", summary=["Shakespeare.", "France, or Texas."],
        summarizer="tiny", prompt_tokens=1, completion_tokens=1, seconds=0.0, error=None,
    )  # fmt: skip
    write_table("summaries", summaries, folder / "s.parquet")
    return folder


def selfreflect(args: list[Any], cwd: Path) -> subprocess.CompletedProcess:
    command = ["selfreflect", *map(str, args)]
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def judge_cli(work: Path, cache: str, out: str) -> subprocess.CompletedProcess:
    """``selfreflect judge`` on ``work``'s files, run from the project (its code is hashed)."""
    args = ["--config", work / "config.yaml", "--dataset", "d", "--subject", "tiny"]
    inputs = ["--questions", work / "q.parquet", "--answers", work / "answers.parquet"]
    outputs = ["--no-studies", "--cache", work / cache, "--out", work / out, work / "s.parquet"]
    return selfreflect(["judge", *args, "--judge", "tiny", *inputs, *outputs], REPO)


def test_judge_with_a_malformed_cache_entry_writes_what_it_writes_without(work):
    """Every cached entry given the wrong shape (checksum intact): one warning each, no
    traceback, and the judgements of a run without the cache."""
    judge_cli(work, "cache", "uncached.parquet")
    entries = sorted((work / "cache").rglob("*.json.gz"))
    assert entries
    for path in entries:
        entry = read_entry(path)
        entry["payload"]["distances"] = "none"
        entry["checksum"] = checksum(entry["payload"])
        write_entry(path, entry)
    result = judge_cli(work, "cache", "again.parquet")
    assert "Traceback" not in result.stderr
    warned = [line for line in result.stderr.splitlines() if "judge cache entry" in line]
    assert len(warned) == len(entries) and all("distances" in line for line in warned)
    tables = [
        read_table("judgements", work / name).drop(columns=["seconds"], errors="ignore")
        for name in ("again.parquet", "uncached.parquet")
    ]
    pd.testing.assert_frame_equal(*tables)


def test_the_judge_writes_a_question_at_a_time_the_table_of_the_judge_pass(work):
    """`selfreflect judge` writes each question's rows as they come: the rows the judge pass
    makes of the same inputs in one table (`judgements_table`), the experiment's labels added."""
    judge_cli(work, "streamed-cache", "streamed.parquet")
    config = load_config(work / "config.yaml")
    answers = read_table("answers", work / "answers.parquet")
    with open_judge(model_spec(config, "tiny"), config["scoring"]) as judge:
        rows = judgement_rows(
            judge,
            read_table("questions", work / "q.parquet"),
            answers,
            answers,
            read_table("summaries", work / "s.parquet"),
            config["scoring"],
            None,
            config["seed"],
            stopword_policy(config["scoring"]["stopwords"]),
        )
        table = judgements_table(rows)
    written = read_table("judgements", work / "streamed.parquet")
    labels = written[["dataset", "subject", "judge"]].drop_duplicates()
    assert labels.values.tolist() == [["d", "tiny", "tiny"]]
    pd.testing.assert_frame_equal(written[COLUMNS], table, check_dtype=False)
