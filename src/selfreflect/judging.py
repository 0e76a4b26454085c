"""Everything one experiment (dataset, subject, judge) scores with SelfReflect, in one judge
pass per question: every strategy's summary, the controlled pairs, the multiple-choice
variants and the convergence study's subsampled references.

The result is one ``judgements`` table (one row per question and thing judged, its ``kind``
saying which); the score files and the studies' tables are read off it. Each question's
reference context is computed once for all of them (:mod:`selfreflect.scoring.judgements`),
and with a result cache a rerun judges only the summary texts it has not judged before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from selfreflect.controlled import SIDES, pairs_table
from selfreflect.mc_study.variants import mc_exclusion, mc_variants
from selfreflect.progress import progress
from selfreflect.scoring.judgements import Judgement, QuestionAnswers, judge_question
from selfreflect.scoring.result_cache import ResultCache
from selfreflect.scoring.score import result, upstream_error
from selfreflect.scoring.stopwords import IsStopword
from selfreflect.seeds import question_seed

if TYPE_CHECKING:
    from selfreflect.scoring.judge import Judge

SCORES = ["id", "strategy", "score", "num_tasks", "error", "tasks"]  # a scores row's fields
LABELS = ["kind", "strategy", "pair_type", "side", "temperature", "axis", "size"]
COLUMNS = ["id", *LABELS, "summary", "score", "num_tasks", "error", "tasks"]
AXES = ("conditioning", "test")


def subsample_indices(n: int, size: int, seed: int) -> list[int]:
    """The first ``size`` indices of a seeded permutation of ``range(n)`` (nested across sizes)."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n)[:size]]


def _row(qid: str, kind: str, summary: str | None, error: str | None, **labels: Any) -> dict:
    unscored = {"score": None, "num_tasks": None, "tasks": None}
    return {"id": qid, "kind": kind, **labels, "summary": summary, "error": error, **unscored}


def _strategy_rows(answer: Any, summaries: dict[str, dict[str, Any]], strategies: list[str]):
    """One row per strategy (a question without its summary: the reason in ``error``)."""
    own = summaries.get(answer.id, {})
    for strategy in strategies:
        summary = own.get(strategy)
        error = upstream_error(answer, summary)
        text = None if error else summary.summary
        yield _row(answer.id, "strategy", text, error, strategy=strategy)


def _pair_rows(pairs: list[Any]) -> Iterator[dict]:
    for pair in pairs:
        for side in SIDES:
            summary = getattr(pair, side)
            yield _row(pair.id, "pair", summary, pair.error, pair_type=pair.pair_type, side=side)


def _mc_rows(answer: Any, choices: Any, temperatures: list[float]) -> Iterator[dict]:
    excluded = mc_exclusion(answer, choices)
    if excluded is not None:
        for t in temperatures:
            yield _row(answer.id, "mc", None, excluded, temperature=float(t))
        return
    for t, summary, _ in mc_variants(list(answer.choice_probs), list(choices), temperatures):
        yield _row(answer.id, "mc", summary, None, temperature=t)


def _convergence_rows(
    answer: Any,
    strategy_rows: list[dict],
    judged: dict[str, Judgement],
    sizes: list[int],
    seed: int,
) -> Iterator[dict]:
    """Each strategy's score with each subsample of the conditioning answers (all test
    answers; one reference context each) and of the test answers (all conditioning answers;
    the mean over the subsample's tasks)."""
    pools = {"conditioning": list(answer.conditioning_answers), "test": list(answer.test_answers)}
    for row in strategy_rows:
        judgement = judged.get(row["summary"]) if row["error"] is None else None
        for axis in AXES:
            fitting = [n for n in sizes if n <= len(pools[axis])]
            for size in sizes:
                labels = {"strategy": row["strategy"], "axis": axis, "size": size}
                out = _row(answer.id, "convergence", None, row["error"], **labels)
                if judgement is not None and size > len(pools[axis]):
                    out["error"] = f"only {len(pools[axis])} {axis} answers"
                elif judgement is not None and axis == "conditioning":
                    out |= _cell(judgement, judgement.distances[1 + fitting.index(size)])
                elif judgement is not None:
                    chosen = set(subsample_indices(len(pools["test"]), size, seed))
                    out |= _test_cell(judgement, chosen)
                yield out


def _cell(judgement: Judgement, distances: list[float]) -> dict:
    if judgement.error is not None:
        return {"error": judgement.error}
    return {"score": float(np.mean(distances)), "num_tasks": len(distances), "error": None}


def _test_cell(judgement: Judgement, chosen: set[int]) -> dict:
    """The cell of the test answers ``chosen``: the mean over their tasks of the full pass."""
    if judgement.error is not None:
        return {"error": judgement.error}
    pairs = zip(judgement.distances[0], judgement.owners, strict=True)
    distances = [d for d, owner in pairs if owner in chosen]
    if not distances:
        return {"error": "no held-out answer has a word to mask"}
    return _cell(judgement, distances)


def judgements_table(
    judge: Judge,
    questions: pd.DataFrame | None,
    answers: pd.DataFrame,
    shard: pd.DataFrame,
    summaries: pd.DataFrame,
    scoring: dict[str, Any],
    report: dict[str, Any] | None,
    run_seed: int,
    is_stopword: IsStopword,
    cache: ResultCache | None = None,
) -> pd.DataFrame:
    """The ``judgements`` of the questions in ``shard`` (rows of ``answers``, the whole
    dataset's, from which controlled pairs borrow foreign answers and the convergence study
    takes its first questions): every summary of ``summaries`` and, unless ``report`` (the
    config's report settings, with the ``cluster`` settings that group answers by meaning) is
    None, the studies' constructed summaries. ``questions`` gives the multiple-choice
    questions' options (None: no question has any)."""
    pairs = pairs_table(answers, [])
    if report is not None:
        grouping = (report["cluster"]["embedder"], report["cluster"]["threshold"])
        pairs = pairs_table(answers, report["pair_types"], grouping)
    pairs_of: dict[str, list[Any]] = {}  # each question's pairs, looked up per question
    for pair in pairs.itertuples(index=False):
        pairs_of.setdefault(pair.id, []).append(pair)
    choices = pd.Series(dtype=object)
    if questions is not None:
        choices = questions.set_index("id")["choices"]
    has_mc = report is not None and bool(choices.notna().any())
    strategies = list(dict.fromkeys(summaries["strategy"]))
    convergence: set[str] = set()
    sizes: list[int] = []
    if report is not None and strategies:
        convergence = set(answers["id"].head(report["convergence_questions"] or len(answers)))
        sizes = report["convergence_sizes"]
    by_question: dict[str, dict[str, Any]] = {}
    for summary in summaries.itertuples(index=False):
        by_question.setdefault(summary.id, {})[summary.strategy] = summary
    rows = []
    for answer in progress(shard.itertuples(index=False), "judging: questions", len(shard)):
        strategy_rows = list(_strategy_rows(answer, by_question, strategies)) if strategies else []
        items = [*strategy_rows, *_pair_rows(pairs_of.get(answer.id, []))]
        if has_mc:
            items += _mc_rows(answer, choices.get(answer.id), report["mc_temperatures"])
        seed = question_seed(run_seed, answer.id)
        subsamples = []
        if answer.id in convergence:
            conditioning = list(answer.conditioning_answers)
            subsamples = [
                [conditioning[i] for i in subsample_indices(len(conditioning), n, seed)]
                for n in sizes
                if n <= len(conditioning)
            ]
        texts = [item["summary"] for item in items if item["error"] is None]
        judged = {}
        if texts:
            options = choices.get(answer.id)
            question = QuestionAnswers(
                answer.question,
                list(answer.test_answers),
                list(answer.conditioning_answers),
                subsamples,
                list(options) if options is not None and len(options) else None,
            )
            judged = judge_question(
                judge,
                question,
                texts,
                scoring["temperature"],
                is_stopword,
                scoring["keep_tasks"],
                cache,
            )
        for item in items:
            if item["error"] is None:
                score, num_tasks, error, tasks = result(judged[item["summary"]])
                kept = tasks if item["kind"] == "strategy" else None  # what the explorer shows
                item |= {"score": score, "num_tasks": num_tasks, "error": error, "tasks": kept}
        rows += items
        if answer.id in convergence:
            rows += _convergence_rows(answer, strategy_rows, judged, sizes, seed)
    return pd.DataFrame(rows, columns=COLUMNS)


def of_kind(judgements: pd.DataFrame, kind: str, labels: list[str]) -> pd.DataFrame:
    """The rows of ``judgements`` of one ``kind`` with its ``labels``, their summaries and
    results (no tasks)."""
    rows = judgements[judgements["kind"] == kind]
    return rows[["id", *labels, "summary", "score", "num_tasks", "error"]].reset_index(drop=True)


def strategy_scores(judgements: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """One strategy's ``scores`` rows (without the experiment labels)."""
    rows = judgements[(judgements["kind"] == "strategy") & (judgements["strategy"] == strategy)]
    return rows[SCORES]


def summary_scores(judgements: pd.DataFrame, summaries: pd.DataFrame) -> pd.DataFrame:
    """The ``scores`` rows of ``summaries`` (without the experiment labels): each question on
    the strategies it has a summary of, in their order (a reference file's questions carry
    different keys), and a question without any on every strategy, its rows failed."""
    rows = judgements[judgements["kind"] == "strategy"]
    place = {
        key: i for i, key in enumerate(zip(summaries["id"], summaries["strategy"], strict=True))
    }
    summarised = set(summaries["id"])
    rank = {strategy: i for i, strategy in enumerate(dict.fromkeys(summaries["strategy"]))}
    question = {qid: i for i, qid in enumerate(dict.fromkeys(rows["id"]))}
    keys = list(zip(rows["id"], rows["strategy"], strict=True))
    kept = [key[0] not in summarised or key in place for key in keys]
    order = sorted(
        (i for i, keep in enumerate(kept) if keep),
        key=lambda i: (question[keys[i][0]], place.get(keys[i], rank[keys[i][1]])),
    )
    return rows.iloc[order][SCORES].reset_index(drop=True)


def score_table(
    judge: Judge,
    answers: pd.DataFrame,
    summaries: pd.DataFrame,
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool = False,
    cache: ResultCache | None = None,
) -> pd.DataFrame:
    """The ``scores`` rows of ``summaries`` on the questions of ``answers`` (without dataset and
    subject), judged by ``judge``: the judge pass (:func:`judgements_table`) on these summaries
    alone. ``keep_tasks`` fills the ``tasks`` column (else null)."""
    scoring = {"temperature": temperature, "keep_tasks": keep_tasks}
    judgements = judgements_table(
        judge, None, answers, answers, summaries, scoring, None, 0, is_stopword, cache
    )
    return summary_scores(judgements, summaries).assign(judge=judge.name)
