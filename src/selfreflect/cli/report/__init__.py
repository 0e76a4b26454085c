"""``selfreflect report``: the paper's tables and figures, and the judge-scored studies.

The studies (``controlled-scores``, ``mc-scores``, ``convergence-scores``) read their scores off
the experiment's judgements (``selfreflect judge``), and ``alt-metrics`` and
``agreement-scores`` (the judge on every backend of ``report.agreement_backends``) load the
judge; the table commands (``main-table``, ``validation``, ``mc-study``, ``convergence``,
``cost-table``, ``human-agreement``, ``backend-agreement``, ``performance``) only read
artifacts and write ``<name>.csv/.md/.tex`` into ``--out-dir``, figures ``<name>.png/.pdf``
into ``--figure-dir`` and headline DVC metrics, from the artifact FILES they are given (each
row says its experiment: dataset, subject, judge, strategy); a file of those names in those
folders that this package did not write is never overwritten (the command stops with one line,
before writing anything). One module per command, so editing
a table command never reruns a judge job.
"""

from __future__ import annotations

import click

from selfreflect.cli import LazyGroup
from selfreflect.commands import subcommands


@click.group(cls=LazyGroup, lazy=subcommands("report"))
def report() -> None:
    """The paper's tables and figures, and the judge-scored studies behind them."""
