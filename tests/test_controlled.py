"""Controlled summary pairs (paper Table 1) and the multiple-choice study's summaries."""

import numpy as np
import pandas as pd
import pytest

from selfreflect.report.controlled import (
    AMBIGUOUS,
    PAIR_TYPES,
    choice_counts,
    clusters_of,
    distribution_summary,
    foreign_answers,
    mc_summary,
    mc_variants,
    pairs_table,
    parse_choice,
    question_pairs,
    stated_percents,
    tempered,
)

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
    assert pairs["reversed"].bad.startswith("Most likely Nice (about 50 %)")
    assert "Berlin (about 17 %)" in pairs["extra_option"].bad
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


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("B", 1),
        ("b", 1),
        ("(B)", 1),
        ("B.", 1),
        ("B)", 1),
        ("(c) because", 2),
        ("Answer: D.", 3),
        ("The answer is B.", 1),
        ("The answer is (C), Paris", 2),
        ("B. Madrid, not Rome", 1),  # a label decides over option texts
        ("It is Paris", 2),
        ("A city in France: Paris", 2),  # the article is no label
        ("Answer: A city in Italy, Rome", 3),
        ("no idea", None),
        ("Parisian food", None),  # option texts match as whole words
        ("E", None),
        ("Paris or Rome", AMBIGUOUS),
        ("(A) or (C)", AMBIGUOUS),
        ("The answer is A, or (D)", AMBIGUOUS),
    ],
)
def test_parse_choice(answer, expected):
    assert parse_choice(answer, ["Berlin", "Madrid", "Paris", "Rome"]) == expected


def test_an_option_inside_another_named_option_is_not_named_too():
    choices = ["York", "New York", "Boston"]
    assert parse_choice("New York City", choices) == 1
    assert parse_choice("York, not Boston", choices) is AMBIGUOUS


def test_choice_counts_count_ambiguous_answers_apart_from_none():
    choices = ["x1", "x2"]
    counts = choice_counts(["B", "b)", "x2", "?", "x1 or x2", "(A) (B)"], choices)
    assert list(counts) == [0, 3, 1, 2]  # A, B, none, ambiguous


def test_tempering_sharpens_and_flattens():
    counts = np.array([3.0, 1.0, 0.0])
    sharp, flat = tempered(counts, 0.25, 0.0), tempered(counts, 4.0, 0.0)
    assert sharp[0] > 0.98 and np.isclose(tempered(counts, 1.0, 0.0)[0], 0.75)
    assert flat[0] < 0.6 and flat[2] == 0.0
    assert tempered(counts, 4.0, 0.5)[2] > 0  # the pseudo-count reaches unseen choices


def test_mc_variants_true_w1_by_hand():
    choices = ["x1", "x2"]
    # conditioning: A, A, B, none -> counts (2, 1, 1); T = 1, no smoothing -> 50 / 25 / 25 %
    # test: A, B, B, B -> (0.25, 0.75, 0); W1 (0/1 metric) = 0.5 * (0.25 + 0.5 + 0.25) = 0.5
    [(temperature, summary, w1)] = mc_variants(
        ["A", "A", "B", "zz"], ["A", "B", "B", "B"], choices, [1.0], 0.0
    )
    assert temperature == 1.0 and w1 == pytest.approx(0.5)
    assert summary == (
        "Most likely A. x1 (about 50 %), could also be B. x2 (about 25 %), "
        "could also be an answer that is none of the choices (about 25 %)."
    )
    assert list(stated_percents(np.array([0.333, 0.667]))) == [33, 67]
    assert mc_summary(np.array([0, 100, 0]), choices) == "Most likely B. x2 (about 100 %)."
    # an ambiguous answer is no single choice: it counts as "none" in both distributions
    ambiguous = mc_variants(["A", "A", "B", "x1 or x2"], ["A", "B", "B", "B"], choices, [1.0], 0)
    assert ambiguous == [(temperature, summary, w1)]


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
