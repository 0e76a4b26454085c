"""A LoRA adapter checked against the model it is applied to, before any weights load.

An adapter belongs to the weights it was trained on (``training.json``'s ``base_model``, the
model's fingerprint at training) and holds LoRA weights for named modules of that model's
architecture, which its ``adapter_config.json`` must name as ``target_modules``: PEFT and vLLM
otherwise load it with at most a warning and run the base model under the adapter's name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from selfreflect.errors import InputError
from selfreflect.fileio import read_json
from selfreflect.provenance import model_fingerprint

WEIGHTS = "adapter_model.safetensors"
RECORD = "training.json"
_PREFIX = "base_model.model."  # PEFT's prefix of the base model's module names in WEIGHTS


def empty_model(spec: dict[str, Any]):
    """The causal LM of model ``spec`` built on the meta device: its modules, no weights."""
    from accelerate import init_empty_weights
    from transformers import AutoConfig, AutoModelForCausalLM

    with init_empty_weights():
        return AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(spec["path"]))


def check_adapter(adapter: str | os.PathLike, spec: dict[str, Any]) -> None:
    """Refuse, with one line naming the adapter folder and the field, an adapter not made for
    model ``spec``: trained on other weights, not a plain LoRA adapter (as training makes: no
    DoRA, no modules saved whole), with weights for modules the model lacks or a module
    without both of its LoRA matrices of its rank, or whose ``target_modules`` are not the
    modules its weights are for."""
    folder = Path(adapter)
    check_base(folder, spec)
    settings = read_json(folder / "adapter_config.json")
    settings = settings if isinstance(settings, dict) else {}
    where = f"{folder}: adapter_config.json"
    defaults = {"use_dora": False, "modules_to_save": None}  # keys PEFT's older configs lack
    for key, value in {"peft_type": "LORA", **defaults}.items():  # what training makes
        if settings.get(key, defaults.get(key)) != value:
            raise InputError(f"{where}: {key}: {settings.get(key)!r}, not {value!r}")
    modules = weight_modules(folder / WEIGHTS, settings.get("r"))
    known = {name for name, _ in empty_model(spec).named_modules()}
    lacking = [m for m in modules if m not in known]
    if lacking:
        raise InputError(
            f"{folder}: {WEIGHTS}: weights for {len(lacking)} module(s) model '{spec['name']}'"
            f" lacks (e.g. '{lacking[0]}')"
        )
    check_targets(folder, settings.get("target_modules"), modules, known)


def check_base(folder: Path, spec: dict[str, Any]) -> None:
    """Fail unless the adapter in ``folder`` was trained on the weights of model ``spec``."""
    recorded = _field(folder / RECORD, "base_model")
    if not isinstance(recorded, dict):
        raise InputError(f"{folder}: {RECORD}: base_model: missing (not a finetune-train adapter)")
    actual = model_fingerprint(spec["path"])
    for key in ("sha256", "revision"):
        if recorded.get(key) != actual.get(key):
            raise InputError(
                f"{folder}: {RECORD}: model {key}: trained on {recorded.get(key)}, not on model"
                f" '{spec['name']}' ({actual.get(key)})"
            )


def check_trained_as(folder: Path, method: str, seed: int) -> None:
    """Fail unless the adapter in ``folder`` was trained with ``method`` and ``seed`` (what the
    finetuned strategy that runs it names)."""
    record = read_json(folder / RECORD)
    record = record if isinstance(record, dict) else {}
    training = record.get("training")
    made = record.get("method"), training.get("seed") if isinstance(training, dict) else None
    if made != (method, seed):
        raise InputError(
            f"{folder}: {RECORD}: method and training.seed: trained as {made[0]} with seed"
            f" {made[1]}, not {method} with seed {seed}"
        )


def weight_modules(path: Path, rank: Any) -> list[str]:
    """The base model's module names the LoRA weights in the safetensors file ``path`` are
    for, each with its A and B matrices of rank ``rank`` (read from its header, no weights
    loaded)."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(path, "pt") as weights:
            keys = weights.keys()  # the handle itself is no mapping
            shapes = {key: weights.get_slice(key).get_shape() for key in keys}
    except (OSError, SafetensorError) as err:
        raise InputError(f"{path}: not a readable safetensors file ({err})") from None
    matrices: dict[str, set[str]] = {}
    for key, shape in shapes.items():
        if ".lora_" in key:
            module, _, rest = key.removeprefix(_PREFIX).partition(".lora_")
            matrix = rest.split(".")[0]
            matrices.setdefault(module, set()).add(matrix)
            if len(shape) != 2 or shape[0 if matrix == "A" else 1] != rank:
                raise InputError(
                    f"{path}: {key}: shape {list(shape)} is not of rank r = {rank} (its"
                    " adapter_config.json)"
                )
    if not matrices:
        raise InputError(f"{path}: no LoRA weights")
    for module, found in sorted(matrices.items()):
        if not {"A", "B"} <= found:
            missing = "lora_B" if "A" in found else "lora_A"
            raise InputError(f"{path}: module '{module}' has no {missing} weights")
    return sorted(matrices)


def check_targets(folder: Path, targets: Any, modules: list[str], known: set[str]) -> None:
    """Fail unless ``targets`` (PEFT's ``target_modules``: names matching a module's last
    parts, or one regular expression) cover every module in ``modules`` (those with weights)
    and name no other of the model's ``known`` modules."""
    where = f"{folder}: adapter_config.json: target_modules"
    if isinstance(targets, str):
        try:
            pattern = re.compile(targets)
        except re.error as err:
            raise InputError(f"{where}: {targets!r} is no regular expression ({err})") from None
        unnamed = [m for m in modules if not pattern.fullmatch(m)]
        idle = sorted(m for m in known - set(modules) if m and pattern.fullmatch(m))
    elif isinstance(targets, list) and targets:
        unnamed = [m for m in modules if not any(_names(t, m) for t in targets)]
        idle = [t for t in targets if not any(_names(t, m) for m in modules)]
    else:
        raise InputError(f"{where}: missing")
    if unnamed:
        raise InputError(f"{where}: {targets} do not name '{unnamed[0]}', which it has weights for")
    if idle:
        raise InputError(f"{where}: {_shown(idle)} have no weights")


def _shown(names: list[str]) -> str:
    return str(names) if len(names) <= 3 else f"{names[:3]} and {len(names) - 3} more"


def _names(target: str, module: str) -> bool:
    """Whether PEFT applies the target module name ``target`` to the module path ``module``."""
    return module == target or module.endswith(f".{target}")


def _field(path: Path, key: str) -> Any:
    """``key`` of the JSON object in the file ``path`` (None where it has none)."""
    data = read_json(path)
    return data.get(key) if isinstance(data, dict) else None
