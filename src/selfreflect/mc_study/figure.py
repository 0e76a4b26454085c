"""The multiple-choice study's figure: SelfReflect score against true W1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.plotting import (
    SCORE_LABEL,
    experiments,
    no_data,
    paper_style,
    save,
    stacked_panels,
)


def mc_figure(
    mc: pd.DataFrame, table: pd.DataFrame, stem: str | Path, width: float, dpi: int
) -> list[Path]:
    """SelfReflect score against the true W1 of each stated-distribution summary, one panel
    per experiment, titled with ``table``'s (:func:`~selfreflect.mc_study.table.mc_table`)
    median within-question rho with its CI and the pooled rho."""
    with paper_style() as plt:
        panels = experiments(mc)
        # room between panels for the two-line titles
        fig, axes = stacked_panels(len(panels), width, width * 0.85, gridspec_kw={"hspace": 0.55})
        ok = mc.dropna(subset=["score", "w1"])
        norm = None
        if len(ok):
            log_t = np.log2(ok["temperature"].astype(float))
            norm = plt.Normalize(log_t.min(), log_t.max())
        points = None
        for ax, (title, rows) in zip(axes, panels, strict=True):
            scored = rows.dropna(subset=["score", "w1"])
            if len(scored):
                points = ax.scatter(
                    scored["w1"],
                    scored["score"],
                    c=np.log2(scored["temperature"].astype(float)),
                    s=8,
                    cmap="coolwarm",
                    norm=norm,
                    alpha=0.8,
                )
            else:
                no_data(ax)
            stat = _mc_title(_mc_row(table, rows))
            ax.set_title(f"{title}: {stat}" if title else stat, fontsize="small")
            ax.set_xlabel("True 1-Wasserstein distance to the truth")
            ax.set_ylabel(SCORE_LABEL)
        if points is not None:
            bar = fig.colorbar(points, ax=axes)
            bar.set_label("log$_2$ temperature (<0 sharper, >0 flatter)")
        return save(fig, stem, dpi)


def _mc_row(table: pd.DataFrame, rows: pd.DataFrame) -> pd.Series | None:
    """The row of ``table`` for the experiment of ``rows`` (None when absent)."""
    if table.empty or rows.empty:
        return None
    match = np.ones(len(table), dtype=bool)
    for column in EXPERIMENT:
        match &= (table[column] == rows[column].iloc[0]).to_numpy()
    return table.loc[match].iloc[0] if match.any() else None


def _mc_title(row: pd.Series | None) -> str:
    """Median within-question rho [CI], then its question count and the pooled rho."""
    if row is None:
        return "Spearman ρ undefined"
    median, pooled = row["median_rho"], row["pooled_rho"]
    lines = [
        f"median ρ per question {median:.2f} "
        f"[{row['median_rho_low']:.2f}, {row['median_rho_high']:.2f}]"
        if np.isfinite(median)
        else "ρ per question undefined",
        f"{row['n_rho']} questions"
        + (f"; pooled ρ {pooled:.2f}" if np.isfinite(pooled) else "; pooled ρ undefined"),
    ]
    return "\n".join(lines)
