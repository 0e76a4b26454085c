"""The explorer: one offline HTML page per run that shows why each summary scored as it did.

Rows are questions of one experiment (dataset, subject, judge) with every strategy's score. A
row's page shows the held-out test answers (identical ones grouped) and the conditioning answers
clustered by meaning (as the cluster strategies cluster them: ``summaries.cluster``), each
strategy's summary with its score and rank, the masked words coloured by their distance under
the chosen strategy (the title shows the judge's top predictions with the summary and with the
reference context), and the controlled pairs. The data is embedded in the page as JSON; the
page loads nothing.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

import pandas as pd

from selfreflect.artifacts import EXPERIMENT, read_metadata, read_table
from selfreflect.errors import InputError
from selfreflect.strategies.clustering import cluster_answers, resolve_embedder

KINDS = ("answers", "summaries", "scores", "controlled_scores")  # the kinds a page shows
KEYS = {  # what names one row of each kind (at most one row each in a page's files)
    "answers": ("dataset", "subject", "id"),
    "summaries": ("dataset", "subject", "id", "strategy"),
    "scores": (*EXPERIMENT, "id", "strategy"),
    "controlled_scores": (*EXPERIMENT, "id", "pair_type", "side"),
}
HOVER_PREDICTIONS = 3  # of the judge's top tokens kept per task, those shown when hovering a word


def read_files(files: Iterable[str | os.PathLike]) -> dict[str, pd.DataFrame]:
    """Each kind's tables of ``files``, told apart by the kind each artifact records. Summary,
    score and controlled-pair rows name their experiment; an answers table's dataset and
    subject are in its metadata. A row given twice (a file named twice, or two files of one
    experiment) or a scored question without its answers is refused with one line."""
    frames: dict[str, list[pd.DataFrame]] = {kind: [] for kind in KINDS}
    seen: dict[tuple[Any, ...], str] = {}  # each row's kind and key -> the file that gave it
    sources = []  # (file, table) of each scores file
    named: set[str] = set()
    for file in map(str, files):
        if file in named:
            raise InputError(f"{file}: given twice")
        named.add(file)
        metadata = _metadata(file)
        kind = metadata.get("kind")
        if kind not in KINDS:
            raise InputError(f"{file}: not an answers, summaries, scores or controlled-pairs file")
        table = read_table(kind, file)
        if kind == "answers":
            table = _labelled(table, metadata, file)
        _check_new(kind, table, file, seen)
        frames[kind].append(table)
        if kind == "scores":
            sources.append((file, table))
    for kind in ("answers", "scores"):
        if not frames[kind]:
            raise InputError(f"explorer: no {kind} file among the files given")
    for file, table in sources:
        _check_answered(table, file, seen)
    return {
        kind: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        for kind, parts in frames.items()
    }


def _check_new(kind: str, table: pd.DataFrame, file: str, seen: dict[tuple[Any, ...], str]) -> None:
    """Record each row of ``table`` under its kind and key in ``seen``; one seen before (in this
    file or another) is refused, naming both files."""
    for key in table[list(KEYS[kind])].itertuples(index=False, name=None):
        if other := seen.get((kind, *key)):
            row = ", ".join(f"{name} {value}" for name, value in zip(KEYS[kind], key, strict=True))
            where = "twice in this file" if other == file else f"also in {other}"
            raise InputError(f"{file}: {kind} row ({row}) is {where}")
        seen[(kind, *key)] = file


def _check_answered(scores: pd.DataFrame, file: str, seen: dict[tuple[Any, ...], str]) -> None:
    """Every question ``scores`` (from ``file``) scores has its row in the answers given."""
    for dataset, subject, qid in scores[["dataset", "subject", "id"]].itertuples(
        index=False, name=None
    ):
        if ("answers", dataset, subject, qid) not in seen:
            raise InputError(
                f"{file}: id {qid} ({dataset}, {subject}) has no row in the answers files given"
            )


def _metadata(file: str) -> dict[str, Any]:
    """The artifact metadata of ``file`` (empty if it is no artifact: missing, not Parquet)."""
    try:
        return read_metadata(file)
    except (OSError, ValueError):  # pyarrow's ArrowInvalid is a ValueError
        return {}


def _labelled(answers: pd.DataFrame, metadata: dict[str, Any], file: str) -> pd.DataFrame:
    """An answers table with the dataset and subject its ``metadata`` records as columns."""
    missing = [key for key in ("dataset", "subject") if not metadata.get(key)]
    if missing:
        raise InputError(
            f"{file}: metadata: no {' or '.join(missing)} (imported without them: "
            "`selfreflect import-answers --dataset D --subject S`; or made before answers "
            "recorded them: rerun `selfreflect answers`)"
        )
    return answers.assign(dataset=metadata["dataset"], subject=metadata["subject"])


def explorer_data(
    tables: dict[str, pd.DataFrame], run: str, cluster: dict[str, Any]
) -> dict[str, Any]:
    """The page's data: the strategies and one row per question and experiment; ``cluster``
    is the config's ``summaries.cluster`` (embedder, threshold)."""
    scores = tables["scores"]
    strategies = list(dict.fromkeys(scores["strategy"]))
    answers = tables["answers"].set_index(["dataset", "subject", "id"])
    summaries = {
        (r.dataset, r.subject, r.id, r.strategy): r
        for r in tables["summaries"].itertuples(index=False)
    }
    controlled = tables["controlled_scores"]
    keys = [*EXPERIMENT, "id"]
    pairs = dict(list(controlled.groupby(keys, dropna=False))) if not controlled.empty else {}
    rows = []
    by_question = scores.groupby([*EXPERIMENT, "id"], sort=False, dropna=False)
    for (dataset, subject, judge, qid), group in by_question:
        answer = answers.loc[(dataset, subject, qid)]
        by_strategy = group.set_index("strategy")
        ranks = by_strategy["score"].rank(method="min")
        test = _identical(list(answer["test_answers"]))
        shown = {same["index"] for same in test}  # one answer of each group of identical ones
        judged = {
            strategy: _judged(
                by_strategy.loc[strategy],
                summaries.get((dataset, subject, qid, strategy)),
                ranks[strategy],
                shown,
            )
            for strategy in by_strategy.index
        }
        reference = _reference_predictions(judged)
        rows.append(
            {
                "dataset": dataset,
                "subject": subject,
                "judge": judge,
                "id": qid,
                "question": answer["question"],
                "error": _text(answer["error"]),
                "test": test,
                "conditioning": list(answer["conditioning_answers"]),
                "strategies": judged,
                "reference": reference,
                "pairs": _pairs(pairs.get((dataset, subject, judge, qid))),
            }
        )
    embedder = resolve_embedder(cluster["embedder"])
    clusters = cluster_answers([r["conditioning"] for r in rows], embedder, cluster["threshold"])
    for row, found in zip(rows, clusters, strict=True):
        row["conditioning"] = [{"text": c.text, "count": c.size} for c in found]
    return {"run": run, "strategies": strategies, "rows": rows}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    """``value`` rounded for display; None (shown as missing) if it is missing or not finite."""
    return round(float(value), 4) if not pd.isna(value) and math.isfinite(value) else None


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


def _judged(score: Any, summary: Any, rank: float, shown: set[int]) -> dict[str, Any]:
    """One strategy's summary, score, rank and the masked words of the test answers ``shown``
    (one of each group of identical answers) for one question."""
    error = _text(score["error"])
    return {
        "summary": _text(summary.summary) if summary is not None else None,
        "score": _number(score["score"]),
        "rank": None if pd.isna(rank) else int(rank),
        "error": error,
        "words": _words(score["tasks"], shown),
    }


def _words(tasks: Any, shown: set[int]) -> list[list[Any]]:
    """Per masked word of the answers ``shown``: ``[answer, position, distance, the judge's
    predictions given the summary, given the answers]``, each prediction per token of the word;
    the distance is the mean over the word's tokens, as the score is over all tokens."""
    if tasks is None or len(tasks) == 0:
        return []
    frame = pd.DataFrame(list(tasks))
    frame = frame[frame["answer"].isin(shown)]
    out = []
    for (answer, position), word in frame.groupby(["answer", "position"], sort=False):
        summary = [_top(t.token, t.summary_top, t.summary_p) for t in word.itertuples()]
        answers = [_top(t.token, t.reference_top, t.reference_p) for t in word.itertuples()]
        distance = _number(word["distance"].mean())
        out.append([int(answer), int(position), distance, " | ".join(summary), " | ".join(answers)])
    return out


def _token(token: str) -> str:
    """A token as the hover shows it: quoted, its spaces visible."""
    return "\u201c" + str(token).replace(" ", "\u2423").replace("\n", "\u21b5") + "\u201d"


def _top(target: str, tokens: Any, probs: Any) -> str:
    """The judge's most likely tokens where it predicts ``target``, with their probabilities."""
    pairs = list(zip(tokens, probs, strict=True))[:HOVER_PREDICTIONS]
    return f"{_token(target)} \u2192 " + ", ".join(f"{_token(t)} {p:.0%}" for t, p in pairs)


def _reference_predictions(judged: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The judge's predictions given the answers, the same for every strategy: moved out of
    each strategy's words into one ``{"answer:position": text}`` per question."""
    reference = {}
    for strategy in judged.values():
        for answer, position, _, _, predictions in strategy["words"]:
            reference[f"{answer}:{position}"] = predictions
        strategy["words"] = [word[:4] for word in strategy["words"]]
    return reference


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


def render(data: dict[str, Any]) -> str:
    """The page: the template with ``data`` embedded as JSON in its script element, ``<``, ``>``,
    ``&`` and the JavaScript line separators escaped so that no text can end or comment it out."""
    template = resources.files("selfreflect").joinpath("data/explorer.html").read_text("utf-8")
    values = {
        "title": html.escape(f"SelfReflect explorer: {data['run']}"),
        "data": embedded_json(data),
    }
    return re.sub(r"\{\{(title|data)\}\}", lambda match: values[match[1]], template)


def embedded_json(data: Any) -> str:
    """``data`` as JSON with no ``<``, ``>``, ``&``, U+2028 or U+2029 (each a \\u escape)."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False)
    return text.translate({ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"})
