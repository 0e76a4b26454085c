"""The explorer: one offline HTML page per run that shows why each summary scored as it did.

Rows are questions of one experiment (dataset, subject, judge) with every strategy's score. A
row's page shows the held-out test answers (identical ones grouped) and the conditioning answers
clustered by meaning (the answer clusters' job clusters them as the cluster strategies do:
``summaries.cluster``; the explorer embeds nothing), each
strategy's summary with its score and rank, the masked words coloured by their distance under
the chosen strategy (the title shows the judge's top predictions with the summary and with the
reference context), and the controlled pairs. The explorer is a folder: ``index.html`` with the
question table's data embedded as JSON, and one script per question (``questions/000123.js``)
that the page adds only when that question is opened. Nothing is fetched from a server, so it
works from ``file://``. A question's masked words are stored once (their positions, target
tokens and the predictions given the answers), each strategy adds a distance per word and its
predictions (:func:`_masked`), tokens as indices into the run's token table (``tokens.js``, added
with the first question opened); the page builds the hover texts. The files are jinja2
templates, their data written by ``|tojson``.
"""

from __future__ import annotations

import base64
import math
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

import jinja2
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from selfreflect.artifacts import (
    EXPERIMENT,
    ROW_KEYS,
    SCHEMAS,
    TASK,
    answers_experiment,
    check_new_rows,
    read_in_order,
    read_keys,
    read_metadata,
    to_frame,
)
from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir

# the kinds a page shows
KINDS = ("answers", "answer_clusters", "summaries", "scores", "controlled_scores")
BLOCK = 128  # questions read at a time: the explorer's memory holds a block's rows
HOVER_PREDICTIONS = 3  # of the judge's top tokens kept per task, those shown when hovering a word
# a prediction's share in a byte: whole percents from 1 % (1 to 100), below 1 % a step of
# 1/DECADE_STEPS of a power of ten each down from it (101 to 253: 1e-6 or less; a judge's top
# tokens at temperature 5 over a large vocabulary are mostly there), UNKNOWN: no number in [0, 1],
# EMPTY: no prediction
DECADE_STEPS, SMALLEST, UNKNOWN, EMPTY = 38, 253, 254, 255
OWNER = "selfreflect explorer"  # the command whose marker the explorer folder holds
TOKENS = "tokens.js"  # the run's token table, relative to the explorer folder


def read_files(files: Iterable[str | os.PathLike]) -> Inputs:
    """The explorer's input ``files``, told apart by the kind each artifact records, and the
    keys of their rows. Summary, score and controlled-pair rows name their experiment; an
    answers table's dataset and subject are in its metadata. A row given twice (a file named
    twice, or two files of one experiment), a scored question without its answers, or a
    controlled pair with one side is refused with one line; scores whose masked words are not
    those answers' words, as the questions are read (:class:`Inputs`)."""
    paths: dict[str, list[str]] = {kind: [] for kind in KINDS}
    keys: dict[str, list[pd.DataFrame]] = {kind: [] for kind in KINDS}
    seen: dict[tuple[Any, ...], str] = {}  # each row's kind and key -> the file that gave it
    named: set[str] = set()
    for file in map(str, files):
        if file in named:
            raise InputError(f"{file}: given twice")
        named.add(file)
        metadata = _metadata(file)
        kind = metadata.get("kind")
        if kind not in KINDS:
            raise InputError(
                f"{file}: not an answers, answer clusters, summaries, scores or controlled-pairs"
                " file"
            )
        found = read_keys(kind, file)
        if kind == "answers":
            found = _labelled(found, metadata, file)
        check_new_rows(kind, found, file, seen)
        keys[kind].append(found.assign(file=len(paths[kind]), row=np.arange(len(found))))
        paths[kind].append(file)
    needed = {"answers": "", "answer_clusters": " (selfreflect cluster-answers)", "scores": ""}
    for kind, made_by in needed.items():
        if not paths[kind]:
            name = kind.replace("_", " ")
            raise InputError(f"explorer: no {name} file among the files given{made_by}")
    frames = {
        kind: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        for kind, parts in keys.items()
    }
    for index, part in frames["scores"].groupby("file"):
        _check_answered(part, paths["scores"][index], seen)
    _check_pairs(seen)
    return Inputs(paths, frames, seen)


@dataclass(frozen=True)
class Inputs:
    """The explorer's input files, checked (:func:`read_files`): each kind's files and the keys
    of their rows (``file``: the file's index among the kind's, ``row``: the row's in its
    file). Iterated, it reads them :data:`BLOCK` questions of one experiment at a time, each
    kind's rows of those questions as a table, and checks their masked words: the explorer
    holds a block of a run's tables, not the whole."""

    paths: dict[str, list[str]]
    keys: dict[str, pd.DataFrame]
    seen: dict[tuple[Any, ...], str]

    def __iter__(self) -> Iterator[dict[str, pd.DataFrame]]:
        for _, scores in self.keys["scores"].groupby(EXPERIMENT, sort=False, dropna=False):
            yield from self._blocks(scores)

    def _blocks(self, scores: pd.DataFrame) -> Iterator[dict[str, pd.DataFrame]]:
        """The blocks of the questions of one experiment, whose scores' keys are ``scores``
        (its questions in the order they first come, each with all its rows)."""
        question = scores.groupby("id", sort=False).ngroup().to_numpy()
        order = np.argsort(question, kind="stable")
        rows = {"scores": scores.iloc[order].assign(block=question[order] // BLOCK)}
        asked = rows["scores"][[*EXPERIMENT, "id", "block"]].drop_duplicates()
        for kind in ("answers", "answer_clusters", "summaries", "controlled_scores"):
            on = [*EXPERIMENT, "id"] if kind == "controlled_scores" else [*ROW_KEYS["answers"]]
            if len(self.keys[kind]):  # in block order (a merge keeps the left order)
                rows[kind] = asked[[*on, "block"]].drop_duplicates().merge(self.keys[kind], on=on)
        streams = {kind: _Rows(kind, self.paths[kind], found) for kind, found in rows.items()}
        for block in range(int(rows["scores"]["block"].iloc[-1]) + 1):
            spans = {
                kind: slice(*np.searchsorted(found["block"].to_numpy(), [block, block + 1]))
                for kind, found in rows.items()
            }
            tables = {kind: pd.DataFrame() for kind in KINDS}
            for kind, span in spans.items():
                tables[kind] = to_frame(streams[kind].take(span.stop - span.start))
            labels = rows["answers"][["dataset", "subject"]][spans["answers"]].to_numpy()
            tables["answers"][["dataset", "subject"]] = labels
            words = _test_words(tables["answers"])
            files = rows["scores"]["file"].to_numpy()[spans["scores"]]
            for index in np.unique(files):
                mine = tables["scores"][files == index]
                _check_masked_words(mine, self.paths["scores"][index], words, self.seen)
            yield tables


class _Rows:
    """The rows of a kind's ``files`` at the ``file`` and ``row`` of ``rows``, in that order,
    handed out a number at a time (:func:`~selfreflect.artifacts.read_in_order`)."""

    def __init__(self, kind: str, files: list[str], rows: pd.DataFrame) -> None:
        self.kind = kind
        file, row = rows["file"].to_numpy(), rows["row"].to_numpy()
        self._tables = read_in_order(kind, list(files), file, row)
        self._held = SCHEMAS[kind].empty_table()

    def take(self, count: int) -> pa.Table:
        """The next ``count`` rows, each column one array."""
        parts = [SCHEMAS[self.kind].empty_table()]
        while count > 0:
            if not len(self._held):
                self._held = next(self._tables)
            parts.append(self._held.slice(0, count))
            self._held = self._held.slice(len(parts[-1]))
            count -= len(parts[-1])
        return pa.concat_tables(parts).combine_chunks()


def _check_answered(scores: pd.DataFrame, file: str, seen: dict[tuple[Any, ...], str]) -> None:
    """Every question ``scores`` (from ``file``) scores has its rows in the answers and answer
    clusters given."""
    for dataset, subject, qid in scores[["dataset", "subject", "id"]].itertuples(
        index=False, name=None
    ):
        for kind in ("answers", "answer_clusters"):
            if (kind, dataset, subject, qid) not in seen:
                raise InputError(
                    f"{file}: id {qid} ({dataset}, {subject}) has no row in the"
                    f" {kind.replace('_', ' ')} files given"
                )


class AnswerWords(NamedTuple):
    """The words of the test answers of the answers files given, split as scoring splits them
    (:func:`selfreflect.scoring.prompts.masked_words`), flat: question ``q`` (numbered by
    ``questions``: (dataset, subject, id) -> q) has ``answers[q]`` test answers numbered from
    ``first[q]``; answer ``g`` has ``count[g]`` words from ``words[start[g]]`` on."""

    questions: dict[tuple[str, str, str], int]
    answers: np.ndarray
    first: np.ndarray
    start: np.ndarray
    count: np.ndarray
    words: pa.Array
    texts: list[list[str]]  # each answer's words, by g (the exact check)


def _test_words(answers: pd.DataFrame) -> AnswerWords:
    """The :class:`AnswerWords` of an answers table labelled with its dataset and subject."""
    keys = answers[["dataset", "subject", "id"]].itertuples(index=False, name=None)
    texts = [[answer.split() for answer in test] for test in answers["test_answers"]]
    split = [words for question in texts for words in question]
    counts = np.array([len(words) for words in split], dtype=np.int64)
    answers_of = np.array([len(question) for question in texts], dtype=np.int64)
    return AnswerWords(
        questions={key: q for q, key in enumerate(keys)},
        answers=answers_of,
        first=np.concatenate([[0], np.cumsum(answers_of)[:-1]]).astype(np.int64),
        start=np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64),
        count=counts,
        words=pa.array([word for words in split for word in words], pa.string()),
        texts=split,
    )


def _check_masked_words(
    scores: pd.DataFrame, file: str, test: AnswerWords, seen: dict[tuple[Any, ...], str]
) -> None:
    """Every masked word a row of ``scores`` (from ``file``) records is its test answer's word
    at its position: scores of other answers (sampled again after scoring) would colour words
    that are not there. Refused with one line naming both files. (Compared in Arrow; a word
    that is not the one word there, as a choice label masked with its text, then in Python.)"""
    tasks = pa.array(scores["tasks"], type=pa.list_(TASK))
    flat = pc.list_flatten(tasks)
    keys = list(scores[["dataset", "subject", "id"]].itertuples(index=False, name=None))
    rows = pc.list_parent_indices(tasks).to_numpy()
    question = np.array([test.questions[key] for key in keys], dtype=np.int64)[rows]
    answer = pc.fill_null(flat.field("answer"), -1).to_numpy().astype(np.int64)
    position = pc.fill_null(flat.field("position"), -1).to_numpy().astype(np.int64)
    answer_index = test.first[question] + np.clip(answer, 0, None)
    inside = (answer >= 0) & (answer < test.answers[question]) & (position >= 0)
    inside[inside] &= position[inside] < test.count[answer_index[inside]]
    at = np.flatnonzero(inside)
    expected = test.words.take(pa.array(test.start[answer_index[at]] + position[at]))
    same = np.zeros(len(flat), dtype=bool)
    equal = pc.equal(flat.field("word").take(pa.array(at)), expected)
    same[at] = pc.fill_null(equal, False).to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(~same):
        word = flat.field("word")[i].as_py()
        masked = (word or "").split()
        if inside[i]:
            words = test.texts[answer_index[i]]
            if words[position[i] : position[i] + len(masked)] == masked:
                continue
        dataset, subject, qid = keys[rows[i]]
        raise InputError(
            f"{file}: id {qid} ({dataset}, {subject}): masked word {word!r} (test answer"
            f" {answer[i]}, word {position[i]}) is not in the answers of"
            f" {seen[('answers', dataset, subject, qid)]}: scores of other answers (sampled"
            " again?)"
        )


def _check_pairs(seen: dict[tuple[Any, ...], str]) -> None:
    """Each controlled pair among the files ``seen`` has both its sides, good and bad."""
    sides: dict[tuple[Any, ...], dict[str, str]] = {}
    for (kind, *pair, side), file in seen.items():
        if kind == "controlled_scores":
            sides.setdefault(tuple(pair), {})[side] = file
    for (dataset, subject, judge, qid, pair_type), found in sides.items():
        if missing := [side for side in ("good", "bad") if side not in found]:
            raise InputError(
                f"{next(iter(found.values()))}: controlled pair {pair_type!r} of id {qid}"
                f" ({dataset}, {subject}, {judge}) has no {missing[0]} side in the files given"
            )


def _metadata(file: str) -> dict[str, Any]:
    """The artifact metadata of ``file`` (empty if it is no artifact: missing, not Parquet)."""
    try:
        return read_metadata(file)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return {}


def _labelled(answers: pd.DataFrame, metadata: dict[str, Any], file: str) -> pd.DataFrame:
    """An answers table with the dataset and subject its ``metadata`` records as columns."""
    dataset, subject = answers_experiment(metadata, file)
    return answers.assign(dataset=dataset, subject=subject)


def write_explorer(
    blocks: Iterable[dict[str, pd.DataFrame]], run: str, out: str | os.PathLike
) -> int:
    """Write the explorer folder ``out`` (atomically) one question file at a time, from
    ``blocks`` of the run's tables (:class:`Inputs`); returns the number of questions."""
    rows = []
    tokens: dict[str, int] = {}
    strategies: dict[str, None] = {}  # in the order they first come
    with atomic_dir(out, OWNER) as tmp:
        (tmp / "questions").mkdir()
        for index, question in enumerate(questions(blocks, tokens)):
            rows.append(_table_row(question))
            strategies.update(dict.fromkeys(question["strategies"]))
            (tmp / question_file(index)).write_text(question_script(index, question), "utf-8")
        script = _templates().get_template("tokens").render(tokens=list(tokens))
        (tmp / TOKENS).write_text(script, "utf-8")
        data = {"run": run, "strategies": list(strategies), "rows": rows}
        (tmp / "index.html").write_text(render(data), "utf-8")
    return len(rows)


def question_file(index: int) -> str:
    """The data file of the ``index``-th question, relative to the explorer folder."""
    return f"questions/{index:06d}.js"


def question_script(index: int, question: dict[str, Any]) -> str:
    """A question's data file: a call that hands the page the question's data."""
    return _templates().get_template("question").render(index=index, question=question)


def render(data: dict[str, Any]) -> str:
    """The explorer's ``index.html``: the page template with ``data`` in its data script."""
    return _templates().get_template("explorer.html").render(data=data)


@cache
def _templates() -> jinja2.Environment:
    """The page's, a question file's and the token table's templates. ``|tojson`` writes no
    ``<``, ``>``, ``&``, ``'`` (each a \\u escape) nor any other non-ASCII character, so no
    text ends or comments out a script, and refuses a number that is not finite."""
    page = resources.files("selfreflect").joinpath("data/explorer.html").read_text("utf-8")
    question = "explorerQuestion({{ index }}, {{ question|tojson }});\n"
    tokens = "explorerTokens({{ tokens|tojson }});\n"
    loader = jinja2.DictLoader({"explorer.html": page, "question": question, "tokens": tokens})
    environment = jinja2.Environment(loader=loader, autoescape=True, keep_trailing_newline=True)
    environment.policies["json.dumps_kwargs"] = {"allow_nan": False, "separators": (",", ":")}
    return environment


def _table_row(question: dict[str, Any]) -> dict[str, Any]:
    """What the question table shows of a question: its labels, text and scores."""
    row = {key: question[key] for key in (*EXPERIMENT, "id", "question")}
    scores = {name: strategy["score"] for name, strategy in question["strategies"].items()}
    return {**row, "scores": scores}


def questions(
    blocks: Iterable[dict[str, pd.DataFrame]], tokens: dict[str, int]
) -> Iterator[dict[str, Any]]:
    """Each question of each block of tables (in the scores' order) with everything its page
    shows; the tokens it refers to are added to the token table ``tokens`` (token -> index)."""
    for tables in blocks:
        yield from _questions(tables, tokens)


def _questions(tables: dict[str, pd.DataFrame], tokens: dict[str, int]) -> Iterator[dict[str, Any]]:
    """Each question of one block of tables with its page data (its tokens in the table
    ``tokens``)."""
    scores = tables["scores"]
    answers = tables["answers"].set_index(["dataset", "subject", "id"])
    clusters = tables["answer_clusters"].set_index(["dataset", "subject", "id"])["clusters"]
    summaries = {
        (r.dataset, r.subject, r.id, r.strategy): r.summary
        for r in tables["summaries"].itertuples(index=False)
    }
    controlled = tables["controlled_scores"]
    keys = [*EXPERIMENT, "id"]
    pairs = dict(list(controlled.groupby(keys, dropna=False))) if not controlled.empty else {}
    tasks = pa.array(scores["tasks"], type=pa.list_(TASK))  # Arrow: the bulk of a run's data
    rows = scores.drop(columns="tasks").assign(row=range(len(scores)))
    for (dataset, subject, judge, qid), group in rows.groupby(keys, sort=False, dropna=False):
        answer = answers.loc[(dataset, subject, qid)]
        by_strategy = group.set_index("strategy")
        ranks = by_strategy["score"].rank(method="min")
        test = _identical(list(answer["test_answers"]))
        shown = {same["index"] for same in test}  # one answer of each group of identical ones
        judged = {  # no copy of the column
            strategy: tasks[row].values
            for strategy, row in zip(by_strategy.index, group["row"], strict=True)
        }
        words, masked = _masked(judged, shown, tokens, f"id {qid} ({dataset}, {subject}, {judge})")
        yield {
            "dataset": dataset,
            "subject": subject,
            "judge": judge,
            "id": qid,
            "question": answer["question"],
            "error": _text(answer["error"]),
            "test": test,
            "conditioning": [dict(cluster) for cluster in clusters.loc[(dataset, subject, qid)]],
            "strategies": {
                strategy: {
                    "summary": _text(summaries.get((dataset, subject, qid, strategy))),
                    "score": _number(by_strategy.loc[strategy, "score"]),
                    "rank": None if pd.isna(ranks[strategy]) else int(ranks[strategy]),
                    "error": _text(by_strategy.loc[strategy, "error"]),
                    **masked[strategy],
                }
                for strategy in by_strategy.index
            },
            **words,
            "pairs": _pairs(pairs.get((dataset, subject, judge, qid))),
        }


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    """``value`` rounded for display; None (shown as missing) if it is missing or not finite."""
    return round(float(value), 4) if not pd.isna(value) and math.isfinite(value) else None


def _mean(values: list[float | None]) -> float | None:
    """The mean of ``values`` for display, missing ones (None, NaN) skipped."""
    numbers = [value for value in values if value is not None and not math.isnan(value)]
    return _number(sum(numbers) / len(numbers)) if numbers else None


def _identical(answers: list[str]) -> list[dict[str, Any]]:
    """Identical answers (stripped) grouped, largest group first: the text, the count, and the
    index of its first occurrence in ``answers`` (its masked words are the group's)."""
    groups: dict[str, list[int]] = {}
    for i, answer in enumerate(answers):
        groups.setdefault(answer.strip(), []).append(i)
    return [
        {"text": answers[members[0]], "count": len(members), "index": members[0]}
        for members in sorted(groups.values(), key=len, reverse=True)
    ]


def _masked(
    judged: dict[str, pa.StructArray | None], shown: set[int], tokens: dict[str, int], where: str
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The masked words of the test answers ``shown`` (one of each group of identical ones),
    stored once for the question, then what each strategy adds; tokens as indices into the
    token table ``tokens`` (new ones added). The question's:

    - ``words``: ``[answer, position, tasks]`` of each word, flat: a task per token of the word;
    - ``targets``: each task's token, the tasks in the words' order;
    - ``reference``: the judge's predictions given the answers (:func:`_encoded`).

    Each strategy's (by name): its ``distances`` in ten-thousandths (a word's is the mean over
    its tokens, as the score is over all tokens; None if no number) and ``predictions`` given
    its summary; none without tasks. Every strategy with tasks masks the same words (else the
    scores are of other settings: refused naming the question, ``where``)."""
    first: tuple[str, list[tuple[tuple[int, int], str | None]]] | None = None
    question: dict[str, Any] = {"words": [], "targets": [], "reference": None}
    predictions: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}
    out: dict[str, dict[str, Any]] = {}
    for strategy, tasks in judged.items():
        if tasks is None or len(tasks) == 0:  # no tasks kept
            out[strategy], predictions[strategy] = {"distances": []}, None
            continue
        words = _words(tasks, shown)
        order = np.array([i for word in words.values() for i in word], dtype=np.int64)
        targets = tasks.field("token").take(pa.array(order)).to_pylist()
        owners = [key for key, word in words.items() for _ in word]  # each task's word
        keys = list(zip(owners, targets, strict=True))
        if first is None:
            first = (strategy, keys)
            question["words"] = [v for (a, p), word in words.items() for v in (a, p, len(word))]
            question["targets"] = _ids(targets, tokens).tolist()
            question["reference"] = _predictions(tasks, "reference", order, tokens)
        elif keys != first[1]:
            raise InputError(
                f"{where}: strategy {strategy!r} masks other words than {first[0]!r} (scored"
                " with other settings?)"
            )
        distances = tasks.field("distance").to_pylist()
        means = [_mean([distances[i] for i in word]) for word in words.values()]
        out[strategy] = {"distances": [None if d is None else round(d * 10**4) for d in means]}
        predictions[strategy] = _predictions(tasks, "summary", order, tokens)
    wide = len(tokens) > 2**16  # ids that may not fit in 2 bytes
    for strategy, found in predictions.items():
        out[strategy]["predictions"] = None if found is None else _encoded(*found, wide)
    if question["reference"] is not None:
        question["reference"] = _encoded(*question["reference"], wide)
    return question, out


def _words(tasks: pa.StructArray, shown: set[int]) -> dict[tuple[int, int], list[int]]:
    """The tasks of each masked word ``(answer, position)`` of the test answers ``shown``."""
    answers, positions = tasks.field("answer").to_pylist(), tasks.field("position").to_pylist()
    words: dict[tuple[int, int], list[int]] = {}
    for i, (answer, position) in enumerate(zip(answers, positions, strict=True)):
        if answer in shown:
            words.setdefault((answer, position), []).append(i)
    return words


def _ids(tokens: list[str | None], table: dict[str, int]) -> np.ndarray:
    """Each token's index in the token ``table`` (added if new; a missing one is the empty
    token)."""
    return np.array([table.setdefault(t or "", len(table)) for t in tokens], dtype=np.int64)


def _predictions(
    tasks: pa.StructArray, context: str, order: np.ndarray, table: dict[str, int]
) -> tuple[np.ndarray, np.ndarray]:
    """The judge's most likely tokens given ``context`` (``summary`` or ``reference``: fields
    ``<context>_top`` and ``<context>_p``) of the tasks in ``order``, as the hover shows them:
    their ids in the token ``table`` and their shares (:func:`share_bytes`), tasks x
    :data:`HOVER_PREDICTIONS` (:data:`EMPTY` where the judge predicted fewer tokens)."""
    top = pc.list_slice(tasks.field(f"{context}_top"), 0, HOVER_PREDICTIONS)
    probs = pc.list_flatten(pc.list_slice(tasks.field(f"{context}_p"), 0, HOVER_PREDICTIONS))
    found = share_bytes(pc.fill_null(probs, np.nan).to_numpy(zero_copy_only=False))
    counts = pc.fill_null(pc.list_value_length(top), 0).to_numpy().astype(np.int64)
    task = np.repeat(np.arange(len(tasks)), counts)
    slot = np.arange(len(task)) - np.repeat(np.cumsum(counts) - counts, counts)
    ids = np.zeros((len(tasks), HOVER_PREDICTIONS), dtype=np.int64)
    shares = np.full((len(tasks), HOVER_PREDICTIONS), EMPTY, dtype=np.int64)
    ids[task, slot] = _ids(pc.list_flatten(top).to_pylist(), table)
    shares[task, slot] = found
    return ids[order], shares[order]


def share_bytes(probs: np.ndarray) -> np.ndarray:
    """Probabilities as the page reads their shares, a byte each: whole percents from 1 %, below
    it :data:`DECADE_STEPS` steps a power of ten down to :data:`SMALLEST` (a share of 0.37 % is
    0.37 %, not 0 %), :data:`UNKNOWN` for no number in [0, 1]."""
    valid = np.isfinite(probs) & (probs >= 0) & (probs <= 1)
    p = np.where(valid, probs, 1.0)
    with np.errstate(divide="ignore"):
        below = 101 + np.round(-DECADE_STEPS * np.log10(p * 100))
    shares = np.where(p >= 0.01, np.round(p * 100), np.minimum(below, SMALLEST))
    return np.where(valid, shares, UNKNOWN).astype(np.int64)


def _encoded(ids: np.ndarray, shares: np.ndarray, wide: bool) -> str:
    """Predictions (tasks x :data:`HOVER_PREDICTIONS` token ids and shares) as the page reads
    them: base64 of the ids (little-endian, 4 bytes each if ``wide``, else 2: the page tells
    them apart by the length) then the shares (a byte each)."""
    width = "<u4" if wide else "<u2"
    data = ids.astype(width).tobytes() + shares.astype(np.uint8).tobytes()
    return base64.b64encode(data).decode("ascii")


def _pairs(group: pd.DataFrame | None) -> list[dict[str, Any]]:
    """The controlled pairs of one question: each side's summary and SelfReflect score."""
    if group is None:
        return []
    out = []
    for pair_type, sides in group.groupby("pair_type", sort=False):
        side = {row.side: row for row in sides.itertuples(index=False)}
        good, bad = side["good"], side["bad"]
        out.append(
            {
                "type": pair_type,
                "good": _text(good.summary),
                "bad": _text(bad.summary),
                "good_score": _number(good.selfreflect),
                "bad_score": _number(bad.selfreflect),
                "error": _text(good.error) or _text(bad.error),
            }
        )
    return out
