"""The paper's claims, read off a run's report tables: each judge's verdict on each claim, and
one verdict per claim across judges by the analysis plan's primary judge.

A judge's verdict on a claim is ``supports``, ``against`` (its test is significant in the other
direction: a pair type below chance, scores ordering against W1, the claim's strategy worse)
or ``neither``. The rule that combines judges (``report.plan.primary_judge``): a claim holds
when the primary judge's verdict supports it and no other judge's verdict is against it.
``pytest -m science`` asserts the judges' verdicts; docs/science.md shows both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

SUPPORTS, AGAINST, NEITHER = "supports", "against", "neither"


@dataclass(frozen=True)
class Verdict:
    """One judge's verdict on one claim, with the numbers it rests on."""

    verdict: str
    numbers: str


Tables = dict[str, pd.DataFrame]  # a run's (or a record's) report tables by name


def _one(rows: pd.DataFrame, what: str) -> pd.Series:
    if len(rows) != 1:
        raise ValueError(f"{what}: {len(rows)} rows, expected one")
    return rows.iloc[0]


def pairs(tables: Tables, judge: str, dataset: str, pair_type: str) -> Verdict:
    """SelfReflect ranks the better summary of ``pair_type``'s pairs first."""
    validation = tables["validation"]
    row = _one(
        validation[
            (validation["judge"] == judge)
            & (validation["dataset"] == dataset)
            & (validation["pair_type"] == pair_type)
            & (validation["metric"] == "selfreflect")
        ],
        f"validation: {judge}, {dataset}, {pair_type}",
    )
    found = {"above chance": SUPPORTS, "below chance": AGAINST}.get(row.verdict_vs_chance, NEITHER)
    return Verdict(
        found,
        f"{row.n_correct}/{row.n_pairs} ranked right, CI [{row.ci_low:.2f}, {row.ci_high:.2f}],"
        f" adjusted p {row.p_adjusted_vs_chance:.2g}: {row.verdict_vs_chance}",
    )


def tracks_w1(tables: Tables, judge: str, dataset: str) -> Verdict:
    """SelfReflect orders the multiple-choice study's summaries as their true W1 does (one test
    per experiment and statistic: its adjusted p is its p)."""
    mc = tables["mc_study"]
    row = _one(mc[(mc["judge"] == judge) & (mc["dataset"] == dataset)], f"mc_study: {judge}")
    found = SUPPORTS if row.tracks_w1 == "yes" else NEITHER
    if row.verdict == "orders against W1":
        found = AGAINST
    return Verdict(
        found,
        f"median per-question rho {row.median_rho:.2f} (p {row.p_value:.2g}: {row.verdict});"
        f" pooled rho {row.pooled_rho:.2f} (p {row.pooled_p_value:.2g}: {row.pooled_verdict})",
    )


def beats_baseline(tables: Tables, judge: str, dataset: str, strategy: str) -> Verdict:
    """``strategy`` scores lower (better) than the baseline, failing on no question."""
    main = tables["main"]
    row = _one(
        main[
            (main["judge"] == judge) & (main["dataset"] == dataset) & (main["strategy"] == strategy)
        ],
        f"main: {judge}, {dataset}, {strategy}",
    )
    found = {"better": SUPPORTS, "worse": AGAINST}.get(row.verdict, NEITHER)
    if row.n_failed:
        found = NEITHER if found == SUPPORTS else found
    return Verdict(
        found,
        f"{row.n_failed} failed; difference to the baseline {row['diff']:+.4f}, CI "
        f"[{row.diff_low:+.4f}, {row.diff_high:+.4f}], adjusted p {row.p_adjusted:.2g} "
        f"({row.family}): {row.verdict}",
    )


def beats_other(tables: Tables, judge: str, dataset: str, other: str) -> Verdict:
    """The claim's strategy (``report.plan.versus``) scores lower than ``other``: ``other``'s
    row says it is worse than the claim's strategy."""
    main = tables["main"]
    row = _one(
        main[(main["judge"] == judge) & (main["dataset"] == dataset) & (main["strategy"] == other)],
        f"main: {judge}, {dataset}, {other}",
    )
    found = {"worse": SUPPORTS, "better": AGAINST}.get(row.versus_verdict, NEITHER)
    return Verdict(
        found,
        f"{other} {row.versus_diff:+.4f} to {row.versus}, CI [{row.versus_diff_low:+.4f}, "
        f"{row.versus_diff_high:+.4f}], adjusted p {row.versus_p_adjusted:.2g}: "
        f"{row.versus_verdict}",
    )


def finetuning_control(
    rows: pd.DataFrame, teacher: str, baseline: str, min_adapters: int
) -> Verdict:
    """A finetuning positive control (``report.plan.control_min_adapters``) from one
    experiment's main-table ``rows``: it ``succeeds`` when ``teacher`` scores better than
    ``baseline`` and at least ``min_adapters`` of the adapters that learnt from it do, ``fails``
    when the teacher does and fewer adapters do, and is ``void`` when the teacher does not."""
    own = _one(rows[rows["strategy"] == teacher], f"main: {teacher}")
    taught = rows[rows["teacher"] == teacher]
    better = int((taught["verdict"] == "better").sum())
    numbers = (
        f"{teacher} {own['diff']:+.4f} to {baseline}, adjusted p {own['p_adjusted']:.2g}: "
        f"{own['verdict']}; adapters better than {baseline}: {better} of {len(taught)} "
        f"(the rule needs {min_adapters})"
    )
    if own["verdict"] != "better":
        return Verdict("void", numbers)
    return Verdict("succeeds" if better >= min_adapters else "fails", numbers)


@dataclass(frozen=True)
class Claim:
    """A claim of the paper and how a judge's verdict on it is read off the tables."""

    name: str
    verdict: Callable[[Tables, str], Verdict]


def claims(tables: Tables, plan: dict, free_form: str, multiple_choice: str | None) -> list[Claim]:
    """The claims the tables can decide: each pair type's, the multiple-choice study's (where
    it ran), each strategy's against the baseline (the paper's second claim is
    sample_and_summarize's), and the plan's own family (``versus``) where the main table
    holds it."""
    found = [
        Claim(f"pairs: {pair_type}", lambda t, j, p=pair_type: pairs(t, j, free_form, p))
        for pair_type in dict.fromkeys(
            tables["validation"].query("dataset == @free_form")["pair_type"]
        )
    ]
    if multiple_choice and "mc_study" in tables:
        found.append(Claim("MC study tracks W1", lambda t, j: tracks_w1(t, j, multiple_choice)))
    main = tables["main"]
    tested = main[(main["dataset"] == free_form) & (main["family"] == "strategies")]
    found += [
        Claim(
            f"{strategy} beats the baseline",
            lambda t, j, s=strategy: beats_baseline(t, j, free_form, s),
        )
        for strategy in dict.fromkeys(tested.dropna(subset=["p_adjusted"])["strategy"])
    ]
    versus = plan.get("versus")
    if versus and "versus" in main:
        compared = main[(main["dataset"] == free_form) & main["versus"].notna()]["strategy"]
        found += [
            Claim(
                f"{versus['strategy']} beats {other}",
                lambda t, j, o=other: beats_other(t, j, free_form, o),
            )
            for other in dict.fromkeys(compared)
        ]
    return found


def combined(verdicts: dict[str, Verdict], primary: str, pending: Sequence[str] = ()) -> str:
    """One verdict across judges: ``holds`` when the primary judge's supports the claim and
    no other judge's is against it; ``not confirmed`` when the primary judge's test is not
    significant (no evidence either way); ``fails`` when a judge's is against it (naming
    which). While ``pending`` judges have not judged, a claim that holds holds only so far:
    one of them may still be against it."""
    against = [judge for judge, v in verdicts.items() if judge != primary and v.verdict == AGAINST]
    if verdicts[primary].verdict == NEITHER:
        also = f"; against it by {', '.join(against)}" if against else ""
        return f"not confirmed: the primary judge's test is not significant{also}"
    if verdicts[primary].verdict == AGAINST:
        return "fails: the primary judge's verdict is against"
    if against:
        return f"fails: against it by {', '.join(against)}"
    return f"holds so far ({', '.join(pending)} not yet run)" if pending else "holds"


def verdict_table(
    tables: Tables,
    found: Sequence[Claim],
    judges: Sequence[str],
    primary: str | None,
    pending: Sequence[str] = (),
) -> pd.DataFrame:
    """A row per claim: each judge's verdict and, with a ``primary`` judge, the combined one
    (provisional while the plan's ``pending`` judges have no record)."""
    rows = []
    for claim in found:
        verdicts = {judge: claim.verdict(tables, judge) for judge in judges}
        row = {"claim": claim.name, **{judge: v.verdict for judge, v in verdicts.items()}}
        if primary:
            missing = "no record of the primary judge"
            row["one verdict"] = (
                combined(verdicts, primary, pending) if primary in verdicts else missing
            )
        rows.append(row)
    return pd.DataFrame(rows)
