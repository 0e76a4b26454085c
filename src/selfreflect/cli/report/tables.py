"""``selfreflect report NAME`` for each table of the catalog (:mod:`selfreflect.report.catalog`):
its options from its entry (its FILES, the optional inputs it names, a figure folder where it
draws one, its DVC metrics), the runner (:func:`~selfreflect.report.runner.run_report`) its
body."""

from __future__ import annotations

from typing import Any

import click

from selfreflect.cli.options import CONFIG, FIGURE_DIR, FILES, OUT_DIR, reads
from selfreflect.report.catalog import REPORTS, Report
from selfreflect.report.runner import run_report

METRICS = click.option("--metrics", type=click.Path(), help="Headline DVC metrics.")
METRICS_DIR = click.option(
    "--metrics-dir",
    "metrics",
    type=click.Path(file_okay=False),
    help="DVC metrics, one file per strategy.",
)


def table_command(report: Report) -> click.Command:
    """The command that makes ``report``'s table."""

    def make(config_path: str, out_dir: str, files: tuple[str, ...], **options: Any) -> None:
        reason = run_report(report, config_path, files, out_dir, **options)
        if reason:
            click.echo(f"{report.table}: skipped ({reason})", err=True)
            return
        written = [f"table written to {out_dir}"]
        written += [f"figure to {options['figure_dir']}"] if options.get("figure_dir") else []
        written += [f"DVC metrics to {options['metrics']}"] if options.get("metrics") else []
        click.echo(f"{report.table}: {', '.join(written)}")

    inputs = [
        click.option(f"--{name}", type=click.Path(dir_okay=False), help=text)
        for name, text in report.optional_inputs.items()
    ]
    options = [CONFIG, *inputs, OUT_DIR, *([FIGURE_DIR] if report.figure else [])]
    if report.metrics:
        options.append(METRICS_DIR if report.metrics.per_strategy else METRICS)
    for option in reversed([*options, FILES]):
        make = option(make)
    command = click.command(report.name, help=report.help)(make)
    return reads(*report.config_keys)(command)


def __getattr__(name: str) -> click.Command:
    """The command of the catalog's report ``name`` (its command's name with _)."""
    for report in REPORTS:
        if report.name.replace("-", "_") == name:
            return table_command(report)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
