"""Known-answer tests for selfreflect.stats."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from selfreflect.stats import (
    Interval,
    adjust_p_values,
    binomial_p_value,
    binomial_power,
    bootstrap_ci,
    cluster_robust_mean,
    krippendorff_alpha,
    mcnemar_p_value,
    paired_test,
    per_question_rho,
    proportion_ci,
    rank_correlation,
    signed_rank_power,
    signed_rank_test,
    wasserstein_1,
    within_question_test,
)

NAN = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", reliability data
# with missing values: 4 coders (A-D) x 12 units.
KRIPPENDORFF_DATA = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


# --- bootstrap_ci -------------------------------------------------------------------------


def test_bootstrap_ci_coverage_on_synthetic_data() -> None:
    rng = np.random.default_rng(12345)
    true_mean = 0.3  # Beta(3, 7): bounded in [0, 1] like a SelfReflect score
    hits = 0
    n_datasets = 200
    for i in range(n_datasets):
        data = rng.beta(3.0, 7.0, size=60)
        ci = bootstrap_ci(data, n_resamples=1000, seed=i)
        assert ci.low <= ci.estimate <= ci.high
        hits += ci.low <= true_mean <= ci.high
    assert 0.90 <= hits / n_datasets <= 0.99


def test_bootstrap_ci_single_value_is_degenerate() -> None:
    assert bootstrap_ci([0.42]) == Interval(0.42, 0.42, 0.42)


def test_bootstrap_ci_constant_values_are_degenerate() -> None:
    assert bootstrap_ci([0.5] * 7) == Interval(0.5, 0.5, 0.5)


def test_bootstrap_ci_is_reproducible_and_seeded() -> None:
    data = np.linspace(0.0, 1.0, 25)
    a = bootstrap_ci(data, n_resamples=2000, seed=7)
    assert a == bootstrap_ci(data, n_resamples=2000, seed=7)
    assert a != bootstrap_ci(data, n_resamples=2000, seed=8)
    assert a.estimate == pytest.approx(0.5)


def test_bootstrap_ci_wider_at_higher_confidence() -> None:
    data = np.linspace(0.0, 1.0, 25)
    narrow = bootstrap_ci(data, confidence=0.5, n_resamples=2000)
    wide = bootstrap_ci(data, confidence=0.99, n_resamples=2000)
    assert wide.low < narrow.low < narrow.high < wide.high


@pytest.mark.parametrize("bad", [[0.1, NAN, 0.3], [], [[0.1, 0.2]], [0.1, np.inf]])
def test_bootstrap_ci_rejects_bad_input(bad: list) -> None:
    with pytest.raises(ValueError):
        bootstrap_ci(bad)


def test_bootstrap_ci_rejects_bad_confidence() -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([0.1, 0.2], confidence=1.0)


def test_bootstrap_ci_of_the_median() -> None:
    values = [0.0, 0.0, 0.0, 0.1, 10.0]  # the mean (2.02) is pulled up, the median is not
    ci = bootstrap_ci(values, statistic=np.median, seed=1)
    assert ci.estimate == 0.0 and ci.low == 0.0 and ci.high <= 10.0
    assert ci == bootstrap_ci(values, statistic=np.median, seed=1)
    assert bootstrap_ci(values, seed=1).estimate == pytest.approx(2.02)


# Intervals of the hand-written percentile bootstrap that scipy.stats.bootstrap replaced (same
# seeds, default 10,000 resamples): the tables' intervals stay within 1e-12 of them.
HAND_WRITTEN = [
    ((1, 60, np.mean, 0.95, 0), (0.28473952235159444, 0.2567470143262323, 0.3133479638174401)),
    ((2, 1000, np.mean, 0.95, 3), (0.3008486371153058, 0.29228547379668673, 0.30963465344278046)),
    ((3, 15, np.median, 0.9, 1), (-0.3526307943415954, -0.6680463461089501, -0.2155971630897659)),
]


@pytest.mark.parametrize(("case", "expected"), HAND_WRITTEN)
def test_bootstrap_ci_keeps_the_hand_written_intervals(case, expected) -> None:
    data_seed, n, statistic, confidence, seed = case
    rng = np.random.default_rng(data_seed)
    values = rng.beta(3, 7, n) if statistic is np.mean else rng.normal(0, 1, n)
    ci = bootstrap_ci(values, statistic=statistic, confidence=confidence, seed=seed)
    assert ci.estimate == expected[0]
    assert ci.low == pytest.approx(expected[1], abs=1e-12)
    assert ci.high == pytest.approx(expected[2], abs=1e-12)


# --- paired_test --------------------------------------------------------------------------


def test_paired_test_identical_inputs() -> None:
    a = np.array([0.1, 0.4, 0.35, 0.8, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = paired_test(a, a.copy())
    assert res.diff == Interval(0.0, 0.0, 0.0)
    assert res.p_value == 1.0
    assert res.n == 5


def test_paired_test_detects_clear_shift() -> None:
    rng = np.random.default_rng(0)
    b = rng.uniform(0.2, 0.6, size=40)
    a = b + 0.1 + rng.normal(0.0, 0.02, size=40)
    res = paired_test(a, b, n_resamples=2000)
    assert res.diff.estimate == pytest.approx(np.mean(a - b))
    assert 0.0 < res.diff.low < res.diff.estimate < res.diff.high
    assert res.p_value < 1e-6


def test_paired_test_no_shift_is_not_significant() -> None:
    rng = np.random.default_rng(1)
    b = rng.uniform(0.0, 1.0, size=50)
    a = b + rng.normal(0.0, 0.05, size=50)
    res = paired_test(a, b, n_resamples=2000)
    assert res.diff.low < 0.0 < res.diff.high
    assert res.p_value > 0.05


def test_paired_test_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError):
        paired_test([0.1, 0.2], [0.1, 0.2, 0.3])


# --- proportion_ci ------------------------------------------------------------------------


def test_wilson_interval_known_value() -> None:
    # 8 of 10, 95 %: Wilson interval (0.4902, 0.9433), hand-computed with z = 1.95996.
    ci = proportion_ci(8, 10)
    assert ci.estimate == pytest.approx(0.8)
    assert ci.low == pytest.approx(0.490162, abs=1e-6)
    assert ci.high == pytest.approx(0.943318, abs=1e-6)


def test_wilson_interval_edges() -> None:
    zero = proportion_ci(0, 20)
    assert zero.estimate == 0.0 and zero.low == 0.0 and 0.0 < zero.high < 0.2
    full = proportion_ci(20, 20)
    assert full.high == 1.0 and 0.8 < full.low < 1.0


@pytest.mark.parametrize(("s", "t"), [(1, 0), (-1, 5), (6, 5)])
def test_wilson_interval_rejects_bad_counts(s: int, t: int) -> None:
    with pytest.raises(ValueError):
        proportion_ci(s, t)


def test_binomial_p_value_is_the_exact_upper_tail() -> None:
    assert binomial_p_value(8, 10) == pytest.approx(56 / 1024)  # P(X >= 8), X ~ B(10, 1/2)
    assert binomial_p_value(10, 10) == pytest.approx(1 / 1024)
    assert binomial_p_value(0, 12, chance=0.25) == pytest.approx(1.0)
    assert binomial_p_value(3, 4, chance=0.25) == pytest.approx(13 / 256)  # 4*3/4^4 + 1/4^4


@pytest.mark.parametrize(("s", "t", "chance"), [(1, 0, 0.5), (6, 5, 0.5), (2, 5, 1.0)])
def test_binomial_p_value_rejects_bad_input(s: int, t: int, chance: float) -> None:
    with pytest.raises(ValueError):
        binomial_p_value(s, t, chance)


# --- McNemar and multiple comparisons -------------------------------------------------------


def test_mcnemar_p_value_is_the_exact_two_sided_binomial_on_discordant_pairs() -> None:
    assert mcnemar_p_value(0, 5) == pytest.approx(2 / 32)  # 2 * P(X <= 0), X ~ B(5, 1/2)
    assert mcnemar_p_value(1, 9) == pytest.approx(22 / 1024)  # 2 * (1 + 10) / 2^10
    assert mcnemar_p_value(8, 2) == mcnemar_p_value(2, 8) == pytest.approx(112 / 1024)
    assert mcnemar_p_value(5, 5) == 1.0
    assert mcnemar_p_value(0, 0) == 1.0  # no discordant pair: no evidence either way


def test_mcnemar_p_value_rejects_negative_counts() -> None:
    with pytest.raises(ValueError):
        mcnemar_p_value(-1, 3)


# Holm (1979) as on Wikipedia: four tests, p = 0.01, 0.04, 0.03, 0.005. Holm multiplies the
# k-th smallest by (m - k + 1) = 4, 3, 2, 1 and keeps the running maximum.
HOLM_P = [0.01, 0.04, 0.03, 0.005]


def test_holm_known_values() -> None:
    # sorted: 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> max(0.06, 0.04)
    assert adjust_p_values(HOLM_P, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # capped at 1; the step-down maximum carries through: 0.4*3, 0.5*2, 0.9*1
    assert adjust_p_values([0.5, 0.9, 0.4], "holm") == pytest.approx([1.0, 1.0, 1.0])
    assert adjust_p_values([0.02, 0.02], "holm") == pytest.approx([0.04, 0.04])  # ties
    assert adjust_p_values([0.3], "holm") == pytest.approx([0.3])  # a family of one


def test_bonferroni_known_values() -> None:
    assert adjust_p_values(HOLM_P, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.02])
    assert adjust_p_values([0.3, 0.6], "bonferroni") == pytest.approx([0.6, 1.0])


@pytest.mark.parametrize("correction", ["holm", "bonferroni"])
def test_adjust_p_values_keeps_untested_entries_out_of_the_family(correction: str) -> None:
    with_gaps = adjust_p_values([NAN, 0.01, 0.04, NAN, 0.03, 0.005], correction)
    assert np.isnan(with_gaps[[0, 3]]).all()
    assert with_gaps[[1, 2, 4, 5]] == pytest.approx(adjust_p_values(HOLM_P, correction))
    assert np.isnan(adjust_p_values([NAN, NAN], correction)).all()
    assert adjust_p_values([], correction).shape == (0,)


@pytest.mark.parametrize(
    ("p", "correction"), [([0.1, 1.2], "holm"), ([-0.1], "bonferroni"), ([0.1], "hochberg")]
)
def test_adjust_p_values_rejects_bad_input(p: list, correction: str) -> None:
    with pytest.raises(ValueError):
        adjust_p_values(p, correction)  # type: ignore[arg-type]


# --- wasserstein_1 ------------------------------------------------------------------------


def test_w1_zero_one_metric_is_total_variation() -> None:
    assert wasserstein_1([0.5, 0.5, 0.0], [0.0, 0.5, 0.5]) == pytest.approx(0.5)
    assert wasserstein_1([1.0, 0.0], [0.0, 1.0]) == pytest.approx(1.0)
    assert wasserstein_1([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]) == 0.0


def test_w1_numeric_support() -> None:
    # CDF gap is 0.5 on [0, 1] and 0.5 on [1, 2] -> W1 = 1.0
    assert wasserstein_1([0.5, 0.5, 0.0], [0.0, 0.5, 0.5], support=[0, 1, 2]) == pytest.approx(1.0)
    # all mass moves from 0 to 10
    assert wasserstein_1([1, 0, 0], [0, 0, 1], support=[0, 4, 10]) == pytest.approx(10.0)
    # order of the support does not matter, only the pairing of weights and points
    assert wasserstein_1([0, 0, 1], [1, 0, 0], support=[10, 4, 0]) == pytest.approx(10.0)


def test_w1_normalize_accepts_counts() -> None:
    assert wasserstein_1([2, 2, 0], [0, 1, 1], normalize=True) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("p", "q"),
    [([0.5, 0.6], [0.5, 0.5]), ([1.2, -0.2], [0.5, 0.5]), ([0.5, 0.5], [1.0, 0.0, 0.0])],
)
def test_w1_rejects_invalid_distributions(p: list, q: list) -> None:
    with pytest.raises(ValueError):
        wasserstein_1(p, q)


def test_w1_rejects_support_length_mismatch() -> None:
    with pytest.raises(ValueError):
        wasserstein_1([0.5, 0.5], [0.5, 0.5], support=[0, 1, 2])


# --- rank_correlation ---------------------------------------------------------------------


def test_spearman_monotone() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    rho, p = rank_correlation(x, np.exp(x))
    assert rho == pytest.approx(1.0)
    assert p < 0.01
    rho_neg, _ = rank_correlation(x, -(x**3))
    assert rho_neg == pytest.approx(-1.0)


def test_spearman_known_value() -> None:
    # ranks differ by d = (0, 0, 1, -1, 0): rho = 1 - 6 * 2 / (5 * 24) = 0.9
    rho, _ = rank_correlation([1, 2, 3, 4, 5], [10, 20, 40, 30, 50])
    assert rho == pytest.approx(0.9)


# --- within-question statistic ------------------------------------------------------------


def test_per_question_rho_skips_and_counts_undefined_questions() -> None:
    rows = [
        ("q1", 0.1, 0.2),
        ("q1", 0.2, 0.3),
        ("q1", 0.3, 0.9),  # q1: same order, rho 1
        ("q2", 0.3, 0.1),
        ("q2", 0.1, 0.5),  # q2: opposite order, rho -1
        ("q3", 0.5, 0.1),
        ("q3", 0.5, 0.7),  # q3: constant score, undefined
        ("q4", 0.2, 0.4),  # q4: one row, undefined
        ("q5", 1.0, 1.0),
        ("q5", 2.0, 3.0),
        ("q5", 3.0, 2.0),  # q5: rho 0.5
    ]
    questions, scores, distances = zip(*rows, strict=True)
    rhos, skipped = per_question_rho(questions, scores, distances)
    assert rhos.tolist() == pytest.approx([1.0, -1.0, 0.5]) and skipped == 2
    assert rhos.index.tolist() == ["q1", "q2", "q5"]
    with pytest.raises(ValueError, match="lengths differ"):
        per_question_rho(questions[:-1], scores, distances)


def test_signed_rank_test_is_one_sided() -> None:
    up = [0.5, 1.0, 0.2, 0.8, 0.9, 0.4, 0.7, 0.6]
    assert signed_rank_test(up)[1] == pytest.approx(1 / 256)  # exact: all 8 ranks positive
    assert signed_rank_test(-np.array(up))[1] == pytest.approx(1.0)
    assert signed_rank_test([0.0, 0.0]) == (0.0, 1.0)


def test_within_question_test_detects_a_consistent_order_and_not_noise() -> None:
    rng = np.random.default_rng(0)
    questions = np.repeat(np.arange(30), 3)
    distances = rng.uniform(size=90)
    ordered = within_question_test(questions, distances + rng.normal(0, 0.05, 90), distances)
    assert ordered.p_value < 1e-4 and ordered.n == 30 and ordered.skipped == 0
    assert ordered.median.estimate == 1.0 and ordered.median.low >= 0.5
    noise = within_question_test(questions, rng.uniform(size=90), distances)
    assert noise.p_value > 0.05 and noise.median.low < 0 < noise.median.high
    with pytest.raises(ValueError, match="no question"):
        within_question_test(["q", "q"], [1.0, 1.0], [0.0, 1.0])


# --- krippendorff_alpha -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "expected"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_textbook_example(level: str, expected: float) -> None:
    assert krippendorff_alpha(KRIPPENDORFF_DATA, level) == pytest.approx(expected, abs=5e-4)


def test_krippendorff_perfect_agreement() -> None:
    ratings = [[1, 2, 3, NAN], [1, 2, 3, 4], [NAN, 2, 3, 4]]
    assert krippendorff_alpha(ratings, "nominal") == pytest.approx(1.0)


def test_krippendorff_undefined_without_variation() -> None:
    assert np.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]], "interval"))


def test_krippendorff_rejects_bad_input() -> None:
    with pytest.raises(ValueError):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ValueError):
        krippendorff_alpha(KRIPPENDORFF_DATA, "cardinal")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, NAN], [NAN, 2]])


@pytest.mark.parametrize("two_sided", [False, True])
@pytest.mark.parametrize(("trials", "accuracy"), [(20, 0.7), (71, 0.62), (9, 0.9), (1, 0.8)])
def test_binomial_power_is_the_chance_of_a_p_value_below_the_level(
    trials, accuracy, two_sided
) -> None:
    """Summed over every outcome the test can see, with the test's own p-value (two-sided:
    the outcomes above chance that it finds)."""
    from scipy import stats

    fires = [
        k
        for k in range(trials + 1)
        if binomial_p_value(k, trials, two_sided=two_sided) < 0.01
        and (not two_sided or k > trials / 2)
    ]
    expected = sum(stats.binom.pmf(k, trials, accuracy) for k in fires)
    found = binomial_power(trials, accuracy, 0.01, two_sided=two_sided)
    assert found == pytest.approx(expected, abs=1e-12)


def test_the_two_sided_test_has_less_power_above_chance() -> None:
    one, two = (binomial_power(130, 0.65, 0.01, two_sided=s) for s in (False, True))
    assert two < one


def test_binomial_power_at_chance_is_at_most_the_level_and_grows_with_accuracy() -> None:
    assert binomial_power(71, 0.5, 0.01) <= 0.01
    powers = [binomial_power(71, a, 0.01) for a in (0.55, 0.62, 0.7, 0.8)]
    assert powers == sorted(powers) and 0.3 < powers[1] < 0.4  # the "about 0.3"


def test_signed_rank_power_is_the_level_without_an_effect_and_grows_with_one() -> None:
    false_positives = signed_rank_power(100, 0.0, 0.05, trials=4000, seed=1)
    assert proportion_ci(round(false_positives * 4000), 4000, 0.99).low <= 0.05
    assert proportion_ci(round(false_positives * 4000), 4000, 0.99).high >= 0.05
    powers = [signed_rank_power(n, 0.3, 0.0125, trials=2000, seed=1) for n in (40, 100, 200)]
    assert powers == sorted(powers) and powers[-1] > 0.9
    assert signed_rank_power(100, 0.3, 0.0125, 500, seed=2) == signed_rank_power(
        100, 0.3, 0.0125, 500, seed=2
    )


def test_two_sided_binomial_and_signed_rank_tests_see_a_reversal() -> None:
    assert binomial_p_value(2, 10, two_sided=True) == pytest.approx(2 * 56 / 1024)
    assert binomial_p_value(8, 10, two_sided=True) == pytest.approx(2 * 56 / 1024)
    down = -np.arange(1.0, 9.0)
    assert signed_rank_test(down)[1] == pytest.approx(1.0)
    assert signed_rank_test(down, two_sided=True)[1] == pytest.approx(2 / 256)


# --- cluster_robust_mean --------------------------------------------------------------------


def test_one_question_per_cluster_is_the_plain_t_test() -> None:
    """Without clustering the CR1 variance is the sample variance over n: scipy's one-sample
    t test and interval, design effect 1."""
    from scipy import stats

    values = np.random.default_rng(3).normal(0.2, 1.0, 25)
    result = cluster_robust_mean(values, np.arange(25), null=0.1, confidence=0.9)
    plain = stats.ttest_1samp(values, 0.1)
    low, high = plain.confidence_interval(0.9)
    assert result.p_value == pytest.approx(plain.pvalue, rel=1e-12)
    assert (result.mean.low, result.mean.high) == pytest.approx((low, high), rel=1e-12)
    assert result.design_effect == pytest.approx(1.0)
    assert (result.n, result.clusters) == (25, 25)


def test_equal_clusters_are_the_t_test_of_their_means() -> None:
    """With G clusters of m questions the CR1 test is the t test of the G cluster means; when
    a cluster's questions are identical the design effect is (G m - 1) / (G - 1)."""
    from scipy import stats

    means = np.random.default_rng(4).normal(0.0, 1.0, 8)
    labels = np.repeat(np.array(list("abcdefgh")), 5)
    result = cluster_robust_mean(np.repeat(means, 5), labels)
    t_test = stats.ttest_1samp(means, 0.0)
    assert result.p_value == pytest.approx(t_test.pvalue, rel=1e-12)
    interval = t_test.confidence_interval(0.95)  # with G - 1 degrees of freedom
    assert (result.mean.low, result.mean.high) == pytest.approx((interval.low, interval.high))
    assert result.design_effect == pytest.approx((8 * 5 - 1) / (8 - 1))
    noisy = np.repeat(means, 5) + np.random.default_rng(5).normal(0.0, 0.5, 40)
    within = noisy.reshape(8, 5).mean(axis=1)
    expected = stats.ttest_1samp(within, 0.0).pvalue
    assert cluster_robust_mean(noisy, labels).p_value == pytest.approx(expected, rel=1e-12)


def test_clustering_widens_the_interval_of_clustered_values() -> None:
    rng = np.random.default_rng(6)
    labels = np.repeat(np.arange(10), 10)
    values = rng.normal(0.0, 1.0, 10)[labels] + rng.normal(0.0, 0.2, 100)
    clustered = cluster_robust_mean(values, labels)
    alone = cluster_robust_mean(values, np.arange(100))
    assert clustered.design_effect > 5
    assert clustered.mean.high - clustered.mean.low > 2 * (alone.mean.high - alone.mean.low)


def test_a_clustered_mean_without_spread_or_clusters_has_no_test() -> None:
    same = cluster_robust_mean([1.0, 1.0, 1.0], ["a", "b", "c"], null=0.5)
    one = cluster_robust_mean([0.0, 1.0, 1.0], ["a", "a", "a"], null=0.5)
    for result in (same, one):
        assert np.isnan(result.p_value) and np.isnan(result.mean.low)
    assert same.mean.estimate == 1.0 and one.clusters == 1


def test_a_clustered_mean_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="lengths differ"):
        cluster_robust_mean([1.0, 2.0], ["a"])
    with pytest.raises(ValueError, match="NaN"):
        cluster_robust_mean([1.0, NAN], ["a", "b"])
