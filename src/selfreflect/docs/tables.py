"""Markdown tables for the docs: from rows of cells, and from a DataFrame."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def cell(value: object) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def table(header: Sequence[object], rows: Sequence[Sequence[object]], align: str = "") -> str:
    """A Markdown table, one line per row (no newline after the last). ``align`` holds one letter
    per column, ``l`` (left) or ``r`` (right); by default text columns (judged by the first row)
    are left-aligned and the others right-aligned."""
    if not align:
        first = rows[0] if rows else header
        align = "".join("l" if isinstance(value, str) else "r" for value in first)
    rule = ["---" if side == "l" else "---:" for side in align]
    lines = [list(map(cell, header)), rule, *(list(map(cell, row)) for row in rows)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def p_text(value: float, level: float, digits: int = 2) -> str:
    """A p-value to ``digits`` significant digits, more where fewer would show it on the other
    side of the plan's ``level`` or on it (0.0496 and 0.0504 at 0.05, not "0.05"), so that the
    verdict can be read off the digits."""
    for shown in range(digits, 17):
        text = f"{value:.{shown}g}"
        if float(text) != level and (float(text) < level) == (value < level):
            return text
    return repr(value)


def frame_table(frame: pd.DataFrame, floatfmt: str = "g") -> str:
    """``frame`` as a Markdown table with its index, columns padded to their width (tabulate's
    ``pipe`` format), numbers formatted with ``floatfmt`` (no newline after the last row)."""
    return frame.to_markdown(floatfmt=floatfmt)
