"""``selfreflect bench``: benchmarks (the package :mod:`selfreflect.bench`).

No workflow rule runs these: they measure the package and whole runs and record what they
measured as JSON, from which ``selfreflect docs`` renders the pages. Run them from the
project's root.
"""

from __future__ import annotations

import click

from selfreflect.cli import LazyGroup
from selfreflect.commands import subcommands


@click.group(cls=LazyGroup, lazy=subcommands("bench"))
def bench() -> None:
    """Benchmarks: measure, and record JSON (run from the project's root)."""
