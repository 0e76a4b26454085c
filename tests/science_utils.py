"""The scientific checks on a real model, shared by tests/test_science.py and
scripts/science_evidence.py: sampling, summaries and scores all go through the functions the
workflow runs (``sample_answers``, ``strategies.summarize``, ``score_table``, the studies)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.answers import sample_answers
from selfreflect.backends import Generator
from selfreflect.config import validate_config
from selfreflect.judging import judgements_table
from selfreflect.questions import format_mmlu, load_questions, question_id
from selfreflect.report.studies import alt_metrics_table, controlled_scores, mc_scores
from selfreflect.report.tables import validation_table
from selfreflect.scoring.judge import Judge
from selfreflect.scoring.score import score_table
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.stats import paired_test, rank_correlation
from selfreflect.strategies import Models, summarize

DATA = Path(__file__).resolve().parent / "data"
FACTS = DATA / "science_facts.jsonl"  # open factual questions with one known answer
MULTIPLE_CHOICE = DATA / "science_mc.jsonl"  # MMLU-format: question, choices, answer index
PAIR_TYPES = ("majority_only", "extra_option", "idk")  # the pairs test 1 asserts on
TEMPERATURE = 5.0  # the paper's post-hoc temperature
SEED = 1


@dataclass(frozen=True)
class Sizes:
    """How much real text an experiment samples (CI size by default)."""

    num_answers: int = 5  # N: 2N answers per question, N held out
    max_tokens: int = 40  # per answer
    mc_num_answers: int = 10  # N of the multiple-choice questions (frequencies need more)
    mc_max_tokens: int = 12
    summary_max_tokens: int = 48
    num_fresh_answers: int = 5
    mc_temperatures: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)


def config(model: str, path: str, sizes: Sizes) -> dict[str, Any]:
    """A validated config with ``model`` (on vLLM) as subject, summariser and judge."""
    return validate_config(
        {
            "seed": SEED,
            "models": {
                model: {
                    "path": path,
                    "dtype": "float32",
                    "max_model_len": 2048,
                    "kv_cache_memory_bytes": 256 * 2**20,
                    "enforce_eager": True,
                }
            },
            "subjects": [model],
            "judges": [model],
            "datasets": {"facts": {"source": "local", "path": str(FACTS)}},
            "summaries": {
                "max_tokens": sizes.summary_max_tokens,
                "num_fresh_answers": sizes.num_fresh_answers,
                "fresh_max_tokens": sizes.max_tokens,
            },
        }
    )


def fact_questions() -> pd.DataFrame:
    return load_questions("facts", {"source": "local", "path": str(FACTS)}, 10**6, SEED)


def mc_questions() -> pd.DataFrame:
    """The multiple-choice questions as the ``mmlu`` loader formats them."""
    rows = []
    for line in MULTIPLE_CHOICE.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text = format_mmlu(record["question"], record["choices"], record.get("subject"))
        rows.append({"id": question_id(text), "question": text, "choices": record["choices"]})
    return pd.DataFrame(rows)


def answers(
    generator: Generator, questions: pd.DataFrame, num_answers: int, max_tokens: int
) -> pd.DataFrame:
    """The subject's ``answers`` table (SPEC §3: T=1, top_p 1), seeded by the run seed."""
    settings = {"num_answers": num_answers, "temperature": 1.0, "top_p": 1.0}
    return sample_answers(
        generator, questions, {**settings, "max_tokens": max_tokens}, SEED, "vllm"
    )


def summaries(
    generator: Generator, questions: pd.DataFrame, strategies: list[str], cfg: dict[str, Any]
) -> pd.DataFrame:
    """One ``summaries`` table of every strategy, the generator as subject and summariser."""
    models = Models(lambda: generator, lambda: generator)
    name = generator.name
    return pd.concat([summarize(s, questions, models, cfg, name) for s in strategies])


def scores(judge: Judge, answer_table: pd.DataFrame, summary_table: pd.DataFrame) -> pd.DataFrame:
    return score_table(judge, answer_table, summary_table, TEMPERATURE, stopword_policy("wordfreq"))


GROUPING = ("minilm", 0.8)  # the pairs group answers by meaning, as the configs' cluster does


def judgements(
    judge: Judge, questions: pd.DataFrame, answer_table: pd.DataFrame, **report: Any
) -> pd.DataFrame:
    """The workflow's judge pass over the studies' constructed summaries (no strategies)."""
    settings = {
        "pair_types": [],
        "mc_temperatures": [],
        "mc_pseudo_count": 0.5,
        "convergence_sizes": [],
        "convergence_questions": None,
        "cluster": {"embedder": GROUPING[0], "threshold": GROUPING[1]},
        **report,
    }
    scoring = {"temperature": TEMPERATURE, "keep_tasks": False}
    none = pd.DataFrame(columns=["id", "strategy", "summary", "error"])
    policy = stopword_policy("wordfreq")
    return judgements_table(
        judge, questions, answer_table, answer_table, none, scoring, settings, SEED, policy
    )


def controlled_fractions(judge: Judge, answer_table: pd.DataFrame) -> pd.DataFrame:
    """Test 1: per pair type and metric, the fraction of pairs ranked correctly (Table 1)."""
    questions = answer_table[["id"]].assign(choices=None)
    judged = judgements(judge, questions, answer_table, pair_types=list(PAIR_TYPES))
    alternatives = alt_metrics_table(judge, answer_table, list(PAIR_TYPES), GROUPING)
    table = controlled_scores(judged, alternatives)
    table = table.assign(dataset="facts", subject=judge.name, judge=judge.name)
    return validation_table(table, confidence=0.95)


def mc_correlation(
    judge: Judge, questions: pd.DataFrame, answer_table: pd.DataFrame, sizes: Sizes
) -> tuple[pd.DataFrame, float, float]:
    """Test 2: the MC study's summaries and Spearman (rho, p) of SelfReflect against true W1."""
    settings = {"mc_temperatures": list(sizes.mc_temperatures), "mc_pseudo_count": 0.5}
    judged = judgements(judge, questions, answer_table, **settings)
    table = mc_scores(questions, answer_table, judged, settings)
    ok = table.dropna(subset=["score"])
    rho, p = rank_correlation(ok["score"], ok["w1"])
    return table, rho, p


def strategy_comparison(score_table_: pd.DataFrame, better: str, baseline: str) -> dict[str, Any]:
    """Test 3: mean scores and the paired Wilcoxon test of ``better`` against ``baseline``."""
    wide = score_table_.pivot_table(index="id", columns="strategy", values="score").dropna()
    result = paired_test(wide[better], wide[baseline], seed=SEED)
    return {
        "n": result.n,
        "mean": {better: float(wide[better].mean()), baseline: float(wide[baseline].mean())},
        "diff": result.diff.estimate,
        "diff_ci": [result.diff.low, result.diff.high],
        "p_value": result.p_value,
    }
