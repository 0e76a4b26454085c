"""docs/science.md from the science run's records (docs/science/, kept by ``selfreflect bench
science-record``), whatever the verdicts are; nothing is typed by hand. A record made under
another analysis plan than the config's is refused: its verdicts would not be the plan's.
Changes of plan after a run are listed, with date and reason, in
``docs/science/plan_changes.yaml``; a change names the studies whose verdicts it leaves
exploratory (decided by a plan written after their data were seen), and the page labels every
study's verdicts confirmatory or exploratory. The page is never written over one of the files it
reads.

    selfreflect docs science [--config config/science.yaml] [--records docs/science]
        [--out docs/science.md] [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pandas as pd

from selfreflect import claims
from selfreflect.bench.outputs import refuse_overwriting_inputs
from selfreflect.bench.power import ACCURACIES, EFFECTS, STRATEGY_TRIALS
from selfreflect.bench.science_record import (
    CONFIG,
    OPTIONAL,
    RECORDS,
    ROWS,
    clustered,
    default_records,
    read_records,
    recompute,
)
from selfreflect.config import load_config, summarized_datasets
from selfreflect.docs import publish, render
from selfreflect.docs.tables import p_text, table
from selfreflect.errors import InputError
from selfreflect.fileio import read_yaml

PLAN_CHANGES = "plan_changes.yaml"
CHANCE = 0.5  # a controlled pair's fraction right where the metric cannot tell its summaries
STUDIES = {  # the studies a plan change can leave exploratory, and their sections' titles
    "pairs": "controlled pairs",
    "mc": "multiple-choice study",
    "strategies": "strategies compared",
}


def _verdict(passed: bool) -> str:
    return "**yes**" if passed else "**no**"


def _plan_changes(path: Path) -> list[dict[str, Any]]:
    """The changes of plan listed in ``path`` (none if it is missing): a list of mappings of
    ``date``, ``change`` and ``reason`` text and, optionally, ``exploratory``: the
    :data:`STUDIES` whose verdicts the change leaves exploratory."""
    if not path.is_file():
        return []
    changes = read_yaml(path)
    fields = ("date", "change", "reason")
    if not isinstance(changes, list):
        raise InputError(f"{path}: expected a list of changes (date, change, reason)")
    for number, change in enumerate(changes, 1):
        if not isinstance(change, dict) or not all(isinstance(change.get(f), str) for f in fields):
            raise InputError(f"{path}: change {number}: needs date, change and reason as text")
        studies = change.get("exploratory", [])
        if not isinstance(studies, list) or not set(studies) <= set(STUDIES):
            raise InputError(
                f"{path}: change {number}: exploratory: a list of {', '.join(STUDIES)}"
            )
    return changes


def study_kinds(changes: list[dict[str, Any]], provenance: dict[str, Any]) -> dict[str, str]:
    """Each study's verdicts: ``confirmatory``, or ``exploratory`` naming why: the numbered
    changes of plan that leave them so (``plan changes 1, 3``), or a record that names no plan
    committed before its data (its ``plan_commit``)."""
    undated = [judge for judge, made in provenance.items() if not made.get("plan_commit")]
    kinds = {}
    for study in STUDIES:
        numbers = [str(n) for n, c in enumerate(changes, 1) if study in c.get("exploratory", [])]
        plural = "s" if len(numbers) > 1 else ""
        reasons = [f"plan change{plural} {', '.join(numbers)}"] if numbers else []
        if undated:
            reasons.append(f"no record of a plan committed before the data of {', '.join(undated)}")
        kinds[study] = f"exploratory ({'; '.join(reasons)})" if reasons else "confirmatory"
    return kinds


def _pairs(validation: pd.DataFrame, level: float, two_sided: bool) -> str:
    """The controlled pairs' table; under a one-sided plan, a verdict whose interval lies
    below chance is marked as the reversal its test could not find."""
    header = ["judge", "pair type", "metric", "right / pairs", "fraction", "95 % Wilson CI"]
    header += ["p vs chance", "adjusted p", "above chance", "McNemar p vs SelfReflect"]
    header += ["adjusted"]
    rows = [
        [
            row.judge,
            row.pair_type,
            row.metric,
            f"{row.n_correct} / {row.n_pairs}" + _left_out(row.n_excluded, row.n_failed),
            round(row.fraction, 2),
            f"[{row.ci_low:.2f}, {row.ci_high:.2f}]",
            p_text(row.p_value_vs_chance, level),
            p_text(row.p_adjusted_vs_chance, level),
            _chance(row.verdict_vs_chance, not two_sided and row.ci_high < CHANCE)
            if row.n_pairs
            else "no pairs",
            "" if pd.isna(row.mcnemar_p_value) else p_text(row.mcnemar_p_value, level),
            "" if pd.isna(row.mcnemar_p_adjusted) else p_text(row.mcnemar_p_adjusted, level),
        ]
        for row in validation.itertuples()
    ]
    return table(header, rows)


def _pair_power(validation: pd.DataFrame, level: float, two_sided: bool) -> str:
    """The exact power of the plan's test against chance at each tested SelfReflect pair
    type's pairs (the fewest any judge's test had), at the strictest Holm step of the pair types'
    family on its dataset, for the true shares ranked right that the power study names."""
    from selfreflect.stats import binomial_power

    tested = validation[
        (validation["metric"] == "selfreflect") & validation["p_adjusted_vs_chance"].notna()
    ]
    if tested.empty:
        return "No pair type was tested."
    pairs = tested.groupby(["dataset", "pair_type"], sort=False)["n_pairs"].min().reset_index()
    pairs["family"] = pairs.groupby("dataset")["pair_type"].transform("size")
    header = ["dataset", "pair type", "pairs", *(f"power at {share}" for share in ACCURACIES)]
    rows = [
        [
            row.dataset,
            row.pair_type,
            row.n_pairs,
            *(
                f"{binomial_power(row.n_pairs, a, level / row.family, CHANCE, two_sided):.2f}"
                for a in ACCURACIES
            ),
        ]
        for row in pairs.itertuples()
    ]
    return table(header, rows)


def _strategy_power(main: pd.DataFrame, level: float, references: list[str]) -> str:
    """The simulated power of each family's two-sided Wilcoxon test (the strategies against the
    baseline, and the plan's ``versus`` family; not the references') at its paired questions
    (the fewest any judge's test had), at the strictest Holm step of the family, for the
    standardized effects the power study names."""
    from selfreflect.stats import signed_rank_power

    tested = main[main["p_adjusted"].notna() & ~main["family"].isin(references)]
    families = [
        (dataset, family, rows["strategy"].nunique(), int(rows["n_paired"].min()))
        for (dataset, family), rows in tested.groupby(["dataset", "family"], sort=False)
    ]
    if "versus" in main:
        versus = main[main["versus_p_adjusted"].notna()]
        for (dataset, strategy), rows in versus.groupby(["dataset", "versus"], sort=False):
            paired = int(rows["versus_n_paired"].min())
            families.append((dataset, f"against {strategy}", rows["strategy"].nunique(), paired))
    if not families:
        return "No strategy was tested."
    header = ["dataset", "family", "tests", "paired questions"]
    header += [f"power at {effect}" for effect in EFFECTS]
    rows = [
        [
            dataset,
            family,
            tests,
            questions,
            *(
                f"{signed_rank_power(questions, e, level / tests, STRATEGY_TRIALS):.2f}"
                for e in EFFECTS
            ),
        ]
        for dataset, family, tests, questions in families
    ]
    return table(header, rows)


def _left_out(without_pair: int, failed: int) -> str:
    """The questions that gave no pair of a type and the pairs the metric could not score."""
    parts = [f"{without_pair} without a pair"] if without_pair else []
    parts += [f"{failed} failed"] if failed else []
    return f" ({', '.join(parts)})" if parts else ""


def _mc(mc: pd.DataFrame, level: float, two_sided: bool) -> str:
    header = ["judge", "questions with a rho", "median per-question rho", "95 % bootstrap CI"]
    wilcoxon = "Wilcoxon p (rho ≠ 0)" if two_sided else "Wilcoxon p (rho > 0)"
    header += [wilcoxon, "verdict", "pooled rho (p)", "pooled verdict"]
    header += ["decides", "tracks W1", "truth agrees", "truth check"]
    rows = [
        [
            row.judge,
            f"{row.n_rho} ({row.n_rho_skipped} skipped)",
            round(row.median_rho, 2),
            f"[{row.median_rho_low:.2f}, {row.median_rho_high:.2f}]",
            p_text(row.p_value, level),
            row.verdict,
            f"{row.pooled_rho:.2f} ({p_text(row.pooled_p_value, level)})",
            row.pooled_verdict,
            row.decided_by,
            _verdict(row.tracks_w1 == "yes"),
            f"{row.n_truth_agree} / {row.n_truth_checked}",
            row.truth_check,
        ]
        for row in mc.itertuples()
    ]
    return table(header, rows)


def _strategies(main: pd.DataFrame, baseline: str, level: float) -> str:
    header = ["judge", "strategy", "family", "mean score (95 % CI)"]
    header += [f"difference to {baseline} (95 % CI)", "Wilcoxon p", "adjusted p", "verdict"]
    compared = main[main["strategy"] != baseline]
    rows = [
        [
            row.judge,
            row.strategy,
            row.family,
            f"{row.mean:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}]",
            *_comparison(row._asdict(), "", level),
        ]
        for row in compared.itertuples()
    ]
    return table(header, rows)


def _comparison(row: dict[str, Any], prefix: str, level: float) -> list[str]:
    """A main-table row's paired comparison ``prefix`` ("": with the baseline): the difference
    with its CI, the p-value, the adjusted p-value and the verdict."""
    diff = f"{row[prefix + 'diff']:+.4f}"
    interval = f"[{row[prefix + 'diff_low']:+.4f}, {row[prefix + 'diff_high']:+.4f}]"
    p_values = [p_text(row[prefix + key], level) for key in ("p_value", "p_adjusted")]
    return [f"{diff} {interval}", *p_values, row[prefix + "verdict"]]


def _claim(main: pd.DataFrame, level: float) -> str:
    """The plan's own family of comparisons (``report.plan.versus``): each other strategy
    against the claim's strategy; none where the records' tables have no such columns."""
    if "versus" not in main or main["versus"].isna().all():
        return ""
    compared = main[main["versus"].notna()]
    header = ["judge", "strategy", "compared with", "difference (95 % CI)", "Wilcoxon p"]
    header += ["adjusted p", "verdict (the strategy's)"]
    rows = [
        [
            row.judge,
            row.strategy,
            row.versus,
            *_comparison(row._asdict(), "versus_", level),
        ]
        for row in compared.itertuples()
    ]
    return table(header, rows)


def _clustered(clustered: pd.DataFrame, level: float) -> str:
    """The tests of the records' per-question rows with their questions clustered; a dash
    where a test has no interval or p-value (:func:`selfreflect.report.clustered.clustered_table`
    says why in its verdict)."""
    header = ["judge", "dataset", "family", "test", "questions (clusters)", "mean (95 % CI)"]
    header += ["p", "adjusted p", "verdict", "design effect"]

    def shown(value: float, text: str) -> str:
        return "–" if pd.isna(value) else text

    rows = [
        [
            row.judge,
            row.dataset,
            row.family,
            row.test,
            f"{row.n_questions} ({row.n_clusters})",
            f"{row.mean:.4f} " + shown(row.ci_low, f"[{row.ci_low:.4f}, {row.ci_high:.4f}]"),
            shown(row.p_value, p_text(row.p_value, level)),
            shown(row.p_adjusted, p_text(row.p_adjusted, level)),
            row.verdict,
            shown(row.design_effect, f"{row.design_effect:.2f}"),
        ]
        for row in clustered.itertuples()
    ]
    return table(header, rows)


def _count(found: list[str], tested: int, reversed_: list[str], reversal: str) -> str:
    """``found`` of the ``tested`` (named), and the reversals beside them (named)."""
    text = f"{len(found)} of {tested}" + (f" ({', '.join(found)})" if found else "")
    return text + (f"; {len(reversed_)} {reversal} ({', '.join(reversed_)})" if reversed_ else "")


def _tracks(mc: pd.DataFrame) -> str:
    """The MC claim's verdict by its deciding statistic, the other statistic's beside it (a
    judge's row of each multiple-choice dataset)."""
    shown = []
    for row in mc.itertuples():
        within = row.decided_by == "within_question"
        other = f"pooled rho: {row.pooled_verdict}" if within else f"within: {row.verdict}"
        shown.append(f"{_verdict(row.tracks_w1 == 'yes')} ({other})")
    return ", ".join(shown)


def _verdicts(tables: dict[str, pd.DataFrame], judges: list[str], baseline: str) -> str:
    """One line per judge: what each study concludes (the sections below give the numbers)."""
    pairs = tables["validation"].query("metric == 'selfreflect' and n_pairs > 0")
    mc, main = tables.get("mc_study", pd.DataFrame(columns=OPTIONAL["mc_study"])), tables["main"]
    rows = []
    for judge in judges:
        own = pairs[pairs["judge"] == judge]
        above = own.loc[own["verdict_vs_chance"] == "above chance", "pair_type"].tolist()
        below = own.loc[own["verdict_vs_chance"] == "below chance", "pair_type"].tolist()
        mine = mc[mc["judge"] == judge]
        ranked = main[(main["judge"] == judge) & (main["family"] == "strategies")]
        better = ranked.loc[ranked["verdict"] == "better", "strategy"].tolist()
        worse = ranked.loc[ranked["verdict"] == "worse", "strategy"].tolist()
        tested = ranked[ranked["strategy"] != baseline]
        rows.append(
            [
                judge,
                _count(above, len(own), below, "below chance"),
                _tracks(mine) if len(mine) else "not run",
                ", ".join(map(str, mine["truth_check"].dropna())) or "not run",
                _count(better, len(tested), worse, "worse"),
            ]
        )
    header = ["judge", "pair types above chance", "MC study tracks W1", "MC truth check"]
    return table([*header, f"strategies better than {baseline}"], rows)


def _agreement(agreement: pd.DataFrame) -> str:
    header = ["judge", "backend", "summaries", "max abs difference", "mean abs difference"]
    rows = [
        [
            row.judge,
            row.backend,
            row.n_summaries,
            f"{row.max_abs_diff:.1e}",
            f"{row.mean_abs_diff:.1e}",
        ]
        for row in agreement.itertuples()
    ]
    return table(header, rows)


def _claims(
    tables: dict[str, pd.DataFrame],
    plan: dict,
    judges: list[str],
    pending: list[str],
    free_form: list[str],
):
    """Each recorded judge's verdict on each claim and, by the plan's primary judge, one
    verdict (:mod:`selfreflect.claims`), provisional while the ``pending`` judges have none."""
    mc = tables.get("mc_study")
    multiple_choice = None if mc is None or mc.empty else str(mc["dataset"].iloc[0])
    found = claims.claims(tables, plan, free_form[0], multiple_choice)
    frame = claims.verdict_table(tables, found, judges, plan.get("primary_judge"), pending)
    return table(list(frame.columns), frame.to_numpy().tolist())


def _chance(verdict: str, interval_below: bool = False) -> str:
    """A pair type's verdict against chance as the page shows it: yes, or no (with the
    reversal where a two-sided plan found one, or where a one-sided plan's interval lies below
    chance: ``interval_below``)."""
    shown = _verdict(verdict == "above chance")
    if verdict == "below chance":
        return f"{shown} (below chance)"
    return f"{shown} (interval below chance; one-sided test)" if interval_below else shown


def _commit(commit: str) -> str:
    """A record's commit, shortened, marked ``-dirty`` where its run's tree was modified."""
    return f"`{commit[:10]}{'-dirty' if commit.endswith('-dirty') else ''}`"


def _plan_commit(made: dict[str, Any]) -> str:
    """A record's plan commit as the runs table shows it."""
    if "plan_commit" not in made:
        return "not recorded"
    return _commit(made["plan_commit"]) if made["plan_commit"] else "none before its data"


def _records_table(provenance: dict[str, Any], judges: list[str], records: Path) -> str:
    """Each judge's recorded run: when, from which commit, its sizes, its judge jobs' time and
    the tables whose per-question rows it keeps (``--recompute`` rebuilds them)."""
    kept = {judge: [p.stem for p in (records / judge / ROWS).glob("*.parquet")] for judge in judges}
    header = [
        "judge",
        "recorded",
        "commit",
        "plan committed",
        "data from",
        "questions",
        "N",
        "judge jobs",
        "job wall min",
        "CPU min",
        "per-question rows",
    ]
    rows: list[list[object]] = []
    for judge, made in provenance.items():
        time = made["time"]
        rows.append(
            [
                judge,
                made["recorded"],
                _commit(made["commit"]),
                _plan_commit(made),
                ", ".join(map(_commit, made.get("data_commits", []))) or "not recorded",
                ", ".join(f"{d} {n}" for d, n in made["questions"].items()),
                ", ".join(f"{d} {n}" for d, n in made["answers"].items()),
                time["jobs"],
                round(time["wall_s"] / 60, 1),
                round(time["cpu_s"] / 60, 1),
                ", ".join(sorted(kept[judge])) or "none",
            ]
        )
    missing = [judge for judge in judges if judge not in provenance]
    return table(header, rows + [[judge, "not yet run", *[""] * 9] for judge in missing])


def text(config_path: Path, records: Path) -> str:
    """docs/science.md from the ``records`` of the run of ``config_path``."""
    config = load_config(config_path)
    provenance, tables = read_records(records, config)
    changes = _plan_changes(records / PLAN_CHANGES)
    kinds = study_kinds(changes, provenance)
    free_form = summarized_datasets(config)
    baseline = config["report"]["baseline"]
    context = {
        "config": config,
        "config_name": config_path.name,
        "records": records.as_posix(),
        "plan": config["report"]["plan"],
        "changes": table(
            ["#", "date", "change", "reason", "leaves exploratory"],
            [
                [n, c["date"], c["change"], c["reason"], ", ".join(c.get("exploratory", []))]
                for n, c in enumerate(changes, 1)
            ],
            align="rllll",
        )
        if changes
        else "",
        "kinds": kinds,
        "confirmed": [title for study, title in STUDIES.items() if kinds[study] == "confirmatory"],
        "pending": [judge for judge in config["judges"] if judge not in provenance],
        "runs": _records_table(provenance, config["judges"], records),
        "baseline": baseline,
        "free_form": free_form,
        "verdicts": "",
    }
    if provenance:
        main = tables["main"][tables["main"]["dataset"].isin(free_form)]
        on_free_form = tables["validation"]["dataset"].isin(free_form)
        validation = tables["validation"][on_free_form]
        free_form_tables = {**tables, "main": main, "validation": validation}
        other_pairs = tables["validation"][~on_free_form]
        level = config["report"]["plan"]["level"]
        two_sided = config["report"]["plan"].get("two_sided", False)
        by_cluster = clustered(records, config)
        context |= {
            "verdicts": _verdicts(free_form_tables, list(provenance), baseline),
            "claims": _claims(
                tables, config["report"]["plan"], list(provenance), context["pending"], free_form
            ),
            "pairs": _pairs(validation, level, two_sided),
            "pair_power": _pair_power(validation, level, two_sided),
            "other_pairs": _pairs(other_pairs, level, two_sided) if len(other_pairs) else "",
            "other_datasets": list(dict.fromkeys(other_pairs["dataset"])),
            "mc": _mc(tables["mc_study"], level, two_sided) if "mc_study" in tables else "",
            "strategies": _strategies(main, baseline, level),
            "strategy_trials": STRATEGY_TRIALS,
            "strategy_power": _strategy_power(main, level, config["report"]["plan"]["references"]),
            "claim": _claim(main, level),
            "clustered": _clustered(by_cluster, level) if len(by_cluster) else "",
            "agreement": _agreement(tables["backend_agreement"])
            if "backend_agreement" in tables
            else "",
        }
    return render("science.md.j2", **context)


def default_out(config: Path) -> Path:
    """The page of ``config``'s records unless ``--out`` says: ``docs/science.md`` for the
    science run's config, ``docs/science-<name>.md`` for another (beside its records)."""
    return Path(f"{default_records(config)}.md")


def _inputs(config: Path, records: Path) -> list[Path]:
    """The files :func:`text` reads: the config and every file of the records."""
    return [config, records / PLAN_CHANGES, *records.glob("*/*"), *records.glob("*/*/*")]


def check_recomputed(config: Path, records: Path) -> str:
    """Each record's tables rebuilt from its per-question rows under ``config``: what was
    recomputed, or one line per value that differs (an ``InputError``)."""
    done, differences = recompute(records, load_config(config))
    if differences:
        raise InputError("\n".join(differences))
    return (
        f"recomputed {', '.join(done)}" if done else f"{records}: no record keeps per-question rows"
    )


@click.command(help="Render docs/science.md from the science run's records.")
@CONFIG
@RECORDS
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="The page [default: docs/science.md for science.yaml, else docs/science-NAME.md].",
)
@click.option("--check", is_flag=True, help="Fail if --out differs from what it renders.")
@click.option(
    "--recompute",
    "recomputed",
    is_flag=True,
    help="Also build each record's tables again from its per-question rows (its rows/ folder) "
    "and fail if a value differs from the recorded one.",
)
def science(
    config: str, records: str | None, out: str | None, check: bool, recomputed: bool
) -> None:
    folder = Path(records) if records else default_records(Path(config))
    page = Path(out) if out else default_out(Path(config))
    if recomputed:
        print(check_recomputed(Path(config), folder))
    if not check:
        refuse_overwriting_inputs([page], _inputs(Path(config), folder))
    publish(page, text(Path(config).resolve(), folder), check, "docs science")
    if not check:
        print(f"wrote {page}")
