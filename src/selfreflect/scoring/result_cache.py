"""Content-addressed judge results: what one summary text scored on one question.

An entry's address hashes everything its result depends on: the judge (its model files and
settings), the code and prompts that score, the question with its answers, and the summary
text. A rerun therefore computes only the summaries whose address is new (adding or changing
one strategy judges that strategy's summaries alone), and an entry whose inputs changed is
never found. One gzipped JSON file per entry, written atomically; an unreadable entry counts as
missing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import zlib
from pathlib import Path
from typing import Any

from selfreflect.fileio import write_atomic

log = logging.getLogger(__name__)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


class ResultCache:
    """Entries under ``root`` for one judge setup (``salt``: JSON-serialisable, e.g. the model
    fingerprint, scoring settings, code and prompt hashes)."""

    def __init__(self, root: str | Path, salt: Any) -> None:
        self.root = Path(root)
        self.salt = _digest(salt)

    def _path(self, question: Any, text: str) -> Path:
        key = _digest([self.salt, question, text])
        return self.root / key[:2] / f"{key}.json.gz"

    def get(self, question: Any, text: str) -> dict[str, Any] | None:
        """The entry of summary ``text`` on ``question`` (its text and answers), or None."""
        path = self._path(question, text)
        if not path.is_file():
            return None
        try:
            return json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError, zlib.error, ValueError) as err:
            log.warning("unreadable judge cache entry %s, judging again: %s", path, err)
            return None

    def put(self, question: Any, text: str, entry: dict[str, Any]) -> None:
        path = self._path(question, text)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = gzip.compress(json.dumps(entry, separators=(",", ":")).encode(), mtime=0)
        write_atomic(path, lambda tmp: tmp.write_bytes(data))
