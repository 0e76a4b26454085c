"""The judge pass's result cache as the commands that run the pass (``selfreflect judge``,
``selfreflect score``) open it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from selfreflect.scoring.result_cache import ResultCache


def judge_cache(root: str | Path, spec: dict[str, Any], settings: dict[str, Any]) -> ResultCache:
    """The result cache under ``root`` of the judge pass of the command running now
    (``selfreflect judge`` or ``score``) with the judge model ``spec`` and the scoring
    ``settings``: its entries depend, besides their question and summary, on the judge model's
    files and entry, the settings, and the command's code and prompts."""
    from selfreflect.code_deps import code_digest, prompt_texts, running_command_deps
    from selfreflect.provenance import model_fingerprint
    from selfreflect.scoring.result_cache import ResultCache

    deps = running_command_deps()
    salt = {
        "model": model_fingerprint(spec["path"]),
        "spec": spec,
        "settings": settings,
        "code": code_digest(deps.files),
        "prompts": prompt_texts(deps.prompt_keys),
    }
    return ResultCache(root, salt)
