"""Verdicts by an analysis plan (config ``report.plan``): p-values adjusted within their
family of tests (:func:`selfreflect.stats.adjust_p_values`), and a verdict where the adjusted p
is below the plan's level. Every table with a verdict takes it from here."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from selfreflect.stats import Correction, adjust_p_values


@dataclass(frozen=True)
class Plan:
    """A table's analysis plan (config ``report.plan``): the family-wise ``level``, the
    ``correction`` within a family, and the ``minimum`` pairs or questions a test needs for a
    verdict (tests on fewer are left out of their family)."""

    level: float
    correction: Correction
    minimum: int


def _adjusted(
    table: pd.DataFrame, p_value: str, n: str, family: list[str], plan: Plan
) -> pd.Series:
    """Column ``p_value`` adjusted within each family (rows sharing the ``family`` columns);
    tests on fewer than the plan's minimum (column ``n``) are no part of it and stay NaN."""
    made = table[p_value].where(table[n] >= plan.minimum).to_numpy(dtype=float)
    out = np.full(len(table), np.nan)
    for rows in table.groupby(family, sort=False, dropna=False).indices.values():
        out[rows] = adjust_p_values(made[rows], plan.correction)
    return pd.Series(out, index=table.index)


def with_verdicts(
    table: pd.DataFrame,
    p_value: str,
    n: str,
    family: list[str],
    plan: Plan,
    finding: pd.Series,
    too_few: str,
) -> pd.DataFrame:
    """``table`` with the adjusted p-value and verdict of column ``p_value`` after it (its name
    with ``p_adjusted`` and ``verdict`` for ``p_value``): ``finding`` (per row) where the
    adjusted p is below the plan's level, else "not significant"; ``too_few`` where fewer than
    the plan's minimum (column ``n``) were tested; NaN where no test was made."""
    adjusted = _adjusted(table, p_value, n, family, plan)
    verdict = finding.where(adjusted < plan.level, "not significant")
    verdict = verdict.where(~(table[n] < plan.minimum), too_few).where(table[p_value].notna())
    out = table.copy()
    at = out.columns.get_loc(p_value) + 1
    out.insert(at, p_value.replace("p_value", "p_adjusted"), adjusted)
    out.insert(at + 1, p_value.replace("p_value", "verdict"), verdict)
    return out
