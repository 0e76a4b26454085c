"""The figures' common ground: paper-column style, one panel per experiment, atomic PNG + PDF
(matplotlib, Agg).

Figures are sized for a paper column (``width`` inches, 3.3 by default) with 8 pt text.
matplotlib is imported when a figure is drawn, not with the report's modules: the workflow's
Snakefile reads the report catalog on every ``snakemake`` call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pandas as pd

from selfreflect.artifacts import EXPERIMENT
from selfreflect.fileio import atomic_path
from selfreflect.paths import FIGURE_FORMATS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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


def pyplot() -> ModuleType:
    """matplotlib's pyplot on the Agg backend (no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def paper_style() -> Iterator[ModuleType]:
    """pyplot under the figures' style (:data:`STYLE`)."""
    plt = pyplot()
    with plt.rc_context(STYLE):
        yield plt


def save(fig: Figure, stem: str | Path, dpi: int) -> list[Path]:
    """Write ``stem.png`` and ``stem.pdf`` atomically and close the figure. The same figure
    gives the same bytes (no creation date in the PDF), so a rerun changes no DVC hash."""
    paths = []
    for ext in FIGURE_FORMATS:
        path = Path(f"{stem}.{ext}")
        metadata = {"CreationDate": None} if ext == "pdf" else None
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=ext, dpi=dpi, bbox_inches="tight", metadata=metadata)
        paths.append(path)
    pyplot().close(fig)
    return paths


def _experiment_labels(frame: pd.DataFrame) -> pd.Series:
    """``dataset / subject / judge`` per row (only the parts that vary)."""
    varying = [c for c in EXPERIMENT if frame[c].nunique() > 1] or ["dataset"]
    return frame[varying].astype(str).agg(" / ".join, axis=1)


def experiments(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) of each experiment in order; one untitled panel for one or none."""
    if frame.empty or all(frame[c].nunique() <= 1 for c in EXPERIMENT):
        return [("", frame)]
    labels = _experiment_labels(frame)
    return [(label, frame[labels == label]) for label in dict.fromkeys(labels)]


def stacked_panels(n: int, width: float, height: float, **kwargs) -> tuple[Figure, list[Axes]]:
    """A figure of ``n`` panels stacked vertically, each ``height`` inches tall."""
    fig, axes = pyplot().subplots(n, 1, figsize=(width, height * n), squeeze=False, **kwargs)
    return fig, list(axes[:, 0])


def no_data(ax: Axes, text: str = "no data") -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


def skipped_figure(stem: str | Path, reason: str, width: float, dpi: int) -> list[Path]:
    """A figure with nothing to show: one line saying why."""
    with paper_style() as plt:
        fig, ax = plt.subplots(figsize=(width, width * 0.3))
        ax.axis("off")
        ax.text(0.5, 0.5, f"Skipped: {reason}", ha="center", va="center", wrap=True)
        return save(fig, stem, dpi)
