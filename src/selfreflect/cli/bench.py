"""``selfreflect bench``: benchmarks and doc renderers (the package :mod:`selfreflect.bench`).

No workflow rule runs these: they measure the package and whole runs, and render the docs'
measured figures from what they recorded. Run them from the project's root.
"""

from __future__ import annotations

import click

from selfreflect.cli import LazyGroup
from selfreflect.commands import subcommands


@click.group(cls=LazyGroup, lazy=subcommands("bench"))
def bench() -> None:
    """Benchmarks and doc renderers (run from the project's root)."""
