"""The report's tables written: the raw numbers as CSV, a display version (estimates with their
intervals) as Markdown and LaTeX, atomically."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd

from selfreflect.fileio import write_text
from selfreflect.paths import TABLE_FORMATS

# LaTeX's special characters in text, each as it is written to print it
LATEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_text(text: str) -> str:
    """``text`` as LaTeX prints it (pandas escapes a table's cells, not its caption)."""
    return re.sub(
        "[" + re.escape("".join(LATEX_SPECIALS)) + "]", lambda m: LATEX_SPECIALS[m[0]], text
    )


def _fmt(value: Any, digits: int = 3) -> str:
    return "–" if pd.isna(value) else f"{value:.{digits}f}"


def scientific(value: Any, digits: int = 2) -> str:
    """A number in scientific notation (differences that round to 0.000), or a dash."""
    return "–" if pd.isna(value) else f"{value:.{digits}e}"


def with_intervals(
    frame: pd.DataFrame, columns: dict[str, tuple[str, str, str]], digits: int = 3
) -> pd.DataFrame:
    """Replace each (estimate, low, high) column triple by one ``est [low, high]`` string
    column in the estimate's place; p-values (columns named ``*p_value*`` or ``*p_adjusted*``)
    below 0.001 read ``<0.001``."""
    out = frame.copy()
    for name, (est, low, high) in columns.items():
        text = [
            "–" if pd.isna(e) else f"{_fmt(e, digits)} [{_fmt(lo, digits)}, {_fmt(hi, digits)}]"
            for e, lo, hi in zip(frame[est], frame[low], frame[high], strict=True)
        ]
        position = out.columns.get_loc(est)
        out = out.drop(columns=[est, low, high])
        out.insert(position, name, text)
    for column in [c for c in out.columns if "p_value" in c or "p_adjusted" in c]:
        out[column] = [_fmt(p) if pd.isna(p) or p >= 0.001 else "<0.001" for p in out[column]]
    return out


def write_table_files(
    raw: pd.DataFrame, display: pd.DataFrame, out_dir: str | Path, name: str, caption: str
) -> list[Path]:
    """``name.csv`` (raw numbers), ``name.md`` and ``name.tex`` (display), written atomically."""
    out_dir = Path(out_dir)
    display = display.map(lambda v: _fmt(v) if isinstance(v, float) else v)
    render = {
        "csv": lambda: raw.to_csv(index=False),
        "md": lambda: f"{caption}\n\n{display.to_markdown(index=False)}\n",
        "tex": lambda: display.to_latex(
            index=False, caption=latex_text(caption), label=f"tab:{name}", escape=True
        ),
    }
    files = []
    for ext in TABLE_FORMATS:
        path = out_dir / f"{name}.{ext}"
        write_text(path, render[ext]())
        files.append(path)
    return files


def write_skipped(out_dir: str | Path, name: str, reason: str) -> list[Path]:
    """The files of table ``name`` when it has nothing to show: each says why in one line (the
    CSV, which the Snakemake report shows, as its one ``skipped`` cell)."""
    frame = pd.DataFrame({"skipped": [reason]})
    caption = f"Skipped: {reason}"
    return write_table_files(frame, frame, out_dir, name, caption)
