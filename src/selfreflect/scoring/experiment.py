"""Everything one experiment (dataset, subject, judge) scores with SelfReflect, in one judge
pass per question: every strategy's summary, the controlled pairs, the multiple-choice
variants and the convergence study's subsampled references.

The result is one ``judgements`` table (:mod:`selfreflect.scoring.table`). The pass of a question
(:func:`judge_question`) runs one way: the :mod:`~selfreflect.scoring.cache` gives back the
summary texts judged before under the same question, answers, judge and code; for the others,
the :mod:`~selfreflect.scoring.prompts` (the masked words; the chats of the reference contexts,
shared by all of them, and of each distinct text) are written, and their
:mod:`~selfreflect.scoring.contexts` (token sequences) built once; the judge's
:mod:`~selfreflect.scoring.forwards` give each task's distance to each reference context; the
:mod:`~selfreflect.scoring.records` of each text are kept, and stored in the cache. A question
whose texts are all known runs no model.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from selfreflect.controlled import SIDES, pairs_table
from selfreflect.failures import ANSWERS_FAILED
from selfreflect.mc_study.variants import mc_exclusion, mc_variants
from selfreflect.progress import progress
from selfreflect.scoring.contexts import question_contexts
from selfreflect.scoring.prompts import QuestionAnswers, TaskError, question_prompts
from selfreflect.scoring.records import TOP_PREDICTIONS, Judgement, judgements
from selfreflect.scoring.stopwords import IsStopword
from selfreflect.scoring.table import COLUMNS, convergence_rows, filled, row, summary_scores
from selfreflect.seeds import question_seed, subsample_indices

if TYPE_CHECKING:
    from selfreflect.scoring.cache import ResultCache
    from selfreflect.scoring.forwards import Judge


def judge_question(
    judge: Judge,
    answers: QuestionAnswers,
    texts: Sequence[str],
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool = False,
    cache: ResultCache | None = None,
) -> dict[str, Judgement]:
    """Each distinct summary text of ``texts`` judged on one question: read back from
    ``cache`` where it holds the text, else judged and stored there."""
    unique = list(dict.fromkeys(texts))
    parse = functools.partial(
        Judgement.from_entry,
        references=1 + len(answers.subsamples),
        test_answers=len(answers.test),
        keep_tasks=keep_tasks,
    )
    known = {}
    if cache is not None:
        read = {text: cache.get(answers.key(), text, parse) for text in unique}
        known = {text: judgement for text, judgement in read.items() if judgement is not None}
    todo = [text for text in unique if text not in known]
    if not todo:
        return known
    fresh = judged_texts(judge, answers, todo, temperature, is_stopword, keep_tasks)
    if cache is not None:
        for text in todo:
            cache.put(answers.key(), text, fresh[text].entry())
    return known | {text: fresh[text] for text in todo}


def judged_texts(
    judge: Judge,
    answers: QuestionAnswers,
    texts: Sequence[str],
    temperature: float,
    is_stopword: IsStopword,
    keep_tasks: bool,
) -> dict[str, Judgement]:
    """Each of ``texts`` judged on one question: its chats, their token sequences, the judge's
    forwards, the records; a question that cannot be scored fails every text."""
    try:
        prompts = question_prompts(answers, texts, is_stopword)
    except TaskError as err:
        return {text: Judgement([], [], error=str(err)) for text in texts}
    contexts = question_contexts(judge.format, judge.max_model_len, prompts)
    top_k = TOP_PREDICTIONS if keep_tasks else 0
    references, summaries = judge.cross_judge(
        contexts.references, list(contexts.summaries.values()), temperature, top_k
    )
    return judgements(judge.tokenizer, contexts, references, summaries, temperature, keep_tasks)


def upstream_error(answer: Any, summary: Any) -> str | None:
    """Why a question cannot be scored before any task is built, or None."""
    if isinstance(answer.error, str):
        return f"{ANSWERS_FAILED}: {answer.error}"
    if summary is None:
        return "no summary for this question"
    if isinstance(summary.error, str):
        return f"summary failed: {summary.error}"
    if not isinstance(summary.summary, str):
        return "summary is null"
    return None


def _strategy_rows(answer: Any, summaries: dict[str, dict[str, Any]], strategies: list[str]):
    """One row per strategy (a question without its summary: the reason in ``error``)."""
    own = summaries.get(answer.id, {})
    for strategy in strategies:
        summary = own.get(strategy)
        error = upstream_error(answer, summary)
        text = None if error else summary.summary
        yield row(answer.id, "strategy", text, error, strategy=strategy)


def _pair_rows(pairs: list[Any]) -> Iterator[dict]:
    for pair in pairs:
        for side in SIDES:
            summary = getattr(pair, side)
            yield row(pair.id, "pair", summary, pair.error, pair_type=pair.pair_type, side=side)


def _mc_rows(answer: Any, choices: Any, temperatures: list[float]) -> Iterator[dict]:
    excluded = mc_exclusion(answer, choices)
    if excluded is not None:
        for t in temperatures:
            yield row(answer.id, "mc", None, excluded, temperature=float(t))
        return
    for t, summary, _ in mc_variants(list(answer.choice_probs), list(choices), temperatures):
        yield row(answer.id, "mc", summary, None, temperature=t)


def judgements_table(rows: Iterable[list[dict]]) -> pd.DataFrame:
    """Each question's ``judgements`` rows (:func:`judgement_rows`) in one table."""
    return pd.DataFrame([row for question in rows for row in question], columns=COLUMNS)


def judgement_rows(
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
) -> Iterator[list[dict]]:
    """The ``judgements`` rows of each question in ``shard`` (rows of ``answers``, the whole
    dataset's, from which controlled pairs borrow foreign answers and the convergence study
    takes its first questions), a question at a time: every summary of ``summaries`` and,
    unless ``report`` (the config's report settings, with the ``cluster`` settings that group
    answers by meaning) is None, the studies' constructed summaries. ``questions`` gives the
    multiple-choice questions' options (None: no question has any)."""
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
    for answer in progress(shard.itertuples(index=False), "judging: questions", len(shard)):
        strategy_rows = list(_strategy_rows(answer, by_question, strategies)) if strategies else []
        items = [*strategy_rows, *_pair_rows(pairs_of.get(answer.id, []))]
        if has_mc:
            items += _mc_rows(answer, choices.get(answer.id), report["mc_temperatures"])
        seed = question_seed(run_seed, answer.id)
        pools = {
            "conditioning": list(answer.conditioning_answers),
            "test": list(answer.test_answers),
        }
        subsamples = []
        if answer.id in convergence:
            conditioning = pools["conditioning"]
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
                pools["test"],
                pools["conditioning"],
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
        rows = filled(items, judged)
        if answer.id in convergence:
            rows += convergence_rows(answer.id, pools, strategy_rows, judged, sizes, seed)
        yield rows


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
    subject), judged by ``judge``: the judge pass (:func:`judgement_rows`) on these summaries
    alone. ``keep_tasks`` fills the ``tasks`` column (else null)."""
    scoring = {"temperature": temperature, "keep_tasks": keep_tasks}
    judgements = judgements_table(
        judgement_rows(
            judge, None, answers, answers, summaries, scoring, None, 0, is_stopword, cache
        )
    )
    return summary_scores(judgements, summaries).assign(judge=judge.name)
