"""The multiple-choice study's power, simulated without a model (selfreflect.mc_study.power)."""

import numpy as np
import pytest

from selfreflect.config import answer_settings, load_config, question_count
from selfreflect.mc_study.power import detections, power_curve, simulate_study
from selfreflect.mc_study.variants import stated_distribution
from selfreflect.stats import proportion_ci, wasserstein_1
from tests.conftest import REPO

TEMPERATURES = [0.25, 1.0, 4.0]


def test_a_simulated_study_has_a_row_per_question_and_temperature():
    study = simulate_study(np.random.default_rng(0), "perfect", 5, 25, TEMPERATURES)
    assert len(study) == 5 * 3
    assert study.groupby("question")["temperature"].apply(list).tolist() == [TEMPERATURES] * 5
    assert study[["score", "distance"]].stack().between(0, 1).all()
    with pytest.raises(ValueError, match="unknown judge"):
        simulate_study(np.random.default_rng(0), "oracle", 1, 5, TEMPERATURES)


def test_a_perfect_judge_scores_the_stated_distribution_against_the_held_out_answers():
    """The simulation replayed by hand: four options, truths from a flat Dirichlet, 25 held-out
    answers drawn from each; the score is the stated distribution's W1 to their shares."""
    study = simulate_study(np.random.default_rng(0), "perfect", 3, 25, TEMPERATURES)
    rng = np.random.default_rng(0)
    expected = []
    for truth in rng.dirichlet(np.ones(4), 3):
        held_out = rng.multinomial(25, truth)
        for temperature in TEMPERATURES:
            percents, distance = stated_distribution(truth, temperature)
            expected.append((wasserstein_1(percents, held_out, normalize=True), distance))
    assert list(zip(study["score"], study["distance"], strict=True)) == pytest.approx(expected)


def test_the_concentration_sets_how_far_the_truths_are_from_uniform():
    """Truths near uniform (concentration 1000) are stated near exactly at any temperature."""
    rng = np.random.default_rng(0)
    study = simulate_study(rng, "perfect", 50, 25, [4.0], concentration=1000.0)
    assert study["distance"].max() < 0.05


def test_a_study_where_no_question_has_a_rho_detects_nothing():
    assert detections("perfect", 5, 25, [1.0], trials=3, seed=0) == 0  # one temperature


def test_the_science_runs_study_detects_a_perfect_judge_and_not_a_random_one():
    """At the size config/science.yaml gives its multiple-choice study."""
    config = load_config(REPO / "config" / "science.yaml")
    questions, n = question_count(config, "real_mmlu"), answer_settings(config, "real_mmlu")
    temperatures = config["report"]["mc_temperatures"]
    size = (min(questions, 40), n["num_answers"], temperatures)  # 40 shipped questions
    assert detections("perfect", *size, trials=100, seed=0) >= 95
    # the random judge's true false-positive rate is the test's level, about 5 % (4.6 to 5.2 %
    # over 2,000 to 5,000 trials), so a few hundred trials put the point estimate on either
    # side of 5 % by chance: assert that it is not shown to exceed 5 %
    fired = detections("random", *size, trials=400, seed=0)
    assert proportion_ci(fired, 400, confidence=0.99).low <= 0.05


def test_power_grows_with_the_question_count():
    curve = power_curve([8, 40], 10, TEMPERATURES, trials=40, seed=0).set_index(
        ["judge", "questions"]
    )
    perfect = curve.loc["perfect", "power"]  # about 0.45 and 0.99 (200 trials)
    assert perfect[8] < 0.8 and perfect[40] >= 0.9
    assert (curve["low"] <= curve["power"]).all() and (curve["power"] <= curve["high"]).all()
    for row in curve.itertuples():  # the Wilson interval of the detections at 95 %
        wilson = proportion_ci(round(row.power * 40), 40)
        assert (row.low, row.high) == pytest.approx((wilson.low, wilson.high))
    assert set(curve["n_answers"]) == {10}
