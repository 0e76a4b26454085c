"""Pure statistics for the result tables: arrays in, numbers and dataclasses out.

Conventions: a "values" array is 1-D with one entry per question. NaNs are rejected with
``ValueError``; callers drop failed questions themselves and report how many they dropped.
All randomness comes from ``numpy.random.default_rng(seed)``, so results are reproducible.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd

# scipy.stats is imported inside the functions that use it: importing it takes ~1 s, and every
# `selfreflect` command imports this module.

Level = Literal["nominal", "ordinal", "interval", "ratio"]
Correction = Literal["holm", "bonferroni"]
Statistic = Callable[..., np.ndarray]  # reduces a 2-D array along ``axis``

_BATCH_CELLS = 2_000_000  # resample-index cells drawn at once (bounds memory at ~16 MB)


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval ``[low, high]``."""

    estimate: float
    low: float
    high: float


@dataclass(frozen=True)
class PairedResult:
    """Paired comparison of two strategies on the same ``n`` questions.

    ``diff`` is the mean of ``a - b`` with its bootstrap CI; ``statistic`` and ``p_value``
    come from the two-sided Wilcoxon signed-rank test on the differences.
    """

    diff: Interval
    statistic: float
    p_value: float
    n: int


def _as_values(values: npt.ArrayLike, name: str = "values") -> np.ndarray:
    """Validate a non-empty, finite 1-D float array of shape (n,)."""
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN; drop failed questions before calling")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains infinite values")
    return arr


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")


def bootstrap_ci(
    values: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int = 0,
    statistic: Statistic = np.mean,
) -> Interval:
    """``statistic`` (the mean unless given, e.g. ``np.median``) of ``values`` (shape (n,))
    with a percentile bootstrap CI over questions (``scipy.stats.bootstrap``, resampled in
    batches of at most :data:`_BATCH_CELLS` index cells).

    ``statistic(array, axis=1)`` reduces each row of a 2-D array. A single value, or
    all-equal values, give the degenerate interval ``[estimate, estimate]``. Raises
    ``ValueError`` on NaN, empty input or a bad ``confidence``/``n_resamples``.
    """
    arr = _as_values(values)
    _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    estimate = float(statistic(arr[None, :], axis=1)[0])
    if arr.size == 1 or np.all(arr == arr[0]):
        return Interval(estimate, estimate, estimate)
    from scipy import stats

    result = stats.bootstrap(
        (arr,),
        statistic,
        n_resamples=n_resamples,
        batch=max(1, _BATCH_CELLS // arr.size),
        confidence_level=confidence,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = result.confidence_interval
    return Interval(estimate, float(low), float(high))


def paired_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
) -> PairedResult:
    """Compare paired scores ``a`` and ``b`` (both shape (n,), same question order).

    Returns the mean difference ``a - b`` with a percentile bootstrap CI and the two-sided
    Wilcoxon signed-rank p-value (zero differences dropped, scipy's default). If every
    difference is zero the result is ``diff = 0``, ``statistic = 0``, ``p_value = 1.0``.
    """
    x = _as_values(a, "a")
    y = _as_values(b, "b")
    if x.shape != y.shape:
        raise ValueError(f"a and b must have the same length, got {x.size} and {y.size}")
    d = x - y
    diff = bootstrap_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
    if not np.any(d != 0.0):
        return PairedResult(diff, 0.0, 1.0, int(d.size))
    from scipy import stats

    res = stats.wilcoxon(d, zero_method="wilcox", alternative="two-sided")
    return PairedResult(diff, float(res.statistic), float(res.pvalue), int(d.size))


@dataclass(frozen=True)
class ClusteredMean:
    """The mean of ``n`` values from ``clusters`` groups, with a cluster-robust interval and
    two-sided test against a null value, and the design effect: the variance of the mean
    with clusters over its variance were the values independent (1: no clustering)."""

    mean: Interval
    p_value: float
    design_effect: float
    n: int
    clusters: int


def cluster_robust_mean(
    values: npt.ArrayLike,
    clusters: npt.ArrayLike,
    null: float = 0.0,
    confidence: float = 0.95,
) -> ClusteredMean:
    """The mean of ``values`` (shape (n,)) whose entries share a cluster where ``clusters``
    (same shape) share a label: its CR1 sandwich variance (the squared sums of each cluster's
    residuals, times G / (G - 1), over n squared), a t interval and two-sided t test against
    ``null`` with G - 1 degrees of freedom. No resampling: the numbers are a function of the
    values; with one cluster per value it is the plain t interval, with equal clusters the t
    test of their means (statsmodels' OLS with ``cov_type="cluster"`` gives the same).
    NaN interval and p-value with fewer than two clusters or no spread."""
    _check_confidence(confidence)
    x = _as_values(values)
    labels = np.asarray(clusters)
    if labels.shape != x.shape:
        raise ValueError(f"lengths differ: {x.size} values, {labels.size} cluster labels")
    if x.size == 0:
        raise ValueError("values must not be empty")
    from scipy import stats

    mean, residuals = float(x.mean()), x - x.mean()
    _, group = np.unique(labels, return_inverse=True)
    n, g = x.size, int(group.max()) + 1
    sums = np.bincount(group, weights=residuals, minlength=g)
    robust = g / (g - 1) * float(sums @ sums) / n**2 if g > 1 else np.nan
    naive = float(residuals @ residuals) / (n * (n - 1)) if n > 1 else np.nan
    if not robust > 0:  # fewer than two clusters, or every value the same
        return ClusteredMean(Interval(mean, np.nan, np.nan), np.nan, np.nan, n, g)
    se = float(np.sqrt(robust))
    half = float(stats.t.ppf((1 + confidence) / 2, g - 1)) * se
    p_value = float(2 * stats.t.sf(abs(mean - null) / se, g - 1))
    return ClusteredMean(Interval(mean, mean - half, mean + half), p_value, robust / naive, n, g)


def _check_counts(successes: int, trials: int) -> None:
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials}")
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, trials], got {successes} of {trials}")


def proportion_ci(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``trials`` (scipy's ``binomtest``).

    ``estimate`` is the observed fraction ``successes / trials`` (not the Wilson centre).
    """
    _check_counts(successes, trials)
    _check_confidence(confidence)
    from scipy import stats

    ci = stats.binomtest(successes, trials).proportion_ci(confidence, method="wilson")
    return Interval(successes / trials, float(ci.low), float(ci.high))


def binomial_p_value(
    successes: int, trials: int, chance: float = 0.5, two_sided: bool = False
) -> float:
    """Exact binomial test: the p-value of ``successes`` out of ``trials`` under a success rate
    of ``chance``, against a higher rate (``two_sided``: against any other)."""
    _check_counts(successes, trials)
    if not 0.0 < chance < 1.0:
        raise ValueError(f"chance must be in (0, 1), got {chance}")
    from scipy import stats

    alternative = "two-sided" if two_sided else "greater"
    return float(stats.binomtest(successes, trials, chance, alternative=alternative).pvalue)


def binomial_power(
    trials: int, accuracy: float, level: float, chance: float = 0.5, two_sided: bool = False
) -> float:
    """Exact power of :func:`binomial_p_value` at ``level``: the probability that ``trials``
    pairs, each ranked right with probability ``accuracy``, give a p-value below ``level``
    (``two_sided``: of the two-sided test, with more than ``chance`` of the pairs right)."""
    _check_counts(0, trials)
    from scipy import stats

    counts = np.arange(trials + 1)
    if two_sided:
        p_values = [binomial_p_value(int(k), trials, chance, two_sided=True) for k in counts]
        fires = (np.array(p_values) < level) & (counts > trials * chance)
    else:
        fires = stats.binom.sf(counts - 1, trials, chance) < level  # P(X >= k) under chance
    return float(stats.binom.pmf(counts[fires], trials, accuracy).sum())


def signed_rank_power(
    questions: int, effect: float, level: float, trials: int, seed: int = 0
) -> float:
    """Simulated power of :func:`paired_test`'s two-sided Wilcoxon signed-rank test at
    ``level``: the share of ``trials`` studies of ``questions`` paired differences, drawn from
    a normal distribution with mean ``effect`` standard deviations, whose p-value is below it."""
    from scipy import stats

    differences = np.random.default_rng(seed).normal(effect, 1.0, (trials, questions))
    p = stats.wilcoxon(differences, zero_method="wilcox", alternative="two-sided", axis=1).pvalue
    return float(np.mean(p < level))


def mcnemar_p_value(a_only: int, b_only: int) -> float:
    """Exact two-sided McNemar test of two classifiers on the same items: ``a_only`` items only
    the first gets right, ``b_only`` only the second. The binomial test of ``a_only`` out of the
    discordant ``a_only + b_only`` against 0.5; no discordant item gives 1.0."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"counts must be non-negative, got {a_only} and {b_only}")
    if a_only + b_only == 0:
        return 1.0
    from scipy import stats

    return float(stats.binomtest(a_only, a_only + b_only, 0.5).pvalue)


def _bonferroni(p: np.ndarray) -> np.ndarray:
    return np.minimum(p * p.size, 1.0)


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment: four lines here, against statsmodels as a dependency."""
    order = np.argsort(p, kind="stable")
    steps = p[order] * np.arange(p.size, 0, -1)
    out = np.empty(p.size)
    out[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return out


_CORRECTIONS = {"holm": _holm, "bonferroni": _bonferroni}


def adjust_p_values(p_values: npt.ArrayLike, correction: Correction) -> np.ndarray:
    """Family-wise adjusted p-values (shape (m,)) of one family of tests: Holm's step-down or
    Bonferroni's. NaN marks a test not made: it stays NaN and does not count in the family."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be 1-D, got shape {p.shape}")
    if correction not in _CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; use {' or '.join(_CORRECTIONS)}")
    made = ~np.isnan(p)
    if ((p[made] < 0) | (p[made] > 1)).any():
        raise ValueError("p-values must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    if made.any():
        out[made] = _CORRECTIONS[correction](p[made])
    return out


def _as_distribution(p: npt.ArrayLike, name: str, normalize: bool) -> np.ndarray:
    """Validate a probability vector of shape (k,): finite, non-negative, sums to 1."""
    arr = _as_values(p, name)
    if (arr < 0).any():
        raise ValueError(f"{name} has negative entries")
    total = float(arr.sum())
    if total <= 0.0:
        raise ValueError(f"{name} sums to zero")
    if not normalize and not np.isclose(total, 1.0, rtol=0.0, atol=1e-6):
        raise ValueError(f"{name} sums to {total}, not 1 (pass normalize=True for counts)")
    return arr / total


def wasserstein_1(
    p: npt.ArrayLike,
    q: npt.ArrayLike,
    support: npt.ArrayLike | None = None,
    *,
    normalize: bool = False,
) -> float:
    """1-Wasserstein distance between discrete distributions ``p`` and ``q`` (shape (k,)).

    ``p`` and ``q`` are weights over the same ``k`` outcomes. They must be non-negative and
    sum to 1 (within 1e-6; they are then renormalised exactly); with ``normalize=True`` any
    non-negative weights with a positive sum (e.g. counts) are accepted and normalised.

    Without ``support`` the ground metric is 0/1, so W1 equals the total variation distance
    ``0.5 * sum(|p - q|)``. With a numeric ``support`` (shape (k,), any order) the ground
    metric is ``|x - y|`` on the real line.
    """
    pp = _as_distribution(p, "p", normalize)
    qq = _as_distribution(q, "q", normalize)
    if pp.shape != qq.shape:
        raise ValueError(f"p and q must have the same length, got {pp.size} and {qq.size}")
    if support is None:
        return float(0.5 * np.abs(pp - qq).sum())
    xs = _as_values(support, "support")
    if xs.shape != pp.shape:
        raise ValueError(f"support must have length {pp.size}, got {xs.size}")
    from scipy import stats

    return float(stats.wasserstein_distance(xs, xs, u_weights=pp, v_weights=qq))


def rank_correlation(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[float, float]:
    """Spearman rank correlation of ``x`` and ``y`` (both shape (n,), n >= 2): ``(rho, p)``.

    ``p`` is scipy's two-sided p-value. Constant input gives ``(nan, nan)`` (scipy warns).
    """
    xa = _as_values(x, "x")
    ya = _as_values(y, "y")
    if xa.shape != ya.shape:
        raise ValueError(f"x and y must have the same length, got {xa.size} and {ya.size}")
    if xa.size < 2:
        raise ValueError("rank correlation needs at least 2 observations")
    from scipy import stats

    res = stats.spearmanr(xa, ya)
    return float(res.statistic), float(res.pvalue)


def signed_rank_test(values: npt.ArrayLike, two_sided: bool = False) -> tuple[float, float]:
    """Wilcoxon signed-rank test that ``values`` (shape (n,)) lie above 0 (``two_sided``:
    away from 0 either way): ``(statistic, p)``. Zeros are dropped (scipy's default); all
    zeros give ``(0.0, 1.0)``."""
    arr = _as_values(values)
    if not np.any(arr != 0.0):
        return 0.0, 1.0
    from scipy import stats

    alternative = "two-sided" if two_sided else "greater"
    res = stats.wilcoxon(arr, zero_method="wilcox", alternative=alternative)
    return float(res.statistic), float(res.pvalue)


def per_question_rho(
    questions: npt.ArrayLike, scores: npt.ArrayLike, distances: npt.ArrayLike
) -> tuple[pd.Series, int]:
    """Spearman rho of ``scores`` with ``distances`` over each question's rows (all three of
    shape (n,), one row per summary), a series indexed by question in sorted order, and how
    many questions were skipped because their rho is undefined (one row, or a constant
    column).

    Rho is the Pearson correlation of the average ranks within the question (scipy's
    ``spearmanr``), computed for all questions at once.
    """
    x = _as_values(scores, "scores")
    y = _as_values(distances, "distances")
    keys = np.asarray(questions)
    if not keys.shape == x.shape == y.shape:
        raise ValueError(
            f"lengths differ: {keys.size} questions, {x.size} scores, {y.size} distances"
        )
    import pandas as pd

    ranks = pd.DataFrame({"x": x, "y": y}).groupby(keys).rank()
    c = ranks - ranks.groupby(keys).transform("mean")
    sums = pd.DataFrame({"xy": c.x * c.y, "xx": c.x**2, "yy": c.y**2}).groupby(keys).sum()
    defined = (sums.xx > 0) & (sums.yy > 0)
    rho = sums.xy[defined] / np.sqrt(sums.xx[defined] * sums.yy[defined])
    return rho, int((~defined).sum())


@dataclass(frozen=True)
class WithinQuestionResult:
    """Does the score order each question's summaries as the true distance does?

    ``median`` is the median per-question Spearman rho with its bootstrap CI over questions;
    ``statistic`` and ``p_value`` come from the Wilcoxon signed-rank test that the per-question
    rho is above 0 (or, two-sided, away from 0); ``n`` questions have a rho, ``skipped`` have
    none.
    """

    median: Interval
    statistic: float
    p_value: float
    n: int
    skipped: int


def within_question_test(
    questions: npt.ArrayLike,
    scores: npt.ArrayLike,
    distances: npt.ArrayLike,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    two_sided: bool = False,
) -> WithinQuestionResult:
    """The MC study's statistic over rows (question, score, true distance), each shape (n,)
    (:func:`per_question_rho`, :func:`signed_rank_test`, one-sided unless ``two_sided``).
    Raises ``ValueError`` when no question has a rho."""
    rhos, skipped = per_question_rho(questions, scores, distances)
    if rhos.size == 0:
        raise ValueError(f"no question has a defined rank correlation ({skipped} skipped)")
    median = bootstrap_ci(
        rhos, confidence=confidence, n_resamples=n_resamples, seed=seed, statistic=np.median
    )
    statistic, p_value = signed_rank_test(rhos, two_sided)
    return WithinQuestionResult(median, statistic, p_value, int(rhos.size), skipped)


def _coincidences(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coincidence matrix (shape (v, v)) and sorted distinct values (shape (v,)).

    ``ratings`` is raters x units with NaN for missing; units with < 2 ratings are dropped.
    """
    present = ~np.isnan(ratings)
    pairable = present.sum(axis=0) >= 2
    r = ratings[:, pairable]
    values = np.unique(r[~np.isnan(r)])
    # counts[u, c]: how many raters gave unit u the value values[c]
    counts = (r.T[:, :, None] == values[None, None, :]).sum(axis=1).astype(float)
    m = counts.sum(axis=1)
    weighted = counts / (m - 1.0)[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    return o, values


def _delta2(values: np.ndarray, n_c: np.ndarray, level: Level) -> np.ndarray:
    """Squared difference function δ²(c, k) for ``level``; shape (v, v)."""
    c, k = values[:, None], values[None, :]
    if level == "nominal":
        return (c != k).astype(float)
    if level == "interval":
        return (c - k) ** 2
    if level == "ratio":
        s = c + k
        with np.errstate(divide="ignore", invalid="ignore"):
            out = ((c - k) / s) ** 2
        return np.where(s == 0, 0.0, out)
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        i, j = np.meshgrid(np.arange(values.size), np.arange(values.size), indexing="ij")
        lo, hi = np.minimum(i, j), np.maximum(i, j)
        between = cum[hi + 1] - cum[lo]  # sum of n_g for g from lo to hi inclusive
        return (between - (n_c[i] + n_c[j]) / 2.0) ** 2
    raise ValueError(f"unknown level {level!r}; use nominal, ordinal, interval or ratio")


def krippendorff_alpha(ratings: npt.ArrayLike, level: Level = "interval") -> float:
    """Krippendorff's alpha for ``ratings`` of shape (raters, units), NaN = missing.

    Computed from the coincidence matrix: ``alpha = 1 - (n - 1) * sum(o * δ²) /
    sum(n_c n_k δ²)``. Units rated by fewer than two raters are ignored. Returns NaN when
    alpha is undefined (no variation in the pairable values). Ratio level needs values >= 0.
    """
    arr = np.asarray(ratings, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be 2-D (raters, units), got shape {arr.shape}")
    if np.isinf(arr).any():
        raise ValueError("ratings contain infinite values")
    if level == "ratio" and (arr[~np.isnan(arr)] < 0).any():
        raise ValueError("ratio level needs non-negative ratings")
    o, values = _coincidences(arr)
    if values.size == 0:
        raise ValueError("no unit has two or more ratings")
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d2 = _delta2(values, n_c, level)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if expected == 0.0:
        return float("nan")
    return float(1.0 - (n - 1.0) * (o * d2).sum() / expected)
