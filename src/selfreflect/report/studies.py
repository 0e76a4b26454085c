"""The report's judge-scored studies: controlled pairs, the MC study, convergence.

Each takes a loaded judge and artifact tables and returns one study table
(``artifacts.SCHEMAS``); SelfReflect scores come from the scorer's
:func:`selfreflect.scoring.score.score_question`, so a study scores exactly as ``score`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from selfreflect.answers import question_seed
from selfreflect.progress import progress
from selfreflect.report import alt_metrics
from selfreflect.report.controlled import choice_counts, mc_variants, pairs_table
from selfreflect.scoring import metric
from selfreflect.scoring.judge import Judge
from selfreflect.scoring.score import Result, score_answer, upstream_error
from selfreflect.scoring.stopwords import IsStopword
from selfreflect.scoring.tasks import TaskError, question_tasks, reference_tasks

SIDES = ("good", "bad")
MC_COLUMNS = [
    "id",
    "temperature",
    "summary",
    "w1",
    "ambiguous_conditioning",
    "ambiguous_test",
    "score",
    "error",
]


def controlled_scores(
    judge: Judge,
    answers: pd.DataFrame,
    pair_types: Sequence[str],
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """Every metric of both summaries of every controlled pair (long over ``side``); a pair
    that cannot be made keeps its two rows with no summary and the reason in ``error``."""
    pairs = pairs_table(answers, pair_types)
    by_id = answers.set_index("id")
    rows = []
    groups = pairs.groupby("id", sort=False)
    for qid, group in progress(groups, "controlled pairs: questions", groups.ngroups):
        made = group[group["error"].isna()]
        texts = {
            f"{p.pair_type}:{side}": getattr(p, side) for p in made.itertuples() for side in SIDES
        }
        answer = by_id.loc[qid]
        results = {}
        if texts:
            results = score_answer(judge, answer, texts, temperature, is_stopword)
        for pair in group.itertuples():
            for side in SIDES:
                result = results.get(f"{pair.pair_type}:{side}", Result(None, 0, pair.error))
                score, error = result.score, result.error
                summary = getattr(pair, side)
                rows.append((qid, pair.pair_type, side, summary, score, error))
    table = pd.DataFrame(
        rows, columns=["id", "pair_type", "side", "summary", "selfreflect", "error"]
    )
    made = table["summary"].notna()
    items = [
        (by_id.loc[qid, "question"], list(by_id.loc[qid, "conditioning_answers"]), summary)
        for qid, summary in zip(table.loc[made, "id"], table.loc[made, "summary"], strict=True)
    ]
    table[["llm_rating", "p_true", "embedding"]] = np.nan
    if items:
        table.loc[made, "llm_rating"] = alt_metrics.llm_ratings(judge, items)
        table.loc[made, "p_true"] = alt_metrics.p_true(judge, items)
        table.loc[made, "embedding"] = alt_metrics.embedding_similarity(items)
    return table


def mc_scores(
    judge: Judge,
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    settings: dict[str, Any],
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """SelfReflect and true W1 of each stated-distribution summary of each MC question, with
    how many of its conditioning and test answers name two or more choices (ambiguous).

    A question without ``choices`` or whose answers failed keeps one row per temperature with
    no summary and the reason in ``error``.
    """
    choices = questions.set_index("id")["choices"]
    temperatures = settings["mc_temperatures"]
    rows = []
    for answer in progress(answers.itertuples(index=False), "mc study: questions", len(answers)):
        options = choices.get(answer.id)
        excluded = None
        if options is None or len(options) == 0:
            excluded = "not a multiple-choice question"
        elif isinstance(answer.error, str):
            excluded = f"answers failed: {answer.error}"
        if excluded is not None:
            rows += [(answer.id, t, None, None, None, None, None, excluded) for t in temperatures]
            continue
        conditioning, test = list(answer.conditioning_answers), list(answer.test_answers)
        variants = mc_variants(
            conditioning, test, list(options), temperatures, settings["mc_pseudo_count"]
        )
        ambiguous = [int(choice_counts(a, list(options))[-1]) for a in (conditioning, test)]
        texts = {str(t): summary for t, summary, _ in variants}
        results = score_answer(judge, answer, texts, temperature, is_stopword)
        for t, summary, w1 in variants:
            result = results[str(t)]
            rows.append((answer.id, t, summary, w1, *ambiguous, result.score, result.error))
    return pd.DataFrame(rows, columns=MC_COLUMNS)


def subsample_indices(n: int, size: int, seed: int) -> list[int]:
    """The first ``size`` indices of a seeded permutation of ``range(n)`` (nested across sizes)."""
    return [int(i) for i in np.random.default_rng(seed).permutation(n)[:size]]


def subsample(answers: Sequence[str], size: int, seed: int) -> list[str]:
    """The answers at :func:`subsample_indices`."""
    return [answers[i] for i in subsample_indices(len(answers), size, seed)]


Cells = dict[tuple[str, int], dict[str, Result]]  # (axis, size) -> strategy -> result


def convergence_cells(
    judge: Judge,
    question: str,
    test: list[str],
    conditioning: list[str],
    texts: dict[str, str],
    sizes: Sequence[int],
    seed: int,
    temperature: float,
    is_stopword: IsStopword,
) -> Cells:
    """Each summary's score with each subsample of the conditioning answers (all test
    answers) and of the test answers (all conditioning answers), for the sizes the pools hold.

    The summaries' contexts and the full reference context are computed once; each
    conditioning size adds one reference context; a test subsample's tasks are a subset of
    the full ones, so its score is their mean distance. Raises :class:`TaskError` for what
    fails the whole question (no word to mask, a prompt too long).
    """
    reference, tasks = question_tasks(
        judge.format, question, test, conditioning, texts, is_stopword
    )
    words = reference.words
    parts = {n: subsample(conditioning, n, seed) for n in sizes if n <= len(conditioning)}
    references = [reference]
    references += [reference_tasks(judge.format, question, p, words) for p in parts.values()]
    longest = max(len(s) for t in [*references, *tasks.values()] for s in t.sequences)
    if longest > judge.max_model_len:
        raise TaskError(f"prompt has {longest} tokens; max_model_len is {judge.max_model_len}")
    crossed = judge.cross_distances(references, list(tasks.values()), temperature)
    distances = dict(zip(tasks, crossed, strict=True))  # per summary: [reference] -> (n,)
    cells: Cells = {}
    for i, size in enumerate(parts, start=1):
        cells["conditioning", size] = {
            key: Result(metric.score(d[i]), len(d[i]), None) for key, d in distances.items()
        }
    targets = [len(reference.targets(k)) for k in range(len(words))]
    owner = np.repeat([word.answer for word in words], targets)  # each task's held-out answer
    for size in (n for n in sizes if n <= len(test)):
        chosen = np.isin(owner, subsample_indices(len(test), size, seed))
        if not chosen.any():
            failed = Result(None, 0, "no held-out answer has a word to mask")
            cells["test", size] = dict.fromkeys(texts, failed)
            continue
        mask = torch.from_numpy(chosen)
        cells["test", size] = {
            key: Result(metric.score(d[0][mask]), int(chosen.sum()), None)
            for key, d in distances.items()
        }
    return cells


def convergence_scores(
    judge: Judge,
    answers: pd.DataFrame,
    summaries: pd.DataFrame,
    settings: dict[str, Any],
    run_seed: int,
    temperature: float,
    is_stopword: IsStopword,
) -> pd.DataFrame:
    """Scores of every strategy with subsampled conditioning answers (test answers all) and
    with subsampled test answers (conditioning answers all), per size of the subsample
    (:func:`convergence_cells`).

    The first ``convergence_questions`` questions (all if null) take part. Every (question,
    strategy, answer set, size) keeps its row: one that cannot be scored (failed answers or
    summary, a size above the number of answers) has the reason in ``error``.
    """
    chosen = answers
    if settings["convergence_questions"] is not None:
        chosen = answers.head(settings["convergence_questions"])
    strategies = list(dict.fromkeys(summaries["strategy"]))
    lookup = {(r.id, r.strategy): r for r in summaries.itertuples(index=False)}
    sizes = settings["convergence_sizes"]
    rows = []
    for answer in progress(chosen.itertuples(index=False), "convergence: questions", len(chosen)):
        texts, reasons = {}, {}
        for strategy in strategies:
            reason = upstream_error(answer, lookup.get((answer.id, strategy)))
            if reason is None:
                texts[strategy] = lookup[answer.id, strategy].summary
            else:
                reasons[strategy] = reason
        test, conditioning = list(answer.test_answers), list(answer.conditioning_answers)
        cells: Cells = {}
        failure = None
        if texts:
            seed = question_seed(run_seed, answer.id)
            try:
                cells = convergence_cells(
                    judge,
                    answer.question,
                    test,
                    conditioning,
                    texts,
                    sizes,
                    seed,
                    temperature,
                    is_stopword,
                )
            except TaskError as err:
                failure = Result(None, 0, str(err))
        for axis, pool in (("conditioning", conditioning), ("test", test)):
            for size in sizes:
                results = {s: Result(None, 0, reason) for s, reason in reasons.items()}
                if size > len(pool):
                    too_few = Result(None, 0, f"only {len(pool)} {axis} answers")
                    results |= dict.fromkeys(texts, too_few)
                else:
                    results |= cells.get((axis, size)) or dict.fromkeys(texts, failure)
                for strategy in strategies:
                    result = results[strategy]
                    rows.append((answer.id, strategy, axis, size, result.score, result.error))
    columns = ["id", "strategy", "axis", "size", "score", "error"]
    return pd.DataFrame(rows, columns=columns)
