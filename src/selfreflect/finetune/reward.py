"""GRPO's reward: minus the SelfReflect score of a sampled summary of a training question, by
the reward judge, against that question's own held-out and conditioning answers.

The summaries of one question in a batch (GRPO's group) are judged in one pass of the judge
(:func:`selfreflect.scoring.experiment.judge_question`), so the question's reference context
runs once per group, not once per summary; identical summaries are judged once. The reward is
exactly what the metric gives the summary, degenerate ones included (empty, one answer
repeated); a summary the judge cannot score (its prompt too long, say) gets the worst reward,
``WORST``, and is counted in the trainer's log (``unscored``) beside the summaries' mean length
in words (``summary_words``) and the judge's CPU time per step and per summary
(``reward_cpu_s``, ``reward_cpu_s_per_summary``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pandas as pd

from selfreflect.scoring.experiment import judge_question
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.prompts import QuestionAnswers
from selfreflect.scoring.stopwords import IsStopword

WORST = -1.0  # minus the largest score (a total variation distance is at most 1)


class SelfReflectReward:
    """A TRL reward function (``prompts``, ``completions`` and the dataset's ``id`` column)."""

    __name__ = "selfreflect"  # the reward's name in the trainer's log

    def __init__(
        self, judge: Judge, data: pd.DataFrame, temperature: float, is_stopword: IsStopword
    ) -> None:
        self.judge = judge
        self.temperature = temperature
        self.is_stopword = is_stopword
        self.answers = {
            row.id: QuestionAnswers(
                row.question, list(row.test_answers), list(row.conditioning_answers), []
            )
            for row in data.itertuples(index=False)
        }

    def scores(self, question_id: str, summaries: Sequence[str]) -> list[float | None]:
        """Each summary's SelfReflect score on the question (None: the judge cannot score it)."""
        judged = judge_question(
            self.judge, self.answers[question_id], summaries, self.temperature, self.is_stopword
        )
        return [judged[text].score for text in summaries]

    def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[str],
        id: Sequence[str],  # the dataset's column, which TRL passes by its name
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        started = time.process_time()
        scores: list[float | None] = [None] * len(completions)
        groups: dict[str, list[int]] = {}
        for index, question_id in enumerate(id):
            groups.setdefault(question_id, []).append(index)
        for question_id, indices in groups.items():
            judged = self.scores(question_id, [completions[i] for i in indices])
            for index, score in zip(indices, judged, strict=True):
                scores[index] = score
        if log_metric is not None:
            cpu_s = time.process_time() - started
            log_metric("reward_cpu_s", cpu_s)
            log_metric("reward_cpu_s_per_summary", cpu_s / max(len(completions), 1))
            log_metric("unscored", sum(score is None for score in scores))
            words = [len(text.split()) for text in completions]
            log_metric("summary_words", sum(words) / max(len(words), 1))
        return [WORST if score is None else -score for score in scores]


@contextmanager
def reward_function(
    config: dict[str, Any], data: pd.DataFrame, source: str
) -> Iterator[SelfReflectReward]:
    """The reward of the config's GRPO run on the training ``data`` (``grpo_data``), judged by
    ``finetune.grpo.judge`` with the config's scoring settings; the judge is released after."""
    from selfreflect.config import model_spec
    from selfreflect.scoring.registry import open_judge
    from selfreflect.scoring.stopwords import stopword_policy

    scoring = config["scoring"]
    spec = model_spec(config, config["finetune"]["grpo"]["judge"], source=source)
    with open_judge(spec, scoring) as judge:
        yield SelfReflectReward(
            judge, data, scoring["temperature"], stopword_policy(scoring["stopwords"])
        )
