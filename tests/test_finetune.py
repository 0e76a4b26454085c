"""Finetuned summarisers on the tiny model, with real TRL, PEFT and vLLM: training data, LoRA
training (loss, resume after a kill), the adapter on both backends, and the config errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from safetensors.torch import load_file

from selfreflect.artifacts import write_table
from selfreflect.questions import question_id
from selfreflect.cli import main
from selfreflect.config import model_spec, validate_config
from selfreflect.finetune.data import dpo_pairs, sft_data
from selfreflect.finetune.train import train_adapter

QUESTIONS = ["What is the capital of France?", "Who wrote Hamlet?", "What colour is the sky?"]
TARGETS = ["Paris.", "Shakespeare.", "Blue, or grey."]
TRAINING = {"learning_rate": 0.01, "epochs": 6, "batch_size": 3, "checkpoint_every": 3}


def finetune_config(model: Path, **finetune) -> dict:
    return validate_config(
        {
            "run": "t",
            "models": {"tiny": {"path": str(model), "backend": "hf", "dtype": "float32"}},
            "subjects": ["tiny"],
            "judges": ["tiny"],
            "datasets": {
                "eval": {"source": "local", "path": "eval.jsonl"},
                "train": {"source": "local", "path": "train.jsonl"},
            },
            "summaries": {"strategies": ["greedy", "finetuned_sft"], "max_tokens": 8},
            "finetune": {"dataset": "train", "training": TRAINING, **finetune},
        }
    )


def questions_table(questions=QUESTIONS, dataset="train") -> pd.DataFrame:
    ids = [question_id(q) for q in questions]
    return pd.DataFrame(
        {"id": ids, "question": questions, "dataset": dataset, "source_index": range(len(ids)),
         "choices": None, "gold": None}
    )


def sft_table() -> pd.DataFrame:
    teacher = questions_table().assign(summary=TARGETS, error=None)
    return sft_data(questions_table(), teacher)


@pytest.fixture(scope="module")
def sft_adapter(tiny_model, tmp_path_factory):
    """An SFT adapter trained in-process, and its loss per step."""
    config = finetune_config(tiny_model)
    out = tmp_path_factory.mktemp("sft") / "adapter"
    losses = train_adapter(
        model_spec(config, "tiny"), "sft", sft_table(), config["finetune"]["training"], out,
        {"ids": []},
    )
    return out, losses


def test_sft_loss_falls(sft_adapter):
    _, losses = sft_adapter
    assert len(losses) == 6 and losses[-1]["loss"] < losses[0]["loss"] / 2
