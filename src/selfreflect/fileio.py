"""Atomic file writes: a reader never sees a half-written artifact."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selfreflect.errors import InputError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_writable(path: str | os.PathLike) -> None:
    """Fail with one line naming ``path`` unless it can be created (checked before any work;
    creates nothing)."""
    path = Path(path).absolute()
    folder = path.parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot write here ({folder} is not a folder)")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{path}: cannot write here ({folder} is not writable)")


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it into place only if the block succeeds.

    The file gets the mode a plain ``open`` would give it (0666 less the umask). A write that
    fails (full disk, read-only folder) raises one ``InputError`` naming ``path`` and leaves
    any earlier ``path`` as it was; temporary files of killed writers are removed on success.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise InputError(f"{path}: cannot write ({_reason(err)})") from None
    os.fchmod(fd, 0o666 & ~_umask())
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except OSError as err:
        raise InputError(f"{path}: cannot write ({_reason(err)})") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        stale.unlink(missing_ok=True)


def _apply_umask(folder: Path) -> None:
    """Give ``folder``, its subfolders and files the modes ``mkdir`` and ``open`` would give
    them (0777 or 0666, less the umask; executable files keep their execute bits)."""
    mask = _umask()
    for item in [folder, *folder.rglob("*")]:
        full = 0o777 if item.is_dir() or item.stat().st_mode & 0o111 else 0o666
        item.chmod(full & ~mask)


def _reason(err: OSError) -> str:
    return err.strerror or " ".join(str(err).split())


def write_atomic(path: str | os.PathLike, write: Callable[[Path], Any]) -> None:
    """Call ``write(tmp_path)`` and atomically rename the result to ``path``."""
    with atomic_path(path) as tmp:
        write(tmp)


def write_text(path: str | os.PathLike, text: str) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    """Read a JSON file; a missing or malformed file raises one clear ``InputError``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: malformed JSON at line {err.lineno}: {err.msg}") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not UTF-8 text ({err.reason})") from None


def file_digest(path: str | os.PathLike) -> str:
    """SHA-256 of a file's content."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


@contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; swap it into place if the block succeeds.

    Everything in it gets the mode the umask gives (libraries such as safetensors write 0600).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        yield tmp
        _apply_umask(tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
