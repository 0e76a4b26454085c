"""GRPO's reward (selfreflect.finetune.reward) on the tiny model's judge: minus exactly the score
the metric gives a summary, degenerate summaries included; the worst reward, counted, for a
summary the judge cannot score."""

from __future__ import annotations

import pandas as pd
import pytest

from selfreflect.config import validate_config
from selfreflect.finetune.data import grpo_questions
from selfreflect.finetune.reward import WORST, SelfReflectReward, reward_function
from selfreflect.scoring.experiment import judge_question
from selfreflect.scoring.prompts import QuestionAnswers
from selfreflect.scoring.registry import open_judge
from selfreflect.scoring.stopwords import stopword_policy

TEST = ["Paris is the capital of France", "It is Lyon"]
CONDITIONING = ["Paris", "Paris, I think", "Lyon"]
DATA = pd.DataFrame(
    {
        "id": ["q1", "q2"],
        "question": ["What is the capital of France?", "Which city?"],
        "test_answers": [TEST, ["Rome"]],
        "conditioning_answers": [CONDITIONING, ["Rome", "Milan"]],
    }
)
DEGENERATE = ["", " ".join([TEST[0]] * 20), "Mostly Paris, maybe Lyon."]


@pytest.fixture(scope="module")
def judge(tiny_spec):
    settings = {"backend": "hf", "dtype": "auto", "batch_size": 8}
    with open_judge({**tiny_spec, "backend": "hf"}, settings) as model:
        yield model


def metric_scores(
    judge, row: int, texts: list[str], temperature: float = 5.0, stopwords: str = "none"
) -> list[float | None]:
    """The scores the judge pass of the evaluation gives ``texts`` on DATA's ``row``."""
    question = DATA.iloc[row]
    answers = QuestionAnswers(question.question, question.test_answers,
                              question.conditioning_answers, [])  # fmt: skip
    judged = judge_question(judge, answers, texts, temperature, stopword_policy(stopwords))
    return [judged[text].score for text in texts]


def test_the_reward_is_minus_the_metrics_score_degenerate_summaries_included(judge):
    reward = SelfReflectReward(judge, DATA, 5.0, stopword_policy("none"))
    logged: dict[str, list[float]] = {}
    texts = [*DEGENERATE, "Rome", "Rome"]  # a group may sample one summary twice
    ids = ["q1"] * len(DEGENERATE) + ["q2", "q2"]
    rewards = reward([""] * len(texts), texts, ids, lambda k, v: logged.setdefault(k, []).append(v))
    expected = [*metric_scores(judge, 0, DEGENERATE), *metric_scores(judge, 1, ["Rome"] * 2)]
    assert all(score is not None for score in expected)
    assert rewards == [-score for score in expected]
    assert all(-1 <= r <= 0 for r in rewards)
    assert logged["unscored"] == [0] and logged["reward_cpu_s"][0] > 0
    per_summary = logged["reward_cpu_s"][0] / len(texts)
    assert logged["reward_cpu_s_per_summary"] == [pytest.approx(per_summary)]
    assert logged["summary_words"] == [sum(len(t.split()) for t in texts) / len(texts)]


def test_a_summary_the_judge_cannot_score_gets_the_worst_reward_and_is_counted(judge):
    too_long = "word " * (judge.max_model_len + 10)  # its context exceeds the judge's length
    reward = SelfReflectReward(judge, DATA, 5.0, stopword_policy("none"))
    logged: dict[str, list[float]] = {}
    rewards = reward(
        ["", ""], [too_long, "Paris"], ["q1", "q1"], lambda k, v: logged.update({k: v})
    )
    assert rewards[0] == WORST == -1.0 and rewards[1] == -metric_scores(judge, 0, ["Paris"])[0]
    assert logged["unscored"] == 1


def test_the_grpo_runs_reward_scores_with_the_configs_judge_temperature_and_stopwords(
    tiny_spec, judge
):
    """reward_function judges with finetune.grpo.judge at the config's scoring temperature and
    stopword policy, not the defaults (5, none), which score these summaries otherwise."""
    tiny = {"path": tiny_spec["path"], "backend": "hf", "dtype": "auto"}
    config = validate_config(
        {
            "models": {"tiny": tiny, "reward": tiny},
            "subjects": ["tiny"],
            "judges": ["tiny"],
            "datasets": {"train": {"source": "local", "path": "train.jsonl"}},
            "scoring": {"temperature": 2.0, "stopwords": "wordfreq"},
            "finetune": {"dataset": "train", "grpo": {"judge": "reward"}},
        }
    )
    texts = [*DEGENERATE, "Paris"]
    with reward_function(config, DATA, "config") as reward:
        rewards = reward([""] * len(texts), texts, ["q1"] * len(texts))
    expected = metric_scores(judge, 0, texts, 2.0, "wordfreq")
    assert rewards == pytest.approx([-score for score in expected], abs=1e-6)
    for temperature, stopwords in [(5.0, "wordfreq"), (2.0, "none")]:
        other = metric_scores(judge, 0, texts, temperature, stopwords)
        assert rewards != pytest.approx([-score for score in other], abs=1e-6)


def test_grpo_questions_are_those_whose_answers_were_sampled():
    questions = DATA[["id", "question"]]
    answers = DATA[["id", "test_answers", "conditioning_answers"]].assign(error=[None, "failed"])
    table = grpo_questions(questions, answers)
    assert table["id"].tolist() == ["q1"]
    assert table.columns.tolist() == ["id", "question", "test_answers", "conditioning_answers"]
