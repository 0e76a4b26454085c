"""The vLLM judge agrees with the hf and reference judges on the reference files (one engine)."""

from __future__ import annotations

import json
import subprocess

import pytest
import torch

from selfreflect.scoring import metric
from selfreflect.scoring.contexts import question_tasks
from selfreflect.scoring.hf_judge import HfJudge
from selfreflect.scoring.reference_judge import ReferenceJudge
from selfreflect.scoring.stopwords import stopword_policy
from selfreflect.scoring.vllm_judge import VllmJudge
from tests.conftest import REFERENCE, tiny_format

pytestmark = pytest.mark.vllm


@pytest.fixture(scope="module")
def judges(tiny_spec, vllm_engine):
    from selfreflect.backends.hf_engine import load_hf_model

    tokenizer, model = load_hf_model({**tiny_spec, "dtype": "float32"})
    return {
        "vllm": VllmJudge(tiny_spec, batch_size=64, llm=vllm_engine),
        "hf": HfJudge("tiny", tiny_format(tokenizer), model, batch_size=8),
        "reference": ReferenceJudge("tiny", tiny_format(tokenizer), model),
    }


@pytest.fixture(scope="module")
def questions(judges):
    """The tasks of both reference questions, under the default stopword policy (every policy's
    masking against the original tool's: tests/test_scoring.py)."""
    tests = json.loads((REFERENCE / "example_test_answers.json").read_text())
    summaries = json.loads((REFERENCE / "example_summaries.json").read_text())
    tokenizer = judges["vllm"].tokenizer
    return [
        question_tasks(
            tiny_format(tokenizer),
            record["question"],
            record["masked_out_task_answers"],
            record["conditioning_answers"],
            summary["summaries"],
            stopword_policy("wordfreq"),
        )
        for record, summary in zip(tests, summaries, strict=True)
    ]


def test_backends_agree_per_question(judges, questions):
    for reference, summaries in questions:
        contexts = list(summaries.values())
        everything = range(len(reference.sequences))
        # the baseline's logits do not depend on T: compute them once, as its distances() does
        with torch.inference_mode():
            slow_reference = judges["reference"].logits(reference, everything)
            slow = [judges["reference"].logits(c, everything) for c in contexts]
        for temperature in (5.0, 1.0):
            scores = {
                name: [
                    metric.score(d.tolist())
                    for d in judges[name].distances(reference, contexts, temperature)
                ]
                for name in ("vllm", "hf")
            }
            scores["reference"] = [
                metric.score(metric.task_distances(logits, slow_reference, temperature).tolist())
                for logits in slow
            ]
            for name in ("hf", "reference"):
                for a, b in zip(scores["vllm"], scores[name], strict=True):
                    assert abs(a - b) < 1e-4, (temperature, name, scores)


def test_vllm_identical_context_scores_zero(judges, questions):
    reference, _ = questions[0]
    distances = judges["vllm"].distances(reference, [reference], 5.0)[0]
    assert torch.equal(distances, torch.zeros_like(distances))


def test_score_command_runs_a_vllm_judge_without_a_config(smollm2_model, tmp_path):
    """`selfreflect score --judge DIR --backend vllm`, no config, on a real model (the tiny
    model's vLLM judge: the tests above): the schema's defaults start an engine on this CPU, and
    its scores equal the hf judge's within 1e-4: under the default dtype `auto` both compute in
    the checkpoint's float32 (vLLM's own `auto` would run it in bfloat16, which alone moves a
    SmolLM2 score by 4e-4)."""
    record = json.loads((REFERENCE / "example_test_answers.json").read_text())[0]
    record["masked_out_task_answers"] = record["masked_out_task_answers"][:3]
    summary = json.loads((REFERENCE / "example_summaries.json").read_text())[0]
    answers, summaries = tmp_path / "answers.json", tmp_path / "summaries.json"
    answers.write_text(json.dumps([record]))
    summaries.write_text(json.dumps([summary]))
    judge = str(smollm2_model)
    scores = {}
    for backend in ("vllm", "hf"):
        out = tmp_path / f"{backend}.json"
        command = ["selfreflect", "score", "--judge", judge, "--backend", backend,
                   "--test-answers", answers, "--summaries", summaries,
                   "--out", out]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-3000:]
        [scores[backend]] = json.loads(out.read_text())
    assert set(scores["vllm"]) == set(summary["summaries"])
    for key, value in scores["vllm"].items():
        assert 0 < value < 1 and abs(value - scores["hf"][key]) < 1e-4, (key, scores)
