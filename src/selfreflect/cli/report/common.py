"""What the table commands of ``selfreflect report`` share: their options, the config's
statistics and figure settings, DVC metrics, and tables with nothing to show."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.report import writers

OUT_DIR = click.option("--out-dir", required=True, type=click.Path(), help="Tables folder.")
FIGURE_DIR = click.option("--figure-dir", required=True, type=click.Path(), help="Figures folder.")
METRICS = click.option("--metrics", "metrics_path", type=click.Path(), help="Headline DVC metrics.")
STATS_SETTINGS = ("report.bootstrap_resamples", "report.confidence")  # what stats_args reads
FIGURE_SETTINGS = ("report.figure_width", "report.figure_dpi")  # what figure_args reads
PLAN_SETTINGS = ("report.plan.level", "report.plan.correction")  # what plan_args reads


def claims(
    *tables: str, figures: tuple[str, ...] | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Decorate a table command that writes ``tables`` into ``--out-dir`` and, when it has
    them, the ``figures`` (default: one per table) into ``--figure-dir`` and a metrics file per
    strategy into ``--metrics-dir``: it refuses, before it runs, to overwrite a file of those
    names that this package did not write, or to start when one of them or ``--metrics``
    cannot be written (:func:`~selfreflect.fileio.shared_files`)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def run(*args: Any, **kwargs: Any) -> None:
            from selfreflect.errors import InputError
            from selfreflect.fileio import check_writable, shared_files
            from selfreflect.paths import FIGURE_FORMATS, TABLE_FORMATS

            out_dir, figure_dir = Path(kwargs["out_dir"]), kwargs.get("figure_dir")
            files = [out_dir / f"{name}.{ext}" for name in tables for ext in TABLE_FORMATS]
            if figure_dir:
                drawn = tables if figures is None else figures
                files += [Path(figure_dir) / f"{n}.{ext}" for n in drawn for ext in FIGURE_FORMATS]
            if kwargs.get("metrics_dir"):
                strategies = read_config(kwargs["config_path"])["summaries"]["strategies"]
                files += [Path(kwargs["metrics_dir"]) / f"{name}.json" for name in strategies]
            if metrics := kwargs.get("metrics_path"):
                if Path(metrics).is_dir() or Path(metrics).absolute() in map(Path.absolute, files):
                    raise InputError(f"{metrics}: --metrics names a folder or a table or figure")
                check_writable(metrics)
            with shared_files(files, "selfreflect report"):
                command(*args, **kwargs)

        return run

    return decorate


def read_config(path: str) -> dict[str, Any]:
    from selfreflect.config import load_config

    return load_config(path)


def stats_args(config: dict[str, Any]) -> dict[str, Any]:
    report = config["report"]
    return {
        "n_resamples": report["bootstrap_resamples"],
        "confidence": report["confidence"],
        "seed": config["seed"],
    }


def plan_args(config: dict[str, Any], minimum: str) -> dict[str, Any]:
    """The analysis plan of a table's verdicts (``report.plan``), its ``minimum`` the setting
    named so (``min_pairs``, ``min_questions``)."""
    plan = config["report"]["plan"]
    return {"level": plan["level"], "correction": plan["correction"], "minimum": plan[minimum]}


def plan_caption(config: dict[str, Any], family: str, minimum: str, unit: str) -> str:
    """What a caption says of the verdicts: the correction over ``family``, the level, and the
    ``minimum`` (the plan's setting) of ``unit`` a verdict needs."""
    plan = config["report"]["plan"]
    return (
        f"{plan['correction'].capitalize()}-adjusted over {family} (tests on fewer than "
        f"{plan[minimum]} {unit} left out); verdict: adjusted p below {plan['level']:g}"
    )


def figure_args(config: dict[str, Any]) -> dict[str, Any]:
    return {"width": config["report"]["figure_width"], "dpi": config["report"]["figure_dpi"]}


def json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value.item() if hasattr(value, "item") else value


def write_metrics(
    path: str | None, frame: pd.DataFrame, fields: list[str], by: tuple[str, ...] = ()
) -> None:
    """Headline DVC metrics: the ``fields`` of each row of a report table, keyed by the parts of
    the experiment that vary in it (``{"dataset": {field: value}}`` for one subject and judge;
    ``{field: value}`` for one experiment), so `dvc metrics show` stays narrow; then by the
    columns ``by``, always (a table with several rows per experiment)."""
    from selfreflect.fileio import write_json

    if not path:
        return
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


def skipped(
    name: str,
    reason: str,
    out_dir: str,
    figure_dir: str | None = None,
    config: dict[str, Any] | None = None,
    metrics_path: str | None = None,
) -> None:
    """Write table ``name`` (and its figure, empty metrics) saying why it has nothing to show."""
    from selfreflect.fileio import write_json
    from selfreflect.plotting import skipped_figure

    writers.write_skipped(out_dir, name, reason)
    if figure_dir and config:
        skipped_figure(Path(figure_dir) / name, reason, **figure_args(config))
    if metrics_path:
        write_json(metrics_path, {})
    click.echo(f"{name}: skipped ({reason})", err=True)
