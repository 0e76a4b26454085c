"""Training data from the workflow's artifacts: SFT targets, DPO preference pairs and the
GRPO questions with the answers their rewards are measured against."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import pandas as pd

from selfreflect.errors import InputError


def check_disjoint(training: pd.DataFrame, evaluated: Sequence[pd.DataFrame], name: str) -> None:
    """Fail, naming both datasets, when a training question id is also an evaluated one's."""
    train_ids = set(training["id"])
    for questions in evaluated:
        shared = questions[questions["id"].isin(train_ids)]
        if len(shared):
            other = questions["dataset"].iloc[0]
            raise InputError(
                f"finetune.dataset: '{name}' shares {len(shared)} question(s) with the evaluated"
                f" dataset '{other}' (e.g. {shared['question'].iloc[0]!r})"
            )


def sft_data(questions: pd.DataFrame, teacher: pd.DataFrame) -> pd.DataFrame:
    """One example per training question the teacher summarised: ``id``, ``question``,
    ``target`` (the teacher's summary)."""
    done = teacher.loc[teacher["error"].isna() & teacher["summary"].notna(), ["id", "summary"]]
    table = questions[["id", "question"]].merge(done, on="id")
    return table.rename(columns={"summary": "target"})


def dpo_pairs(
    questions: pd.DataFrame,
    summaries: Sequence[pd.DataFrame],
    scores: Sequence[pd.DataFrame],
    min_gap: float,
) -> pd.DataFrame:
    """Every pair of distinct candidate summaries of a question whose SelfReflect scores differ by
    more than zero and at least ``min_gap``: the lower-scored one is ``chosen``, ``gap`` the
    difference. ``summaries`` and ``scores`` are the candidate strategies' tables, in order."""
    candidates = pd.concat(
        [
            s[["id", "strategy", "summary"]].merge(c[["id", "strategy", "score"]])
            for s, c in zip(summaries, scores, strict=True)
        ]
    ).dropna(subset=["summary", "score"])
    texts = dict(zip(questions["id"], questions["question"], strict=True))
    rows = []
    for qid, group in candidates[candidates["id"].isin(texts)].groupby("id", sort=False):
        ranked = group.sort_values("score", kind="stable").itertuples(index=False)
        for better, worse in combinations(ranked, 2):
            gap = worse.score - better.score
            if gap > 0 and gap >= min_gap and better.summary != worse.summary:
                rows.append(
                    {
                        "id": qid,
                        "question": texts[qid],
                        "chosen": better.summary,
                        "rejected": worse.summary,
                        "chosen_strategy": better.strategy,
                        "rejected_strategy": worse.strategy,
                        "gap": gap,
                    }
                )
    return pd.DataFrame(
        rows,
        columns=[
            "id",
            "question",
            "chosen",
            "rejected",
            "chosen_strategy",
            "rejected_strategy",
            "gap",
        ],
    )


def grpo_questions(questions: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """One example per training question whose answers were sampled: ``id``, ``question``,
    ``test_answers`` and ``conditioning_answers`` (a sampled summary's reward is measured
    against them)."""
    sampled = answers.loc[answers["error"].isna(), ["id", "test_answers", "conditioning_answers"]]
    return questions[["id", "question"]].merge(sampled, on="id")
