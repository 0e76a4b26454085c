"""Generation backends by name: :data:`BACKENDS`, the one table of them, checked without
importing one, and :func:`open_generator`, which loads one.

A backend is named by ``"module:attribute"`` (:class:`~selfreflect.registry.Registry`) and
imported when a model opens on it; no backend imports this module (nor does the package's
``__init__``), so the table lies above what it names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from selfreflect.errors import InputError
from selfreflect.registry import Registry

if TYPE_CHECKING:
    from selfreflect.backends import Generator

BACKENDS = Registry(  # Generator subclasses, constructed from a model's spec
    "generation backend",
    {
        "vllm": "selfreflect.backends.vllm_engine:VllmGenerator",
        "hf": "selfreflect.backends.hf_engine:HfGenerator",
        "openai": "selfreflect.backends.openai_engine:OpenaiGenerator",
    },
)


def open_generator(spec: dict[str, Any]) -> Generator:
    """Load the model of a validated ``models`` entry (with ``name``) on its backend."""
    from selfreflect.model_sources import check_loadable

    try:
        backend = BACKENDS.load(spec["backend"])
    except InputError as err:
        raise InputError(f"model '{spec['name']}': {err}") from None
    if backend.local:
        check_loadable(spec["path"])
    return backend(spec)
