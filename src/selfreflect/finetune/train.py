"""Train a LoRA adapter on the subject with TRL: SFT on teacher summaries or DPO on scored pairs.

Prompts are the finetuned strategies' own (the ``basic`` prompt, rendered for the subject's
family as at inference), so the adapter learns exactly the pass it runs. Training is seeded and
checkpoints every ``checkpoint_every`` steps into a folder keyed by the data and the settings;
a killed run resumes from its last checkpoint and ends with the same adapter. The trainer logs
through DVCLive into the stage's own output folder only (no dvc.yaml, report or experiment of
DVCLive's: ``dvc.yaml`` is generated), the loss per step in its :data:`selfreflect.paths.LOSS`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.backends.adapter import RECORD, empty_model
from selfreflect.errors import ConfigError

OWNER = "selfreflect finetune-train"  # the command whose marker an adapter folder holds
DVC_STAGE_ENV = ("DVC_ROOT", "DVC_EXP_BASELINE_REV")  # what DVCLive reads to know it is in one


def check_target_modules(spec: dict[str, Any], modules: list[str]) -> None:
    """Fail, naming the key, when a LoRA target module is not a module of the model ``spec``
    (checked on its architecture, before any weights load)."""
    import torch

    model = empty_model(spec)
    names = {path.rsplit(".", 1)[-1]: module for path, module in model.named_modules()}
    missing = [m for m in modules if m not in names]
    if missing:
        linear = sorted(n for n, m in names.items() if isinstance(m, torch.nn.Linear))
        raise ConfigError(
            f"finetune.training.lora.target_modules: {missing} not in model '{spec['name']}'"
            f" (its linear modules: {linear})"
        )


def training_dataset(data: pd.DataFrame, method: str, render: Any):
    """A ``datasets.Dataset`` in TRL's prompt-completion (SFT) or preference (DPO) format."""
    from datasets import Dataset

    from selfreflect.strategies.finetuned import finetuned_chat

    prompts = [render(finetuned_chat(q)) for q in data["question"]]
    if method == "sft":
        return Dataset.from_dict({"prompt": prompts, "completion": list(data["target"])})
    return Dataset.from_dict(
        {"prompt": prompts, "chosen": list(data["chosen"]), "rejected": list(data["rejected"])}
    )


def checkpoint_dir(out: Path, data: pd.DataFrame, settings: dict[str, Any]) -> Path:
    """Checkpoints beside the adapter, keyed by data and settings: a run never resumes another's."""
    key = hashlib.sha256(pd.util.hash_pandas_object(data).values.tobytes())
    key.update(json.dumps(settings, sort_keys=True).encode())
    return out.parent / f".{out.name}.checkpoints" / key.hexdigest()[:16]


def training_log(log: Path) -> Any:
    """Transformers' DVCLive callback, writing only into the folder ``log``, each row at the
    trainer's step; a run resumed from a checkpoint first logs the history it restored."""
    from dvclive import Live
    from transformers.integrations import DVCLiveCallback

    class TrainerSteps(DVCLiveCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            super().on_train_begin(args, state, control, **kwargs)
            for entry in state.log_history:
                self.log_at_step(args, state, control, entry)

        def on_log(self, args, state, control, logs=None, **kwargs):
            self.log_at_step(args, state, control, {**logs, "step": state.global_step})

        def log_at_step(self, args, state, control, entry: dict[str, Any]) -> None:
            self.live.step = entry["step"]
            logs = {key: value for key, value in entry.items() if key != "step"}
            super().on_log(args, state, control, logs=logs)

    # Started as outside a DVC stage: inside `dvc exp run`, DVCLive's end would `git add` the
    # files of its folder no stage outputs (this log's temporary folder).
    stage_env = {name: os.environ.pop(name) for name in DVC_STAGE_ENV if name in os.environ}
    try:
        live = Live(dir=str(log), save_dvc_exp=False, dvcyaml=None, report=None)
    finally:
        os.environ.update(stage_env)
    return TrainerSteps(live=live)


def train_adapter(
    spec: dict[str, Any],
    method: str,
    data: pd.DataFrame,
    settings: dict[str, Any],
    out: Path,
    record: dict[str, Any],
    log: Path,
) -> None:
    """Train the adapter of model ``spec`` on ``data`` and save it, with ``record``, the
    ``method``, the ``training`` settings and the model's fingerprint (``base_model``) as
    ``training.json``, to the folder ``out``, and the
    trainer's log (DVCLive's) to the folder ``log`` (each atomically)."""
    import torch
    from peft import LoraConfig
    from transformers.trainer_utils import get_last_checkpoint
    from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

    from selfreflect.backends.hf_engine import load_hf_model
    from selfreflect.families import PromptFormat
    from selfreflect.fileio import atomic_dir, check_apart, check_replaceable, write_json
    from selfreflect.provenance import model_fingerprint

    check_apart(out, log)
    check_replaceable(out, OWNER)
    check_replaceable(log, OWNER)
    lora = settings["lora"]
    check_target_modules(spec, lora["target_modules"])
    base_model = model_fingerprint(spec["path"])
    tokenizer, model = load_hf_model(spec)
    prompt_format = PromptFormat.for_model(tokenizer, spec)
    dataset = training_dataset(data, method, prompt_format.render)
    checkpoints = checkpoint_dir(out, data, {"method": method, **settings})
    common = {
        "output_dir": str(checkpoints),
        "learning_rate": settings["learning_rate"],
        "num_train_epochs": settings["epochs"],
        "per_device_train_batch_size": settings["batch_size"],
        "max_length": settings["max_length"],
        "seed": settings["seed"],
        "data_seed": settings["seed"],
        "save_strategy": "steps",
        "save_steps": settings["checkpoint_every"],
        "logging_steps": 1,
        "report_to": "none",  # but our own DVCLive callback (training_log)
        "use_cpu": not torch.cuda.is_available(),
        "disable_tqdm": True,
    }
    peft_config = LoraConfig(
        r=lora["rank"],
        lora_alpha=lora["alpha"],
        lora_dropout=lora["dropout"],
        target_modules=lora["target_modules"],
        task_type="CAUSAL_LM",
    )
    if method == "sft":
        trainer_class, args = SFTTrainer, SFTConfig(**common)
    else:
        trainer_class, args = DPOTrainer, DPOConfig(beta=settings["beta"], **common)
    with atomic_dir(log, OWNER) as log_tmp:
        trainer = trainer_class(
            model=model,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft_config,
            callbacks=[training_log(log_tmp)],
        )
        last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
        trainer.train(resume_from_checkpoint=last)
        with atomic_dir(out, OWNER) as tmp:
            trainer.model.save_pretrained(tmp)
            trained = {"method": method, "training": settings, "base_model": base_model}
            write_json(tmp / RECORD, {**record, **trained})
    shutil.rmtree(checkpoints.parent)
