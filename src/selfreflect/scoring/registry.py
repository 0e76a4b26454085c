"""Judge backends by name: :data:`JUDGES`, the one table of them, checked without importing
one, and :func:`open_judge`, which loads one.

A backend (a :class:`~selfreflect.scoring.forwards.Judge` subclass) is named by
``"module:attribute"`` (:class:`~selfreflect.registry.Registry`) and imported when a judge
opens on it; no backend imports this module, so the table lies above what it names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from selfreflect.registry import Registry

if TYPE_CHECKING:
    from selfreflect.scoring.forwards import Judge

JUDGES = Registry(  # Judge subclasses, loaded with Judge.open(spec, scoring settings, llm)
    "judge backend",
    {
        "hf": "selfreflect.scoring.hf_judge:HfJudge",
        "vllm": "selfreflect.scoring.vllm_judge:VllmJudge",
        "reference": "selfreflect.scoring.reference_judge:ReferenceJudge",
    },
)


def open_judge(spec: dict[str, Any], settings: dict[str, Any], llm: Any = None) -> Judge:
    """The judge for a validated ``models`` entry (with ``name``) and ``scoring`` settings.

    ``settings["backend"]`` names the judge's backend in :data:`JUDGES`; ``settings["dtype"]``
    overrides the model's dtype unless ``auto``. ``llm`` wraps a running ``vllm.LLM``.
    """
    from selfreflect.model_sources import check_loadable

    judge = JUDGES.load(settings["backend"])
    check_loadable(spec["path"])
    if settings["dtype"] != "auto":
        spec = {**spec, "dtype": settings["dtype"]}
    return judge.open(spec, settings, llm)
