"""Controlled summary pairs (paper Table 1) and the multiple-choice study's summaries."""

import numpy as np
import pandas as pd
import pytest

from selfreflect.controlled import (
    PAIR_TYPES,
    clusters_of,
    distribution_summary,
    foreign_answers,
    pairs_table,
    question_pairs,
)
from selfreflect.mc_study.variants import mc_summary, mc_variants, stated_percents, tempered

ANSWERS = ["Paris", "paris.", "Lyon", "Paris", "Nice", "Lyon"]  # Paris 3, Lyon 2, Nice 1


def pairs_of(answers, pair_types, extra=None):
    """question_pairs of ``answers`` grouped by normalised string."""
    return question_pairs(clusters_of([answers])[0], pair_types, extra)


def test_verbalize_orders_by_share_and_drops_zero_percent():
    text = distribution_summary([("B", 0.25), ("A", 0.75), ("C", 0.001)])
    assert text == "Most likely A (about 75 %), could also be B (about 25 %)."


def test_pairs_of_a_question_with_unequal_groups():
    pairs = {p.pair_type: p for p in pairs_of(ANSWERS, PAIR_TYPES, extra="Berlin")}
    assert set(pairs) == set(PAIR_TYPES)
    good = pairs["idk"].good
    assert good == (
        "Most likely Paris (about 50 %), could also be Lyon (about 33 %), "
        "could also be Nice (about 17 %)."
    )
    assert all(p.good == good for p in pairs.values())
    assert pairs["majority_only"].bad == "Paris"
    assert pairs["no_likelihoods"].bad == "Either Paris or Lyon or Nice."
    assert pairs["reversed"].bad == (
        "Most likely Nice (about 50 %), could also be Lyon (about 33 %), "
        "could also be Paris (about 17 %)."
    )
    # Berlin takes the rarest share (1/6); the real answers shrink by 5/6 to make room for it
    assert pairs["extra_option"].bad == (
        "Most likely Paris (about 42 %), could also be Lyon (about 28 %), "
        "could also be Berlin (about 17 %), could also be Nice (about 14 %)."
    )
    assert pairs["idk"].bad == "I don't know."


def test_pairs_that_cannot_be_worse_are_skipped():
    uniform = {p.pair_type for p in pairs_of(["a", "b"], PAIR_TYPES, extra="c")}
    assert uniform == {"extra_option", "idk"}  # no majority, no order to reverse or drop
    single = {p.pair_type for p in pairs_of(["a", "A."], PAIR_TYPES, extra="a")}
    assert single == {"idk"}  # one group, and the extra option is one of the answers
    assert pairs_of([], PAIR_TYPES) == []


def test_foreign_answer_is_put_on_one_line():
    [pair] = pairs_of(ANSWERS, ["extra_option"], extra="  Berlin,\n\n  in\tGermany\n")
    assert "Berlin, in Germany (about 17 %)" in pair.bad
    assert "\n" not in pair.bad and "  " not in pair.bad


def test_foreign_answer_is_the_next_questions_majority():
    assert foreign_answers(clusters_of([["x", "x", "y"], ["z"], []])) == ["z", None, "x"]
    assert foreign_answers(clusters_of([["x"]])) == [None]


def test_pairs_group_answers_by_meaning_and_need_a_real_majority():
    """With the embedder, paraphrases are one group (by string each would be its own, and
    the "majority" of majority_only an arbitrary one of them); a question whose largest group
    is no larger than the next makes no majority_only pair, and the table says why."""
    answers = ["Paris", "It is Paris.", "Paris, France", "Lyon", "The city of Lyon"]
    [by_meaning] = clusters_of([answers], ("minilm", 0.8))
    assert [(c.text, c.size) for c in by_meaning] == [("Paris", 3), ("Lyon", 2)]
    [pair] = question_pairs(by_meaning, ["majority_only"])
    assert pair.bad == "Paris" and pair.good.startswith("Most likely Paris (about 60 %)")
    tied = pd.DataFrame({"id": ["q"], "conditioning_answers": [["Paris", "Lyon"]], "error": [None]})
    [row] = pairs_table(tied, ["majority_only"], ("minilm", 0.8)).itertuples()
    assert row.good is None and row.error == (
        "no majority_only pair: no answer group larger than every other"
    )


def test_tempering_sharpens_and_flattens():
    truth = np.array([0.75, 0.25, 0.0])
    sharp, flat = tempered(truth, 0.25), tempered(truth, 4.0)
    assert sharp[0] > 0.98 and np.allclose(tempered(truth, 1.0), truth)
    assert flat[0] < 0.6 and flat[2] == 0.0


@pytest.mark.parametrize("temperature", [1e-4, 1e-300])
def test_tempering_at_a_tiny_temperature_keeps_the_most_likely_choice(temperature):
    """p ** (1 / T) underflowed every weight to 0 (NaN percentages); taken relative to the
    largest p, a tiny T leaves the most likely choice alone."""
    assert tempered([0.2, 0.3, 0.5, 0.0], temperature).tolist() == [0.0, 0.0, 1.0, 0.0]


def test_mc_variants_state_the_tempered_truth_and_its_true_w1_by_hand():
    choices = ["x1", "x2"]
    truth = [0.5, 0.25, 0.25]  # A, B, none
    [(temperature, summary, w1)] = mc_variants(truth, choices, [1.0])
    assert temperature == 1.0 and w1 == 0.0
    assert summary == (
        "Most likely A. x1 (about 50 %), could also be B. x2 (about 25 %), "
        "could also be an answer that is none of the choices (about 25 %)."
    )
    # T = 0.5 squares the truth: 0.25 / 0.0625 / 0.0625 of 0.375 -> 67 / 17 / 17 % (101 %,
    # renormalised); W1 (0/1 metric) = half the absolute differences = 67 / 101 - 0.5
    [(_, sharp, w1)] = mc_variants(truth, choices, [0.5])
    assert "(about 67 %)" in sharp and w1 == pytest.approx(67 / 101 - 0.5)
    assert list(stated_percents(np.array([0.333, 0.667]))) == [33, 67]
    assert mc_summary(np.array([0, 100, 0]), choices) == "Most likely B. x2 (about 100 %)."


def test_pairs_table_keeps_every_question_and_pair_type_with_a_reason():
    answers = pd.DataFrame(
        {
            "id": ["q1", "q2", "q3", "q4"],
            "conditioning_answers": [ANSWERS, ["a", "a"], [], ["x"]],
            "error": [None, None, None, "engine died"],
        }
    )
    table = pairs_table(answers, ["majority_only", "idk"]).set_index(["id", "pair_type"])
    assert len(table) == 4 * 2
    assert table.loc[("q1", "majority_only"), "bad"] == "Paris"
    assert table["error"].dropna().to_dict() == {
        ("q2", "majority_only"): "no majority_only pair: no answer group larger than every other",
        ("q3", "majority_only"): "no conditioning answers",
        ("q3", "idk"): "no conditioning answers",
        ("q4", "majority_only"): "answers failed: engine died",
        ("q4", "idk"): "answers failed: engine died",
    }
    assert table.loc[table["error"].notna(), ["good", "bad"]].isna().all().all()
