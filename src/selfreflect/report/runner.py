"""The one runner of the run's tables (:mod:`selfreflect.report.catalog`): read, build, write.

A table's files go into folders it may share with other files: before its inputs are read,
every file of its name (its table, figure and metrics) is claimed (:func:`claimed`): one a
person put there is never overwritten. A table with nothing to show says why in its files. The
captions are jinja2 templates (``data/captions``, linked beside the Snakemake report's in
``workflow/report``), each one paragraph: its line breaks are spaces.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import jinja2.ext
import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.config import load_config
from selfreflect.errors import InputError
from selfreflect.fileio import check_writable, shared_files, write_json
from selfreflect.paths import FIGURE_FORMATS, TABLE_FORMATS
from selfreflect.report import writers
from selfreflect.report.catalog import Report, Skip

CAPTIONS = resources.files("selfreflect") / "data" / "captions"  # <table>.j2
OWNER = "selfreflect report"  # what claims the tables' files


class Paragraph(jinja2.ext.Extension):
    """A caption is one paragraph: its template's line breaks and indents are one space."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return " ".join(source.split())


@cache
def _captions() -> jinja2.Environment:
    """The captions' jinja2 environment: text, not HTML; a name missing from the context is an
    error."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(CAPTIONS)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        extensions=[Paragraph],
    )


def caption(name: str, /, **context: Any) -> str:
    """The caption of table ``name``: its template ``<name>.j2`` filled with ``context``."""
    return _captions().get_template(f"{name}.j2").render(**context)


def figure_args(config: dict[str, Any]) -> dict[str, Any]:
    return {"width": config["report"]["figure_width"], "dpi": config["report"]["figure_dpi"]}


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


def write_metrics(
    path: str | Path, frame: pd.DataFrame, fields: Sequence[str], by: Sequence[str] = ()
) -> None:
    """Headline DVC metrics: the ``fields`` of each row of a report table, keyed by the parts of
    the experiment that vary in it (``{"dataset": {field: value}}`` for one subject and judge;
    ``{field: value}`` for one experiment), so `dvc metrics show` stays narrow; then by the
    columns ``by``, always (a table with several rows per experiment)."""
    if frame.empty:
        return write_json(path, {})
    varying = [key for key in EXPERIMENT if frame[key].nunique() > 1] + list(by)
    out: dict[str, Any] = {}
    for row in frame.to_dict("records"):
        values = {f: json_safe(row[f]) for f in fields}
        if varying:
            out.setdefault("/".join(str(row[k]) for k in varying), {}).update(values)
        else:
            out.update(values)
    write_json(path, out)


@contextmanager
def claimed(files: Iterable[Path], metrics: str | None = None) -> Iterator[None]:
    """While a table command writes ``files`` (and the metrics file ``metrics``): refuse, before
    the block, to overwrite one of them that this package did not write, or to start when one
    of them or ``metrics`` cannot be written (:func:`~selfreflect.fileio.shared_files`)."""
    files = list(files)
    if metrics:
        if Path(metrics).is_dir() or Path(metrics).absolute() in map(Path.absolute, files):
            raise InputError(f"{metrics}: --metrics names a folder or a table or figure")
        check_writable(metrics)
    with shared_files(files, OWNER):
        yield


def table_files(out_dir: str | Path, *tables: str) -> list[Path]:
    return [Path(out_dir) / f"{name}.{ext}" for name in tables for ext in TABLE_FORMATS]


def figure_files(figure_dir: str | Path, *figures: str) -> list[Path]:
    return [Path(figure_dir) / f"{name}.{ext}" for name in figures for ext in FIGURE_FORMATS]


def skipped(
    name: str, reason: str, out_dir: str | Path, figure: dict[str, Any] | None = None
) -> None:
    """Write table ``name`` (and, given its ``figure``'s ``stem``, ``width`` and ``dpi``, the
    figure) saying why it has nothing to show."""
    from selfreflect.plotting import skipped_figure

    writers.write_skipped(out_dir, name, reason)
    if figure:
        skipped_figure(reason=reason, **figure)


def run_report(
    report: Report,
    config_path: str,
    files: Sequence[str],
    out_dir: str,
    figure_dir: str | None = None,
    metrics: str | None = None,
    **optional_inputs: str | None,
) -> str | None:
    """Make ``report``'s table of the artifact ``files`` in ``out_dir``, its figure in
    ``figure_dir`` and its DVC metrics in ``metrics`` (a folder of a file per strategy or one
    file, :class:`~selfreflect.report.catalog.Metrics`; none: not written); the reason it has
    nothing to show, if it has not."""
    config = load_config(config_path)
    figure = _figure(report, config, figure_dir)
    metric_files = _metric_files(report, config, metrics)
    per_strategy = bool(report.metrics and report.metrics.per_strategy)
    outputs = table_files(out_dir, report.table)
    outputs += figure_files(figure["stem"].parent, report.table) if figure else []
    outputs += list(metric_files.values()) if per_strategy else []
    with claimed(outputs, None if per_strategy else metrics):
        try:
            arguments = report.arguments(config, **optional_inputs)
            rows = report.read(files)
            table = report.build(rows, **arguments)
            if table.empty:
                raise Skip(_captions().from_string(report.empty).render(**arguments))
        except Skip as nothing:
            skipped(report.table, str(nothing), out_dir, figure)
            for path in metric_files.values():
                write_json(path, {})
            return str(nothing)
        measured = {strategy: _measured(report, table, strategy) for strategy in metric_files}
        unmeasured = [
            strategy
            for strategy, (held, *_) in measured.items()
            if strategy is not None and "strategy" in held and held.empty
        ]
        if unmeasured:  # a metrics file per strategy of the config: DVC would read `{}`
            raise InputError(
                f"{metrics}: --metrics-dir: writes a file per strategy of summaries.strategies,"
                f" and the files given hold no rows of {', '.join(unmeasured)} (give their"
                " scores too, or leave --metrics-dir out)"
            )
        text = caption(report.table, config=config, table=table, **arguments)
        writers.write_table_files(table, _display(report, table), out_dir, report.table, text)
        if report.figure and figure:
            report.figure(*((rows, table) if report.figure_rows else (table,)), **figure)
        for strategy, path in metric_files.items():
            write_metrics(path, *measured[strategy])
    return None


def _figure(
    report: Report, config: dict[str, Any], figure_dir: str | None
) -> dict[str, Any] | None:
    """The ``stem``, ``width`` and ``dpi`` of the table's figure (none: it draws none)."""
    if not (report.figure and figure_dir):
        return None
    return {"stem": Path(figure_dir) / report.table, **figure_args(config)}


def _metric_files(
    report: Report, config: dict[str, Any], metrics: str | None
) -> dict[str | None, Path]:
    """``{strategy: file}`` of the table's DVC metrics (``{None: file}`` for one file)."""
    if not (report.metrics and metrics):
        return {}
    if report.metrics.per_strategy:
        strategies = config["summaries"]["strategies"]
        return {strategy: Path(metrics) / f"{strategy}.json" for strategy in strategies}
    return {None: Path(metrics)}


def _display(report: Report, table: pd.DataFrame) -> pd.DataFrame:
    """The table as its Markdown and LaTeX show it: estimates with their intervals."""
    intervals = {name: columns for name, columns in report.intervals.items() if columns[0] in table}
    display = writers.with_intervals(table, intervals)
    for column in report.scientific:
        display[column] = [writers.scientific(value) for value in table[column]]
    return display


def _measured(
    report: Report, table: pd.DataFrame, strategy: str | None
) -> tuple[pd.DataFrame, Sequence[str], Sequence[str]]:
    """The rows, fields and keys of the table's metrics (of one ``strategy``: its rows)."""
    assert report.metrics is not None
    metrics = report.metrics
    rows = metrics.rows(table) if metrics.rows else table
    if strategy is not None and "strategy" in rows:
        rows = rows[rows["strategy"] == strategy]
    return rows, metrics.fields, metrics.by
