"""The judge pass's cache: what one summary text scored on one question, by content address.

An entry's address hashes everything its result depends on: the judge (its model files and
settings), the code and prompts that score (:func:`open_cache`), the question with its answers,
and the summary text. A rerun therefore computes only the summaries whose address is new
(adding or changing one strategy judges that strategy's summaries alone), and an entry whose
inputs changed is never found. One gzipped JSON file per entry, written atomically, holding its
payload with its own address (``key``) and the payload's ``checksum``. An entry that is
unreadable, stored under another address, altered, or rejected by the caller's ``parse`` is
logged and counts as missing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from selfreflect.errors import InputError
from selfreflect.fileio import write_atomic

log = logging.getLogger(__name__)

T = TypeVar("T")


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def checksum(payload: Any) -> str:
    """The sha256 of ``payload``'s canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResultCache:
    """Entries under ``root`` for one judge setup (``salt``: JSON-serialisable, e.g. the model
    fingerprint, scoring settings, code and prompt hashes)."""

    def __init__(self, root: str | Path, salt: Any) -> None:
        self.root = Path(root)
        self.salt = _digest(salt)
        self.unstored = 0  # entries that could not be stored (the first is logged)

    def unstored_note(self) -> str:
        """What a command's last line adds where entries could not be stored ("" if none)."""
        if not self.unstored:
            return ""
        return f"; {self.unstored} not stored in the judge cache {self.root} (the log says why)"

    def key(self, question: Any, text: str) -> str:
        """The address of summary ``text`` on ``question``."""
        return _digest([self.salt, question, text])

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json.gz"

    def get(self, question: Any, text: str, parse: Callable[[Any], T]) -> T | None:
        """The entry of summary ``text`` on ``question`` (its text and answers) as ``parse``
        reads its payload (raising ValueError or TypeError on one it rejects), or None."""
        key = self.key(question, text)
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            return parse(_payload(json.loads(gzip.decompress(path.read_bytes())), key))
        except (OSError, EOFError, zlib.error, ValueError, TypeError, RecursionError) as err:
            log.warning("judge cache entry %s not used, judging again: %s", path, err)
            return None

    def put(self, question: Any, text: str, payload: dict[str, Any]) -> None:
        """Store an entry; one that cannot be stored (its path a folder, a read-only cache)
        is counted (:attr:`unstored`; the first is warned about) and left out: the judgement
        itself is not lost."""
        key = self.key(question, text)
        path = self.path(key)
        entry = {"key": key, "checksum": checksum(payload), "payload": payload}
        data = gzip.compress(json.dumps(entry, separators=(",", ":")).encode(), mtime=0)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, lambda tmp: tmp.write_bytes(data))
        except (OSError, InputError) as err:
            self.unstored += 1
            if self.unstored == 1:
                log.warning("judge cache entry %s not stored (others are counted): %s", path, err)


def open_cache(root: str | Path, spec: dict[str, Any], settings: dict[str, Any]) -> ResultCache:
    """The cache under ``root`` of the judge pass of the command running now (``selfreflect
    judge`` or ``score``) with the judge model ``spec`` and the scoring ``settings``: its entries
    depend, besides their question and summary, on the judge model's files and entry, the
    settings, and the command's code and prompts (:func:`~selfreflect.code_deps.job_identity`)."""
    from selfreflect.code_deps import job_identity

    return ResultCache(root, job_identity(settings, spec))


def _payload(entry: Any, key: str) -> Any:
    """The payload of a stored ``entry``, checked to be stored under ``key`` and intact."""
    if not isinstance(entry, dict) or set(entry) != {"key", "checksum", "payload"}:
        raise ValueError("not a {key, checksum, payload} entry (an older format?)")
    if entry["key"] != key:
        raise ValueError(f"it holds the entry of another address ({entry['key']})")
    if entry["checksum"] != checksum(entry["payload"]):
        raise ValueError("its payload does not match its checksum")
    return entry["payload"]
