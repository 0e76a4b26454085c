"""Train a LoRA adapter on the subject with TRL: SFT on teacher summaries, DPO on scored pairs
or GRPO on the reward of the policy's own summaries (:mod:`selfreflect.finetune.reward`).

Prompts are the finetuned strategies' own (the ``basic`` prompt, rendered for the subject's
family as at inference), so the adapter learns exactly the pass it runs. Training is seeded and
checkpoints every ``checkpoint_every`` steps into a folder keyed by the data and the settings;
a killed run resumes from its last complete checkpoint and ends with the same adapter. The
trainer logs through DVCLive into the stage's own output folder only (no dvc.yaml, report or
experiment of DVCLive's: ``dvc.yaml`` is generated), the loss per step in its
:data:`selfreflect.paths.LOSS`. The adapter's and the log's folder markers name what each folder
is and whose run (:func:`owner`): no training writes over another's folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.backends.adapter import RECORD, empty_model
from selfreflect.errors import ConfigError, InputError
from selfreflect.fileio import (
    OWNER_MARKER,
    check_apart,
    check_replaceable,
    folder_owner,
    read_json,
    write_text,
)

OWNER = "selfreflect finetune-train"  # the command; what an older version's markers name
DVC_STAGE_ENV = ("DVC_ROOT", "DVC_EXP_BASELINE_REV")  # what DVCLive reads to know it is in one
TRAINER_STATE = "trainer_state.json"  # the file transformers' Trainer writes last in a checkpoint


def owner(folder: str, subject: str, method: str, seed: int) -> str:
    """The owner a training run's ``folder`` ("adapter" or "log") names in its marker: the
    command, what the folder is and whose run it is, so that no run replaces another's
    adapter or log (another seed's, method's or subject's), nor its log an adapter."""
    return f"{OWNER} {folder} ({subject}, {method}, seed {seed})"


def check_outputs(out: Path, log: Path, subject: str, method: str, seed: int) -> dict[str, str]:
    """Refuse, with one line naming the folder, an adapter folder ``out`` or log folder ``log``
    that is not missing, empty or this run's own (:func:`owner`), before any work; an adapter
    an older version marked with the bare command name is this run's own when its record
    names this subject, method and seed (its marker is then brought up to date). The owners
    of the two folders, by :func:`owner`'s ``folder``."""
    check_apart(out, log)
    owners = {folder: owner(folder, subject, method, seed) for folder in ("adapter", "log")}
    older = _older_own_adapter(out, subject, method, seed)
    check_replaceable(out, OWNER if older else owners["adapter"])
    check_replaceable(log, owners["log"])
    if older:
        _mark(out, owners["adapter"])
    return owners


def _mark(folder: Path, owner: str) -> None:
    """Name ``owner`` in the first line of ``folder``'s marker, keeping the entries it lists."""
    lines = (folder / OWNER_MARKER).read_text(encoding="utf-8").splitlines()
    write_text(folder / OWNER_MARKER, "".join(f"{line}\n" for line in [owner, *lines[1:]]))


def _older_own_adapter(out: Path, subject: str, method: str, seed: int) -> bool:
    """Whether ``out`` is an adapter of this run marked by an older version (a log it marked
    records no run, and is never taken as this run's)."""
    if not out.is_dir() or folder_owner(out) != OWNER:
        return False
    try:
        trained = read_json(out / RECORD)
    except InputError:
        return False
    if not isinstance(trained, dict) or not isinstance(trained.get("training"), dict):
        return False
    trained_run = (list(trained.get("models") or {}), trained.get("method"))
    return trained_run == ([subject], method) and trained["training"].get("seed") == seed


def last_complete_checkpoint(folder: Path) -> str | None:
    """The Trainer's last checkpoint in ``folder`` that was written whole, after removing those
    that were not (a job killed while saving one): complete is one whose trainer state, which
    the Trainer writes last, reads back with the checkpoint's step. (The Trainer itself would
    resume from the last one, whole or not, and fail on every rerun.)"""
    complete = []
    for path in sorted(folder.glob("checkpoint-*")) if folder.is_dir() else []:
        step = path.name.removeprefix("checkpoint-")
        if not step.isdigit():
            continue
        if _saved_step(path) == int(step):
            complete.append((int(step), path))
        else:
            shutil.rmtree(path)
    return str(max(complete)[1]) if complete else None


def _saved_step(checkpoint: Path) -> int | None:
    """The step a checkpoint's trainer state records (None: missing or cut short)."""
    try:
        state = json.loads((checkpoint / TRAINER_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # a JSONDecodeError or UnicodeDecodeError is a ValueError
        return None
    return state.get("global_step") if isinstance(state, dict) else None


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
    """A ``datasets.Dataset`` in TRL's prompt-completion (SFT), preference (DPO) or prompt-only
    format (GRPO, with each question's ``id``, by which the reward finds its answers)."""
    from datasets import Dataset

    from selfreflect.strategies.finetuned import finetuned_chat

    prompts = [render(finetuned_chat(q)) for q in data["question"]]
    if method == "grpo":
        return Dataset.from_dict({"prompt": prompts, "id": list(data["id"])})
    if method == "sft":
        return Dataset.from_dict({"prompt": prompts, "completion": list(data["target"])})
    return Dataset.from_dict(
        {"prompt": prompts, "chosen": list(data["chosen"]), "rejected": list(data["rejected"])}
    )


def checkpoint_dir(out: Path, data: pd.DataFrame, settings: dict[str, Any]) -> Path:
    """Checkpoints beside the adapter, keyed by data and settings (the base model's fingerprint
    among them): a run never resumes another's."""
    key = hashlib.sha256(data.to_json(orient="split").encode())  # list columns too (GRPO's)
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


def trainer_setup(method: str, settings: dict[str, Any], common: dict[str, Any]):
    """The TRL trainer class of ``method`` and its arguments: SFT and DPO over ``epochs`` of
    examples cut at ``max_length``; GRPO for ``grpo.steps`` steps of ``batch_size`` questions,
    each with ``grpo.group_size`` summaries sampled at temperature 1 (the subject's), at most
    ``grpo.max_summary_tokens`` long, and the KL coefficient ``grpo.beta``."""
    from trl import DPOConfig, DPOTrainer, GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

    if method == "grpo":
        grpo = settings["grpo"]
        args = GRPOConfig(
            **common,
            max_steps=grpo["steps"],
            per_device_train_batch_size=settings["batch_size"] * grpo["group_size"],
            num_generations=grpo["group_size"],
            max_completion_length=grpo["max_summary_tokens"],
            temperature=1.0,
            beta=grpo["beta"],
        )
        return GRPOTrainer, args
    common = {
        **common,
        "num_train_epochs": settings["epochs"],
        "per_device_train_batch_size": settings["batch_size"],
        "max_length": settings["max_length"],
    }
    if method == "sft":
        return SFTTrainer, SFTConfig(**common)
    return DPOTrainer, DPOConfig(beta=settings["beta"], **common)


def train_adapter(
    spec: dict[str, Any],
    method: str,
    data: pd.DataFrame,
    settings: dict[str, Any],
    out: Path,
    record: dict[str, Any],
    log: Path,
    reward: Any = None,
) -> None:
    """Train the adapter of model ``spec`` on ``data`` and save it, with ``record``, the
    ``method``, the ``training`` settings and the model's fingerprint (``base_model``) as
    ``training.json``, to the folder ``out``, and the
    trainer's log (DVCLive's) to the folder ``log`` (each atomically). GRPO's ``reward`` is
    :class:`selfreflect.finetune.reward.SelfReflectReward`."""
    import torch
    from peft import LoraConfig

    from selfreflect.backends.hf_engine import load_hf_model
    from selfreflect.families import PromptFormat
    from selfreflect.fileio import atomic_dir, write_json
    from selfreflect.provenance import model_fingerprint

    owners = check_outputs(out, log, spec["name"], method, settings["seed"])
    lora = settings["lora"]
    check_target_modules(spec, lora["target_modules"])
    base_model = model_fingerprint(spec["path"])
    tokenizer, model = load_hf_model(spec)
    prompt_format = PromptFormat.for_model(tokenizer, spec)
    dataset = training_dataset(data, method, prompt_format.render)
    checkpoints = checkpoint_dir(
        out, data, {"method": method, "base_model": base_model, **settings}
    )
    common = {
        "output_dir": str(checkpoints),
        "learning_rate": settings["learning_rate"],
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
    trainer_class, args = trainer_setup(method, settings, common)
    rewards = {"reward_funcs": [reward]} if method == "grpo" else {}
    with atomic_dir(log, owners["log"]) as log_tmp:
        trainer = trainer_class(
            model=model,
            args=args,
            train_dataset=dataset,
            processing_class=tokenizer,
            peft_config=peft_config,
            callbacks=[training_log(log_tmp)],
            **rewards,
        )
        with contextlib.redirect_stdout(sys.stderr):  # its per-step losses: the job's log
            trainer.train(resume_from_checkpoint=last_complete_checkpoint(checkpoints))
        with atomic_dir(out, owners["adapter"]) as tmp:
            trainer.model.save_pretrained(tmp)
            trained = {"method": method, "training": settings, "base_model": base_model}
            write_json(tmp / RECORD, {**record, **trained})
    shutil.rmtree(checkpoints.parent)
