"""``selfreflect bench``: benchmarks and doc renderers (the package :mod:`selfreflect.bench`).

No workflow rule runs these: they measure the package and whole runs, and render the docs'
measured figures from what they recorded. Run them from the project's root.
"""

from __future__ import annotations

import click

from selfreflect.cli import LazyGroup

COMMANDS = {  # command name: the module under selfreflect.bench and its function
    "scorer": "scorer:scorer",
    "hf-generation": "hf_generation:hf_generation",
    "real-run": "real_run:real_run",
    "finetuning-doc": "finetuning_doc:finetuning_doc",
    "performance-doc": "performance_doc:performance_doc",
    "power-doc": "power_doc:power_doc",
    "science-doc": "science_doc:science_doc",
    "explorer": "explorer:explorer",
    "explorer-screenshots": "explorer_screenshots:explorer_screenshots",
    "calibrate-stopwords": "calibrate_stopwords:calibrate_stopwords",
    "human-ratings": "human_ratings:human_ratings",
}


@click.group(cls=LazyGroup, package="selfreflect.bench", lazy=COMMANDS)
def bench() -> None:
    """Benchmarks and doc renderers (run from the project's root)."""
