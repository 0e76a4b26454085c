"""``selfreflect docs``: the docs renderer (the package :mod:`selfreflect.docs`).

No workflow rule runs these: each renders a page of ``docs/`` from the JSON a benchmark
(``selfreflect bench …``) recorded. Run them from the project's root.
"""

from __future__ import annotations

import click

from selfreflect.cli import LazyGroup
from selfreflect.commands import subcommands


@click.group(cls=LazyGroup, lazy=subcommands("docs"))
def docs() -> None:
    """Render the docs from what the benchmarks recorded (run from the project's root)."""
