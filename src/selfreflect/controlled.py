"""Controlled pairs: summaries whose quality order is known (the paper's Table 1).

Text construction from a question's answers; no model runs here but the embedder that groups
the answers by meaning (``summaries.cluster``, as the cluster strategies do; or by normalised
string). A *distribution summary* states each group with its share
("Most likely A (about 60 %), could also be B (about 40 %)"); each pair type sets it against a
summary that is worse by construction. A question where a pair type cannot make a worse
summary (e.g. ``reversed`` when every group is equally frequent) gets no pair of that type.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from selfreflect.chat import prompts
from selfreflect.failures import ANSWERS_FAILED
from selfreflect.strategies.clustering import Cluster, cluster_answers, normalise, resolve_embedder
from selfreflect.strategies.related import verbalize

PROMPT_KEYS = (  # the prompts.yaml texts this module renders
    "cluster_verbalize_first",  # through verbalize
    "cluster_verbalize_more",
    "cluster_verbalize_separator",
    "controlled_either",
    "controlled_either_separator",
    "controlled_idk",
)

SIDES = ("good", "bad")  # a pair's better and worse summary
PAIR_TYPES = ("majority_only", "no_likelihoods", "reversed", "extra_option", "idk")
# why a pair type makes no pair for a question (its worse summary would equal the good one)
NO_PAIR = {
    "majority_only": "no answer group larger than every other",
    "no_likelihoods": "answer groups equally frequent",
    "reversed": "answer groups equally frequent",
    "extra_option": "no answer of another question to add",
    "idk": "the good summary already says I don't know",
}

Option = tuple[str, float]  # (answer text, share in [0, 1])


@dataclass(frozen=True)
class Pair:
    """Two summaries of one question; ``good`` describes the answers better than ``bad``."""

    pair_type: str
    good: str
    bad: str


def distribution_summary(options: Sequence[Option]) -> str:
    """A sentence stating ``options``, largest share first (the strategies' ``verbalize``);
    0 % options are left out."""
    ranked = sorted(options, key=lambda option: -option[1])
    percents = [(answer, round(100 * share)) for answer, share in ranked]
    sentence = verbalize([(answer, percent) for answer, percent in percents if percent])
    return sentence[:1].upper() + sentence[1:] + "."


Grouping = tuple[str, float]  # (embedder, similarity threshold) of cluster_answers
BY_STRING: Grouping = ("string", 1.0)  # equal normalised strings


def clusters_of(groups: Sequence[Sequence[str]], grouping: Grouping = BY_STRING):
    """Each group's answers clustered (by meaning unless ``grouping`` is :data:`BY_STRING`),
    largest cluster first; one embedder pass for all groups."""
    embedder, threshold = grouping
    return cluster_answers(groups, resolve_embedder(embedder), threshold)


def _shares(clusters: Sequence[Cluster]) -> list[Option]:
    total = sum(c.size for c in clusters)
    return [(c.text, c.size / total) for c in clusters]


def _worse(pair_type: str, options: list[Option], extra: str | None) -> str | None:
    """The worse summary of ``pair_type``, or None when the type does not apply."""
    text = prompts()
    shares = [share for _, share in options]
    varied = len(set(shares)) > 1
    if pair_type == "majority_only":  # only where one group is larger than every other
        return options[0][0] if len(options) > 1 and shares[0] > shares[1] else None
    if pair_type == "no_likelihoods":
        names = text["controlled_either_separator"].join(answer for answer, _ in options)
        return text["controlled_either"].format(options=names) if varied else None
    if pair_type == "reversed":
        flipped = [
            (answer, share) for (answer, _), share in zip(options, shares[::-1], strict=True)
        ]
        return distribution_summary(flipped) if varied else None
    if pair_type == "extra_option":
        if extra is None:
            return None
        # the rarest real answer's share before the real ones shrink to make room (at most
        # 25 %): with equal shares the foreign answer comes first ("Most likely ...")
        added = min(shares[-1], 0.25)
        return distribution_summary([*((a, s * (1 - added)) for a, s in options), (extra, added)])
    if pair_type == "idk":
        return text["controlled_idk"]
    raise ValueError(f"unknown pair type {pair_type!r}; known: {', '.join(PAIR_TYPES)}")


def question_pairs(
    clusters: Sequence[Cluster], pair_types: Sequence[str], extra: str | None = None
) -> list[Pair]:
    """The pairs of one question from the clusters of its (conditioning) answers.

    ``extra`` is an answer no sample gave (for ``extra_option``), put on one line (whitespace
    runs, newlines included, become one space); it is ignored when it equals one of the
    answers after normalisation.
    """
    if not clusters:
        return []
    options = _shares(clusters)
    if extra is not None:
        extra = " ".join(extra.split())
        if normalise(extra) in {normalise(c.text) for c in clusters}:
            extra = None
    good = distribution_summary(options)
    pairs = []
    for pair_type in pair_types:
        bad = _worse(pair_type, options, extra)
        if bad is not None and bad != good:
            pairs.append(Pair(pair_type, good, bad))
    return pairs


def foreign_answers(clusters: Sequence[Sequence[Cluster]]) -> list[str | None]:
    """For each question (its answers' clusters), the largest cluster's answer of the next
    question (cyclically), if any."""
    majority = [(question or [None])[0] for question in clusters]
    n = len(majority)
    return [
        None if majority[(i + 1) % n] is None or n < 2 else majority[(i + 1) % n].text
        for i in range(n)
    ]


def pairs_table(
    answers: pd.DataFrame, pair_types: Sequence[str], grouping: Grouping = BY_STRING
) -> pd.DataFrame:
    """One row (id, pair_type, good, bad, error) per question and pair type; a pair that cannot
    be made (failed answers, no answers, the type does not apply) has no summaries and the
    reason in ``error``. ``grouping`` clusters the conditioning answers."""
    ok = answers["error"].isna()
    conditioning = [list(a) for a in answers.loc[ok, "conditioning_answers"]]
    clusters = clusters_of(conditioning, grouping) if pair_types else [[]] * len(conditioning)
    pairs = dict(zip(answers.loc[ok, "id"], clusters, strict=True))
    extras = dict(zip(pairs, foreign_answers(clusters), strict=True))
    rows = []
    for qid, error in zip(answers["id"], answers["error"], strict=True):
        made = {}
        if qid in pairs:
            made = {p.pair_type: p for p in question_pairs(pairs[qid], pair_types, extras[qid])}
        for pair_type in pair_types:
            if pair_type in made:
                rows.append((qid, pair_type, made[pair_type].good, made[pair_type].bad, None))
            else:
                reason = _no_pair_reason(error, pairs.get(qid), pair_type)
                rows.append((qid, pair_type, None, None, reason))
    return pd.DataFrame(rows, columns=["id", "pair_type", "good", "bad", "error"])


def _no_pair_reason(error: str | None, clusters: list[Cluster] | None, pair_type: str) -> str:
    if clusters is None:
        return f"{ANSWERS_FAILED}: {error}"
    if not clusters:
        return "no conditioning answers"
    return f"no {pair_type} pair: {NO_PAIR[pair_type]}"
