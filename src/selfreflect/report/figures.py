"""The report's figures: one function per figure, tables in, PNG + PDF out (matplotlib, Agg).

Figures are sized for a paper column (``width`` inches, 3.3 by default) with 8 pt text.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from selfreflect.fileio import atomic_path
from selfreflect.report.tables import EXPERIMENT

STYLE = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "legend.fontsize": 7,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
SCORE_LABEL = "SelfReflect score (lower is better)"


def save(fig: plt.Figure, stem: str | Path, dpi: int) -> list[Path]:
    """Write ``stem.png`` and ``stem.pdf`` atomically and close the figure."""
    paths = []
    for ext in ("png", "pdf"):
        path = Path(f"{stem}.{ext}")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=dpi, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


def _experiment_labels(frame: pd.DataFrame) -> pd.Series:
    """``dataset / subject / judge`` per row (only the parts that vary)."""
    varying = [c for c in EXPERIMENT if frame[c].nunique() > 1] or ["dataset"]
    return frame[varying].astype(str).agg(" / ".join, axis=1)


def _no_data(ax: plt.Axes, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


def main_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Mean score per strategy with its CI, one marker colour per experiment."""
    with plt.rc_context(STYLE):
        strategies = list(dict.fromkeys(table["strategy"]))
        fig, ax = plt.subplots(figsize=(width, 0.9 + 0.28 * len(strategies)))
        labels = _experiment_labels(table) if len(table) else pd.Series(dtype=str)
        groups = list(dict.fromkeys(labels))
        for k, label in enumerate(groups):
            rows = table[labels == label].dropna(subset=["mean"])
            y = np.array([strategies.index(s) for s in rows["strategy"]], dtype=float)
            y += (k - (len(groups) - 1) / 2) * 0.2
            err = [rows["mean"] - rows["ci_low"], rows["ci_high"] - rows["mean"]]
            ax.errorbar(rows["mean"], y, xerr=err, fmt="o", ms=3, capsize=2, label=label)
        ax.set_yticks(range(len(strategies)), strategies)
        ax.invert_yaxis()
        ax.set_xlabel(SCORE_LABEL)
        if not len(table):
            _no_data(ax)
        if len(groups) > 1:
            ax.legend(loc="best", frameon=False)
        return save(fig, stem, dpi)


def validation_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Fraction of pairs ranked correctly per pair type and metric, Wilson 95 % intervals."""
    with plt.rc_context(STYLE):
        pair_types = list(dict.fromkeys(table["pair_type"]))
        metrics = list(dict.fromkeys(table["metric"]))
        fig, ax = plt.subplots(figsize=(width, 1.0 + 0.45 * max(len(pair_types), 1)))
        height = 0.8 / max(len(metrics), 1)
        cells = table.groupby(["pair_type", "metric"], sort=False).first()  # first experiment
        for j, metric in enumerate(metrics):
            rows = cells.xs(metric, level="metric").reindex(pair_types)
            y = np.arange(len(pair_types)) - 0.4 + height * (j + 0.5)
            err = np.nan_to_num(
                [rows["fraction"] - rows["ci_low"], rows["ci_high"] - rows["fraction"]]
            )
            ax.barh(
                y,
                rows["fraction"].fillna(0),
                height,
                xerr=err,
                capsize=1.5,
                error_kw={"elinewidth": 0.6, "ecolor": "0.25"},
                label=metric.replace("_", " "),
            )
        ax.axvline(0.5, color="0.5", lw=0.8, ls="--")
        ax.set_yticks(range(len(pair_types)), [p.replace("_", " ") for p in pair_types])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel("Pairs ranked correctly (fraction)")
        if len(table):
            ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
        else:
            _no_data(ax)
        return save(fig, stem, dpi)


def mc_figure(
    mc: pd.DataFrame, table: pd.DataFrame, stem: str | Path, width: float, dpi: int
) -> list[Path]:
    """SelfReflect score against the true W1 of each stated-distribution summary."""
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(width, width * 0.8))
        ok = mc.dropna(subset=["score", "w1"])
        if len(ok):
            points = ax.scatter(
                ok["w1"], ok["score"], c=np.log2(ok["temperature"]), s=8, cmap="coolwarm", alpha=0.8
            )
            bar = fig.colorbar(points, ax=ax)
            bar.set_label("log$_2$ temperature (<0 sharper, >0 flatter)")
        else:
            _no_data(ax)
        rho = table["spearman_rho"].iloc[0] if len(table) else np.nan
        ax.set_title(
            f"Spearman ρ = {rho:.2f} (n = {len(ok)})"
            if np.isfinite(rho)
            else "Spearman ρ undefined"
        )
        ax.set_xlabel("True 1-Wasserstein distance to test answers")
        ax.set_ylabel(SCORE_LABEL)
        return save(fig, stem, dpi)


def convergence_figure(table: pd.DataFrame, stem: str | Path, width: float, dpi: int) -> list[Path]:
    """Score vs number of conditioning answers (top) and of test answers (bottom), with CIs."""
    axes_names = {
        "conditioning": "Number of conditioning answers",
        "test": "Number of masked-out answers",
    }
    with plt.rc_context(STYLE):
        fig, axes = plt.subplots(2, 1, figsize=(width, width * 1.45), sharey=True)
        for ax, (axis, xlabel) in zip(axes, axes_names.items(), strict=True):
            rows = table[table["axis"] == axis]
            labels = rows["strategy"]
            if len(rows) and len(rows.groupby(EXPERIMENT)) > 1:
                labels = labels + " · " + _experiment_labels(rows)
            for label, group in rows.groupby(labels, sort=False):
                group = group.sort_values("size")
                (line,) = ax.plot(group["size"], group["mean"], marker="o", ms=2.5, label=label)
                ax.fill_between(
                    group["size"],
                    group["ci_low"],
                    group["ci_high"],
                    color=line.get_color(),
                    alpha=0.15,
                    lw=0,
                )
            if rows.empty:
                _no_data(ax)
            else:
                ax.set_xscale("log", base=2)
                ax.set_xticks(
                    sorted(rows["size"].unique()), [str(s) for s in sorted(rows["size"].unique())]
                )
            ax.set_xlabel(xlabel)
            ax.set_ylabel("SelfReflect score")
        handles, labels = axes[0].get_legend_handles_labels()
        if handles:
            fig.legend(
                handles,
                labels,
                loc="lower center",
                ncol=2,
                frameon=False,
                bbox_to_anchor=(0.5, -0.02 - 0.035 * ((len(labels) + 1) // 2)),
            )
        fig.tight_layout()
        return save(fig, stem, dpi)
