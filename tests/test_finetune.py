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
from selfreflect.cli import main
from selfreflect.config import model_spec, validate_config
from selfreflect.finetune.data import sft_data
from selfreflect.finetune.train import train_adapter
from selfreflect.questions import question_id

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
        {
            "id": ids,
            "question": questions,
            "dataset": dataset,
            "source_index": range(len(ids)),
            "choices": None,
            "gold": None,
        }
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
        model_spec(config, "tiny"),
        "sft",
        sft_table(),
        config["finetune"]["training"],
        out,
        {"ids": []},
    )
    return out, losses


def test_sft_loss_falls(sft_adapter):
    _, losses = sft_adapter
    assert len(losses) == 6 and losses[-1]["loss"] < losses[0]["loss"] / 2


def greedy_summaries(generator) -> list[str]:
    from selfreflect.backends import Sampling
    from selfreflect.strategies.finetuned import finetuned_chat

    chats = [finetuned_chat(q) for q in QUESTIONS]
    return [g.texts[0] for g in generator.chat(chats, Sampling(max_tokens=12))]


def test_adapter_changes_summaries_alike_on_hf_and_vllm(
    sft_adapter, tiny_model, hf_generator, vllm_engine
):
    from selfreflect.backends.hf_engine import HfGenerator
    from selfreflect.backends.vllm_engine import VllmGenerator
    from tests.conftest import tiny_model_spec

    adapter = str(sft_adapter[0])
    hf = HfGenerator({**tiny_model_spec(tiny_model, backend="hf"), "adapter": adapter})
    vllm = VllmGenerator({**tiny_model_spec(tiny_model), "adapter": adapter}, llm=vllm_engine)
    finetuned = greedy_summaries(hf)
    assert finetuned != greedy_summaries(hf_generator)
    assert greedy_summaries(vllm) == finetuned


def run_cli(*args: str | Path) -> None:
    """``selfreflect ARGS`` in-process through its real entry point."""
    argv = sys.argv
    sys.argv = ["selfreflect", *map(str, args)]
    try:
        main()
    finally:
        sys.argv = argv


def write_inputs(tmp_path: Path, tiny_model: Path, **finetune) -> list[str | Path]:
    """Config and SFT data files for ``finetune-train``: its arguments but for --out, --loss."""
    config = finetune_config(tiny_model, **finetune)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    ids = sorted(sft_table()["id"])
    write_table("sft_data", sft_table(), tmp_path / "d.parquet", {"ids": ids})
    return [
        "finetune-train",
        "--config",
        tmp_path / "c.yaml",
        "--subject",
        "tiny",
        "--method",
        "sft",
        "--data",
        tmp_path / "d.parquet",
    ]


def test_killed_training_resumes_to_the_same_adapter(sft_adapter, tiny_model, tmp_path):
    command = [
        *write_inputs(tmp_path, tiny_model),
        "--out",
        tmp_path / "a",
        "--loss",
        tmp_path / "l.tsv",
    ]
    killed = subprocess.run(
        [
            sys.executable,
            "tests/kill_at.py",
            "after-training-checkpoint",
            "1",
            "--",
            *map(str, command[:]),
        ],
        capture_output=True,
        text=True,
    )
    assert killed.returncode == -9 and not (tmp_path / "a").exists()
    assert list(tmp_path.glob(".a.checkpoints/*/checkpoint-3"))
    run_cli(*command)
    resumed = load_file(tmp_path / "a/adapter_model.safetensors")
    uninterrupted = load_file(sft_adapter[0] / "adapter_model.safetensors")
    assert resumed.keys() == uninterrupted.keys()
    for name, weight in uninterrupted.items():
        assert (resumed[name] - weight).abs().max() < 1e-5, name
    losses = pd.read_csv(tmp_path / "l.tsv", sep="\t")
    assert list(losses["step"]) == [1, 2, 3, 4, 5, 6]
    assert losses["loss"].tolist() == pytest.approx([e["loss"] for e in sft_adapter[1]], rel=1e-4)
    assert not (tmp_path / ".a.checkpoints").exists()
