"""Synthetic, schema-valid artifacts of a run up to its judge pass, of any size, without a model.

:func:`write_synthetic_run` writes, at the workflow's paths and through the project's writers,
what a run's jobs up to the judge leave for a config: each evaluated dataset's questions and
answers (a multiple-choice dataset's options and the subject's distribution over them), each
strategy's summaries, each judge's judgement shards (the strategies' rows with their scoring
tasks, the controlled pairs, the multiple-choice variants and the convergence subsamples, the
constructed summaries made by the studies' own constructors) and the pairs' alternative metrics.
With those files in place, Snakemake plans only the jobs after the judge: the merges, score
files, studies, tables and the explorer (``selfreflect bench scale``, tests/test_scale.py).

Answers are made-up words of real answers' lengths: each question's answers carry one of a few
meanings, with random shares (so that they cluster as real ones do), every answer is a distinct
text (as a subject's sampled answers are), and every answer masks three words in five.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from selfreflect import paths
from selfreflect.artifacts import EXPERIMENT, SCHEMAS, TASK, write_table
from selfreflect.config import (
    answer_settings,
    dataset_spec,
    evaluated_datasets,
    question_count,
    summarized_datasets,
)
from selfreflect.scoring.table import SIZE_ABOVE_ANSWERS

VOCABULARY = 5000  # distinct made-up words
# Word counts of the original tool's 20 example answers (tests/data/example_test_answers.json,
# a test reads them): each synthetic answer's length is drawn from them.
REAL_ANSWER_WORDS = (3, 5, 6, 6, 9, 11, 11, 11, 12, 13, 1, 6, 7, 7, 14, 15, 15, 18, 19, 26)
SUMMARY_WORDS = 60
QUESTION_WORDS = 12
MEANINGS = (1, 6)  # meanings per question: from 1 to 5
MASKED = (0, 1, 3)  # positions modulo 5 whose word is masked: 60% of an answer's words
TOP = 5  # the judge's top tokens kept per task (scoring.records.TOP_PREDICTIONS)
CHOICES = 4  # a multiple-choice question's options
FORWARD_TOKENS = 0  # no judge ran


def vocabulary(rng: np.random.Generator) -> np.ndarray:
    """:data:`VOCABULARY` distinct made-up words of 1 to 4 syllables."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    drawn = ("".join(rng.choice(syllables, n)) for n in rng.integers(1, 5, 2 * VOCABULARY))
    return np.array(list(dict.fromkeys(drawn))[:VOCABULARY], dtype=object)


def sentences(rng: np.random.Generator, words: np.ndarray, count: int, length: int) -> list[str]:
    return [" ".join(row) for row in words[rng.integers(0, len(words), (count, length))]]


def _lists(values: pa.Array, size: int) -> pa.ListArray:
    """``values`` cut into lists of ``size``."""
    offsets = pa.array(np.arange(0, len(values) + 1, size, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values)


def task_positions(length: int) -> np.ndarray:
    """The masked word of each task of an answer of ``length`` words (every third word is two
    tokens)."""
    positions = np.array([p for p in range(length) if p % 5 in MASKED], dtype=np.int32)
    return np.repeat(positions, np.where(positions % 3 == 0, 2, 1))


@dataclass(frozen=True)
class AnswerWords:
    """Each question's answers as word indices: ``indices`` (questions x answers x longest,
    padded) and each answer's word count, ``lengths`` (questions x answers)."""

    indices: np.ndarray
    lengths: np.ndarray

    def split(self, n: int) -> tuple[AnswerWords, AnswerWords]:
        """Each question's first ``n`` answers, then the rest."""
        head = AnswerWords(self.indices[:, :n], self.lengths[:, :n])
        return head, AnswerWords(self.indices[:, n:], self.lengths[:, n:])

    def texts(self, words: np.ndarray) -> list[list[str]]:
        return [
            [" ".join(words[answer[:length]]) for answer, length in zip(*question, strict=True)]
            for question in zip(self.indices, self.lengths, strict=True)
        ]

    def tasks_per_question(self) -> np.ndarray:
        """The scoring tasks of each question's answers (:func:`task_positions`)."""
        counts = np.array([len(task_positions(n)) for n in range(self.indices.shape[2] + 1)])
        return counts[self.lengths].sum(axis=1)


def task_lists(rng: np.random.Generator, words: np.ndarray, test: AnswerWords) -> pa.ListArray:
    """One summary's scoring tasks for each question: one per token of each masked word of the
    ``test`` answers (:func:`task_positions`), in answer order."""
    questions, answers, longest = test.indices.shape
    template = task_positions(longest)  # an answer's tasks are the first of these
    kept = template[None, :] < test.lengths.reshape(-1, 1)  # answers x template
    flat_answer, slot = np.nonzero(kept)
    position = template[slot]
    answer = (flat_answer % answers).astype(np.int32)
    word = words[test.indices.reshape(questions * answers, longest)[flat_answer, position]]
    n = len(word)
    top = pa.array(words[rng.integers(0, len(words), n * TOP)])
    probs = np.sort(rng.dirichlet(np.ones(TOP + 1), n)[:, :TOP], axis=1)[:, ::-1]
    fields = {
        "answer": pa.array(answer),
        "position": pa.array(position),
        "word": pa.array(word),
        "token": pa.array(" " + word),
        "distance": pa.array(rng.gamma(2.0, 0.15, n)),
        "summary_top": _lists(top, TOP),
        "summary_p": _lists(pa.array(probs.reshape(-1).astype(np.float32)), TOP),
        "reference_top": _lists(top, TOP),
        "reference_p": _lists(pa.array(probs.reshape(-1).astype(np.float32)), TOP),
    }
    tasks = pa.StructArray.from_arrays(list(fields.values()), fields=list(TASK))
    offsets = np.concatenate([[0], np.cumsum(test.tasks_per_question())]).astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), tasks)


def answer_words(rng: np.random.Generator, questions: int, answers: int) -> AnswerWords:
    """``answers`` distinct answers to each question, each of a real answer's length
    (:data:`REAL_ANSWER_WORDS`) and one of a few meanings per question with random shares: an
    answer is its meaning's words up to its length, the last word its own."""
    low, high = MEANINGS
    longest = max(REAL_ANSWER_WORDS)
    meanings = rng.integers(0, VOCABULARY, (questions, high - 1, longest))
    indices = np.empty((questions, answers, longest), dtype=np.int64)
    lengths = rng.choice(REAL_ANSWER_WORDS, (questions, answers))
    for q in range(questions):
        k = rng.integers(low, high)
        indices[q] = meanings[q, rng.choice(k, answers, p=rng.dirichlet(np.ones(k)))]
        own = rng.choice(VOCABULARY, answers, replace=False)  # distinct last words
        indices[q, np.arange(answers), lengths[q] - 1] = own
    return AnswerWords(indices, lengths)


def write_synthetic_run(config: dict[str, Any], root: Path, seed: int = 0) -> list[Path]:
    """Write the artifacts of ``config``'s run up to its judge pass (sizes from the config) in
    the project at ``root``; returns the files written, relative to it."""
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    written: list[Path] = []
    for dataset in evaluated_datasets(config):
        where = {"run": config["run"], "dataset": dataset}
        questions = _questions(rng, words, config, dataset)
        written.append(_write(root, "questions", questions, paths.QUESTIONS, where, config, []))
        for subject in config["subjects"]:
            where |= {"subject": subject}
            answers, test = _answers(rng, words, config, dataset, questions)
            at = (root, "answers", answers, paths.ANSWERS, where, config, [subject])
            written.append(_write(*at))
            strategies = config["summaries"]["strategies"]
            if dataset not in summarized_datasets(config):
                strategies = []
            summaries = {s: _summaries(rng, words, answers, where, s) for s in strategies}
            for strategy, table in summaries.items():
                at = where | {"strategy": strategy}
                written.append(
                    _write(root, "summaries", table, paths.SUMMARIES, at, config, [subject])
                )
            for judge in config["judges"]:
                experiment = where | {"judge": judge}
                judged = _judgements(rng, words, config, questions, answers, test, summaries)
                written += _write_shards(root, judged, experiment, config)
                alt = _alt_metrics(rng, judged)
                written.append(
                    _write(root, "alt_metrics", alt, paths.ALT_METRICS, experiment, config)
                )
    return written


def _write(
    root: Path,
    kind: str,
    table: pd.DataFrame,
    template: str,
    where: dict[str, str],
    config: dict[str, Any],
    models: list[str] | None = None,
    **metadata: Any,
) -> Path:
    """Write ``table`` at ``template`` filled with ``where`` (under ``root``), with the provenance
    the workflow's command would give it; returns the path relative to ``root``."""
    from selfreflect.provenance import provenance

    path = Path(template.format(**where))
    labels = {key: where[key] for key in EXPERIMENT if key in where}
    table = table.assign(**{k: v for k, v in labels.items() if k in SCHEMAS[kind].names})
    models = [where["judge"]] if models is None else models
    write_table(kind, table, root / path, provenance(config, models, **labels, **metadata))
    return path


def _questions(
    rng: np.random.Generator, words: np.ndarray, config: dict[str, Any], dataset: str
) -> pd.DataFrame:
    count = question_count(config, dataset)
    multiple_choice = dataset_spec(config, dataset)["source"] == "mmlu"
    choices = [sentences(rng, words, CHOICES, 3) for _ in range(count)] if multiple_choice else None
    return pd.DataFrame(
        {
            "id": [f"{dataset}-{i:06d}" for i in range(count)],
            "question": [f"{s}?" for s in sentences(rng, words, count, QUESTION_WORDS)],
            "dataset": dataset,
            "source_index": np.arange(count),
            "choices": choices,
            "gold": None,
        }
    )


def _answers(
    rng: np.random.Generator,
    words: np.ndarray,
    config: dict[str, Any],
    dataset: str,
    questions: pd.DataFrame,
) -> tuple[pd.DataFrame, AnswerWords]:
    """The answers table and its test answers' words."""
    count, n = len(questions), answer_settings(config, dataset)["num_answers"]
    both = answer_words(rng, count, 2 * n)
    test, conditioning = both.split(n)
    multiple_choice = questions["choices"].notna().any()
    truth = list(rng.dirichlet(np.ones(CHOICES + 1), count)) if multiple_choice else None
    table = pd.DataFrame(
        {
            "id": questions["id"],
            "question": questions["question"],
            "test_answers": test.texts(words),
            "conditioning_answers": conditioning.texts(words),
            "backend": "synthetic",
            "model": "synthetic",
            "seed": config["seed"],
            "error": None,
            "choice_probs": truth,
            "choice_source": "logprobs" if multiple_choice else None,
            "choice_error": 0.0 if multiple_choice else None,
        }
    )
    return table, test


def _summaries(
    rng: np.random.Generator,
    words: np.ndarray,
    answers: pd.DataFrame,
    where: dict[str, str],
    strategy: str,
) -> pd.DataFrame:
    count = len(answers)
    return pd.DataFrame(
        {
            "id": answers["id"],
            "question": answers["question"],
            "dataset": where["dataset"],
            "subject": where["subject"],
            "strategy": strategy,
            "summary": sentences(rng, words, count, SUMMARY_WORDS),
            "summarizer": "synthetic",
            "prompt_tokens": 1000,
            "completion_tokens": 80,
            "seconds": 1.0,
            "error": None,
        }
    )


def _judgements(
    rng: np.random.Generator,
    words: np.ndarray,
    config: dict[str, Any],
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    test: AnswerWords,
    summaries: dict[str, pd.DataFrame],
) -> pd.DataFrame:
    """One experiment's judgements as the judge pass lays them out
    (selfreflect.scoring.experiment), the scores random: a question at a time, its strategies'
    rows with their tasks, then its studies' rows (pairs, multiple-choice, convergence). (Laid
    out a kind at a time, every strategy's rows first, a merge of one shard held about 14 row
    groups at once: 2.9 GiB at 10,000 questions.)"""
    from selfreflect.controlled import SIDES, pairs_table
    from selfreflect.scoring.table import COLUMNS

    report = config["report"]
    strategy_rows = [
        table.assign(kind="strategy")[["id", "kind", "strategy", "summary", "error"]]
        for table in summaries.values()
    ]
    pairs = pairs_table(answers, report["pair_types"])
    pair_rows = pd.concat(  # each pair's sides in turn, as the judge writes them
        pairs.assign(kind="pair", side=side, summary=pairs[side])[
            ["id", "kind", "pair_type", "side", "summary", "error"]
        ]
        for side in SIDES
    ).sort_index(kind="stable")
    rows = pd.concat(
        [*strategy_rows, pair_rows, _mc_rows(questions, answers, report["mc_temperatures"])],
        ignore_index=True,
    )
    rows = pd.concat([rows, _convergence_rows(answers, list(summaries), report)], ignore_index=True)
    rows["error"] = rows["error"].astype(object).where(rows["error"].notna(), None)
    scored = rows["error"].isna()
    rows["score"] = pd.Series(rng.gamma(2.0, 0.15, len(rows))).clip(upper=1.0).where(scored)
    num_tasks = dict(zip(answers["id"], test.tasks_per_question(), strict=True))
    rows["num_tasks"] = rows["id"].map(num_tasks).astype("Int64").where(scored)
    strategy_tasks = [task_lists(rng, words, test) for _ in summaries]
    others = len(rows) - sum(len(table) for table in summaries.values())
    tasks = pa.concat_arrays([*strategy_tasks, pa.nulls(others, pa.list_(TASK))])
    rows = rows.reindex(columns=[c for c in COLUMNS if c != "tasks"])
    rows["tasks"] = pd.arrays.ArrowExtensionArray(tasks)
    position = rows["id"].map({qid: i for i, qid in enumerate(answers["id"])}).to_numpy()
    return rows.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)


def _mc_rows(
    questions: pd.DataFrame, answers: pd.DataFrame, temperatures: list[float]
) -> pd.DataFrame:
    """The multiple-choice variants of each question with options (selfreflect.mc_study)."""
    from selfreflect.mc_study.variants import mc_variants

    rows = []
    options = questions.set_index("id")["choices"]
    for qid, truth in zip(answers["id"], answers["choice_probs"], strict=True):
        if truth is None or options[qid] is None:
            continue
        for temperature, summary, _ in mc_variants(list(truth), list(options[qid]), temperatures):
            rows.append({"id": qid, "kind": "mc", "temperature": temperature, "summary": summary})
    return pd.DataFrame(rows, columns=["id", "kind", "temperature", "summary"])


def _convergence_rows(
    answers: pd.DataFrame, strategies: list[str], report: dict[str, Any]
) -> pd.DataFrame:
    """Each strategy's cell per subsample size and axis on the convergence study's questions."""
    if not strategies:
        return pd.DataFrame(columns=["id", "kind"])
    first = answers["id"].head(report["convergence_questions"] or len(answers))
    n = len(answers["test_answers"].iloc[0])
    rows = []
    for qid in first:
        for strategy in strategies:
            for axis in ("conditioning", "test"):
                for size in report["convergence_sizes"]:
                    error = None if size <= n else f"{SIZE_ABOVE_ANSWERS}: {n} {axis} answers"
                    labels = {"strategy": strategy, "axis": axis, "size": size}
                    rows.append({"id": qid, "kind": "convergence", **labels, "error": error})
    return pd.DataFrame(rows)


def _write_shards(
    root: Path, judged: pd.DataFrame, experiment: dict[str, str], config: dict[str, Any]
) -> list[Path]:
    """The judgements cut into the config's shards of the questions (selfreflect.sharding)."""
    from selfreflect.sharding import shard

    ids = pd.DataFrame({"id": list(dict.fromkeys(judged["id"]))})
    shards, written = config["shards"], []
    for index in range(shards):
        part = judged[judged["id"].isin(shard(ids, index, shards)["id"])]
        meta = {"shard": [index, shards], "judge_forward_tokens": FORWARD_TOKENS}
        at = experiment | {"shard": index}
        at = (root, "judgements", part, paths.JUDGEMENTS_SHARD, at, config)
        written.append(_write(*at, **meta))
    return written


def _alt_metrics(rng: np.random.Generator, judged: pd.DataFrame) -> pd.DataFrame:
    """The controlled pairs' alternative metrics, random."""
    pairs = judged[(judged["kind"] == "pair") & judged["error"].isna()]
    n = len(pairs)
    metrics = {
        "llm_rating": rng.uniform(1, 10, n),
        "p_true": rng.uniform(0, 1, n),
        "embedding": rng.uniform(0, 1, n),
    }
    return pairs[["id", "pair_type", "side", "summary"]].assign(**metrics)
