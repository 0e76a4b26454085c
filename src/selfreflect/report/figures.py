"""The report's figures: one function per figure, tables in, PNG + PDF out
(:mod:`selfreflect.plotting`; the multiple-choice study's: :mod:`selfreflect.mc_study.figure`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from selfreflect.plotting import (
    SCORE_LABEL,
    experiments,
    no_data,
    paper_style,
    save,
    stacked_panels,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.lines import Line2D


def _missing(ax: Axes, y: float) -> None:
    """Mark a missing value at height ``y`` on the left edge (not drawn as 0)."""
    transform = ax.get_yaxis_transform()  # x in axes fraction, y in data
    ax.text(0.01, y, "n/a", transform=transform, va="center", fontsize=5, color="0.4")


def _error_bars(center, low, high) -> np.ndarray:
    """Distances from ``center`` to its interval bounds, shape (2, n); never negative (a
    Wilson bound can sit a rounding error inside a fraction of 1), NaN where missing."""
    center = np.asarray(center, dtype=float)
    bars = np.array([center - np.asarray(low, float), np.asarray(high, float) - center])
    return np.where(np.isnan(bars), bars, np.maximum(bars, 0.0))


def main_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Mean score per strategy with its CI, one panel per experiment on a shared score axis
    (markers of several experiments on one axis crowd into each other's rows); a strategy
    without a scored question reads n/a."""
    with paper_style():
        strategies = list(dict.fromkeys(table["strategy"]))
        panels = experiments(table)
        height = 0.6 + 0.28 * max(len(strategies), 1)
        fig, axes = stacked_panels(len(panels), width, height, sharex=True)
        for ax, (title, rows) in zip(axes, panels, strict=True):
            y = np.array([strategies.index(s) for s in rows["strategy"]], dtype=float)
            err = _error_bars(rows["mean"], rows["ci_low"], rows["ci_high"])
            ax.errorbar(rows["mean"], y, xerr=err, fmt="o", ms=3, capsize=2)
            for y_missing in y[rows["mean"].isna().to_numpy()]:
                _missing(ax, y_missing)
            ax.set_yticks(range(len(strategies)), strategies)
            ax.set_ylim(len(strategies) - 0.5, -0.5)
            ax.set_title(title)
            if rows.empty:
                no_data(ax)
        axes[-1].set_xlabel(SCORE_LABEL)
        fig.tight_layout()
        return save(fig, stem, dpi)


def validation_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Fraction of pairs ranked correctly per pair type and metric with Wilson intervals, one
    panel per experiment; a metric without pairs reads n/a."""
    with paper_style():
        pair_types = list(dict.fromkeys(table["pair_type"]))
        metrics = list(dict.fromkeys(table["metric"]))
        panels = experiments(table)
        height = 0.8 / max(len(metrics), 1)
        fig, axes = stacked_panels(
            len(panels), width, 1.0 + 0.45 * max(len(pair_types), 1), sharex=True
        )
        for ax, (title, rows) in zip(axes, panels, strict=True):
            cells = rows.set_index(["pair_type", "metric"])
            for j, metric in enumerate(metrics):
                index = pd.MultiIndex.from_product([pair_types, [metric]])
                cell = cells.reindex(index)
                y = np.arange(len(pair_types)) - 0.4 + height * (j + 0.5)
                fraction = cell["fraction"].to_numpy(dtype=float)
                err = _error_bars(fraction, cell["ci_low"], cell["ci_high"])
                ax.barh(
                    y,
                    fraction,
                    height,
                    xerr=err,
                    capsize=1.5,
                    error_kw={"elinewidth": 0.6, "ecolor": "0.25"},
                    label=metric.replace("_", " "),
                    color=f"C{j}",
                )
                for y_missing in y[np.isnan(fraction)]:
                    _missing(ax, y_missing)
            ax.axvline(0.5, color="0.5", lw=0.8, ls="--")
            ax.set_yticks(range(len(pair_types)), [p.replace("_", " ") for p in pair_types])
            ax.invert_yaxis()
            ax.set_xlim(0, 1)
            ax.set_title(title)
            if rows.empty:
                no_data(ax)
        axes[-1].set_xlabel("Pairs ranked correctly (fraction)")
        fig.tight_layout()
        if len(table):
            handles, labels = axes[0].get_legend_handles_labels()
            above = {"loc": "lower center", "bbox_to_anchor": (0.5, 1.0), "ncol": 2}
            fig.legend(handles, labels, frameon=False, **above)
        return save(fig, stem, dpi)


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
DASHES = ("-", "--", "-.", ":")


def convergence_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Score vs number of conditioning answers and of test answers, with CIs: two panels per
    experiment, one colour per strategy throughout."""
    axes_names = {
        "conditioning": "Number of conditioning answers",
        "test": "Number of masked-out answers",
    }
    with paper_style():
        panels = experiments(table)
        # lines that coincide stay visible: each strategy its own marker and dash, and the
        # first (the baseline, greedy) drawn on top
        strategies = list(dict.fromkeys(table["strategy"]))
        styles = {
            s: {
                "c": f"C{k % 10}",
                "marker": MARKERS[k % len(MARKERS)],
                "ls": DASHES[k % len(DASHES)],
                "zorder": 3 + len(strategies) - k,
            }
            for k, s in enumerate(strategies)
        }
        fig, axes = stacked_panels(2 * len(panels), width, width * 0.72, sharey=True)
        shown: dict[str, Line2D] = {}
        for k, (title, experiment) in enumerate(panels):
            for ax, (axis, xlabel) in zip(axes[2 * k :], axes_names.items(), strict=False):
                rows = experiment[experiment["axis"] == axis]
                for strategy, group in rows.groupby("strategy", sort=False):
                    group = group.sort_values("size")
                    style = styles[strategy]
                    (line,) = ax.plot(group["size"], group["mean"], ms=3, **style)
                    band = (group["ci_low"], group["ci_high"])
                    ax.fill_between(group["size"], *band, color=style["c"], alpha=0.15, lw=0)
                    shown.setdefault(strategy, line)
                if rows.empty:
                    no_data(ax)
                else:
                    sizes = sorted(rows["size"].unique())
                    ax.set_xscale("log", base=2)
                    ax.set_xticks(sizes, [str(s) for s in sizes])
                ax.set_title(title)
                ax.set_xlabel(xlabel)
                ax.set_ylabel("SelfReflect score")
        if shown:
            fig.legend(
                list(shown.values()),
                list(shown),
                loc="lower center",
                ncol=2,
                frameon=False,
                bbox_to_anchor=(0.5, -0.02 - 0.035 * ((len(shown) + 1) // 2) / len(panels)),
            )
        fig.tight_layout()
        return save(fig, stem, dpi)


def performance_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Wall seconds (summed over jobs) and peak memory of each rule, slowest at the top."""
    rules = table[table["rule"] != "total"].iloc[::-1]
    with paper_style() as plt:
        height = 0.5 + 0.16 * max(len(rules), 1)
        fig, (time_ax, memory_ax) = plt.subplots(
            1, 2, figsize=(width * 2, height), sharey=True, squeeze=True
        )
        y = np.arange(len(rules))
        time_ax.barh(y, rules["wall_s"], color="C0")
        time_ax.set_yticks(y, rules["rule"])
        time_ax.set_xlabel("wall time, summed over jobs (s)")
        memory_ax.barh(y, rules["peak_rss_mib"].fillna(0), color="C1")
        memory_ax.set_xlabel("peak memory of a job (MiB)")
        return save(fig, stem, dpi)
