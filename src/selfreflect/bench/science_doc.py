"""Render docs/science.md from the science run's records (docs/science/, kept by
``selfreflect bench science-record``), whatever the verdicts are; nothing is typed by hand. A
record made under another analysis plan than the config's is refused: its verdicts would not be
the plan's. Changes of plan after a run are listed, with date and reason, in
``docs/science/plan_changes.yaml``. The page is never written over one of the files it reads.

    selfreflect bench science-doc [--config config/science.yaml] [--records docs/science]
        [--out docs/science.md] [--check]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pandas as pd

from selfreflect.bench.outputs import refuse_overwriting_inputs
from selfreflect.bench.science_record import (
    CONFIG,
    OPTIONAL,
    RECORDS,
    default_records,
    read_records,
)
from selfreflect.config import load_config, summarized_datasets
from selfreflect.errors import InputError
from selfreflect.fileio import read_yaml, write_text

PLAN_CHANGES = "plan_changes.yaml"


def _verdict(passed: bool) -> str:
    return "**yes**" if passed else "**no**"


def _p(value: float) -> float:
    return float(f"{value:.2g}")


def _cell(value: object) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    """A Markdown table: text columns left-aligned, the rest right-aligned."""
    align = ["---" if isinstance(cell, str) else "---:" for cell in (rows[0] if rows else header)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(map(_cell, row)) + " |" for row in rows]


def _plan_changes(path: Path) -> list[dict[str, str]]:
    """The changes of plan listed in ``path`` (none if it is missing): a list of mappings of
    ``date``, ``change`` and ``reason`` text."""
    if not path.is_file():
        return []
    changes = read_yaml(path)
    fields = ("date", "change", "reason")
    if not isinstance(changes, list):
        raise InputError(f"{path}: expected a list of changes (date, change, reason)")
    for number, change in enumerate(changes, 1):
        if not isinstance(change, dict) or not all(isinstance(change.get(f), str) for f in fields):
            raise InputError(f"{path}: change {number}: needs date, change and reason as text")
    return changes


def _pairs(validation: pd.DataFrame) -> list[str]:
    header = ["judge", "pair type", "metric", "right / pairs", "fraction", "95 % Wilson CI"]
    header += ["p vs chance", "adjusted p", "above chance", "McNemar p vs SelfReflect"]
    header += ["adjusted"]
    rows = [
        [
            row.judge,
            row.pair_type,
            row.metric,
            f"{row.n_correct} / {row.n_pairs}",
            round(row.fraction, 2),
            f"[{row.ci_low:.2f}, {row.ci_high:.2f}]",
            _p(row.p_value_vs_chance),
            _p(row.p_adjusted_vs_chance),
            _verdict(row.verdict_vs_chance == "above chance") if row.n_pairs else "no pairs",
            "" if pd.isna(row.mcnemar_p_value) else _p(row.mcnemar_p_value),
            "" if pd.isna(row.mcnemar_p_adjusted) else _p(row.mcnemar_p_adjusted),
        ]
        for row in validation.itertuples()
    ]
    return _table(header, rows)


def _mc(mc: pd.DataFrame) -> list[str]:
    header = ["judge", "questions with a rho", "median per-question rho", "95 % bootstrap CI"]
    header += ["Wilcoxon p (rho > 0)", "verdict", "pooled rho (p)", "pooled verdict"]
    header += ["decides", "tracks W1", "truth agrees", "truth check"]
    rows = [
        [
            row.judge,
            f"{row.n_rho} ({row.n_rho_skipped} skipped)",
            round(row.median_rho, 2),
            f"[{row.median_rho_low:.2f}, {row.median_rho_high:.2f}]",
            _p(row.p_value),
            row.verdict,
            f"{row.pooled_rho:.2f} ({_p(row.pooled_p_value)})",
            row.pooled_verdict,
            row.decided_by,
            _verdict(row.tracks_w1 == "yes"),
            f"{row.n_truth_agree} / {row.n_truth_checked}",
            row.truth_check,
        ]
        for row in mc.itertuples()
    ]
    return _table(header, rows)


def _strategies(main: pd.DataFrame, baseline: str) -> list[str]:
    header = ["judge", "strategy", "family", "mean score (95 % CI)"]
    header += [f"difference to {baseline} (95 % CI)", "Wilcoxon p", "adjusted p", "verdict"]
    compared = main[main["strategy"] != baseline]
    rows = [
        [
            row.judge,
            row.strategy,
            row.family,
            f"{row.mean:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}]",
            f"{row.diff:+.4f} [{row.diff_low:+.4f}, {row.diff_high:+.4f}]",
            _p(row.p_value),
            _p(row.p_adjusted),
            row.verdict,
        ]
        for row in compared.itertuples()
    ]
    return _table(header, rows)


def _verdicts(tables: dict[str, pd.DataFrame], judges: list[str], baseline: str) -> list[str]:
    """One line per judge: what each study concludes (the sections below give the numbers)."""
    pairs = tables["validation"].query("metric == 'selfreflect' and n_pairs > 0")
    mc, main = tables.get("mc_study", pd.DataFrame(columns=OPTIONAL["mc_study"])), tables["main"]
    rows = []
    for judge in judges:
        own = pairs[pairs["judge"] == judge]
        above = own.loc[own["verdict_vs_chance"] == "above chance", "pair_type"].tolist()
        mine = mc[mc["judge"] == judge]
        ranked = main[(main["judge"] == judge) & (main["family"] == "strategies")]
        better = ranked.loc[ranked["verdict"] == "better", "strategy"].tolist()
        tested = ranked[ranked["strategy"] != baseline]
        rows.append(
            [
                judge,
                f"{len(above)} of {len(own)}" + (f" ({', '.join(above)})" if above else ""),
                _verdict((mine["tracks_w1"] == "yes").any()) if len(mine) else "not run",
                ", ".join(map(str, mine["truth_check"].dropna())) or "not run",
                f"{len(better)} of {len(tested)}" + (f" ({', '.join(better)})" if better else ""),
            ]
        )
    header = ["judge", "pair types above chance", "MC study tracks W1", "MC truth check"]
    return _table([*header, f"strategies better than {baseline}"], rows)


def _agreement(agreement: pd.DataFrame) -> list[str]:
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
    return _table(header, rows)


def _records_table(provenance: dict[str, Any], judges: list[str]) -> list[str]:
    """Each judge's recorded run: when, from which commit, its sizes and its judge jobs' time."""
    header = [
        "judge",
        "recorded",
        "commit",
        "questions",
        "N",
        "judge jobs",
        "job wall min",
        "CPU min",
    ]
    rows: list[list[object]] = []
    for judge, made in provenance.items():
        time = made["time"]
        rows.append(
            [
                judge,
                made["recorded"],
                f"`{made['commit'][:10]}`",
                ", ".join(f"{d} {n}" for d, n in made["questions"].items()),
                ", ".join(f"{d} {n}" for d, n in made["answers"].items()),
                time["jobs"],
                round(time["wall_s"] / 60, 1),
                round(time["cpu_s"] / 60, 1),
            ]
        )
    missing = [judge for judge in judges if judge not in provenance]
    return _table(header, rows + [[judge, "not yet run", *[""] * 6] for judge in missing])


def _plan(plan: dict[str, Any], changes: list[dict[str, str]]) -> list[str]:
    """The analysis plan (config ``report.plan``), fixed before the run, and its changes."""
    references = ", ".join(plan["references"]) or "none"
    lines = [
        "## Analysis plan",
        "",
        "Fixed in the config (`report.plan`) before the run; the tables' verdicts follow it.",
        "",
        f"- Families: a judge's pair types per metric (binomial test against chance); its "
        f"McNemar tests of each alternative metric against SelfReflect; its strategies' "
        f"comparisons with the baseline (references shown apart, each a family of its own: "
        f"{references}); each MC statistic alone.",
        f"- Correction: {plan['correction'].capitalize()} within each family; a verdict where "
        f"the adjusted p lies below {plan['level']:g}; intervals are unadjusted.",
        f"- A verdict needs at least {plan['min_pairs']} controlled pairs or "
        f"{plan['min_questions']} questions; fewer are left out of their family.",
        f"- The MC study's claim is decided by the {plan['mc_statistic'].replace('_', '-')} "
        "statistic; the other is reported with its own verdict.",
        f"- MC truth check: a question's truth agrees with its sampled answers when their "
        f"total variation is at most its expected sampling error + "
        f"{plan['truth_tolerance']:g}; the truth is accepted when at least "
        f"{plan['truth_min_share']:.0%} of the questions agree.",
        "",
        "Changes of plan after a run:",
        "",
    ]
    if not changes:
        return [*lines, "None.", ""]
    rows = [[c["date"], c["change"], c["reason"]] for c in changes]
    return [*lines, *_table(["date", "change", "reason"], rows), ""]


def render(config_path: Path, records: Path) -> str:
    """docs/science.md from the ``records`` of the run of ``config_path``."""
    config = load_config(config_path)
    plan, judges = config["report"]["plan"], config["judges"]
    provenance, tables = read_records(records, config)
    changes = _plan_changes(records / PLAN_CHANGES)
    free_form = summarized_datasets(config)
    baseline = config["report"]["baseline"]
    lines = [
        "# The benchmark's science on real models",
        "",
        "Rendered by `selfreflect bench science-doc` from the records under "
        f"`{records.as_posix()}/` "
        f"(each judge's run of `config/{config_path.name}`, kept by `selfreflect bench "
        f"science-record`; do not edit by hand). Subject and summariser: "
        f"{', '.join(config['subjects'])}; judges: {', '.join(judges)} (transformers on a CPU, "
        f"post-hoc temperature {config['scoring']['temperature']}, "
        f"`{config['scoring']['stopwords']}` stopwords). `pytest -m science` asserts on the "
        "same records.",
        "",
        *_plan(plan, changes),
        "## Runs",
        "",
        "Each judge's jobs (its judge pass and what is read off it), their wall and CPU minutes"
        " summed over the jobs (several run at once).",
        "",
        *_records_table(provenance, judges),
        "",
    ]
    if not provenance:
        return "\n".join([*lines, "No judge's run is recorded yet."]) + "\n"
    main = tables["main"][tables["main"]["dataset"].isin(free_form)]
    validation = tables["validation"][tables["validation"]["dataset"].isin(free_form)]
    free_form_tables = {**tables, "main": main, "validation": validation}
    lines += [
        "## Verdict",
        "",
        *_verdicts(free_form_tables, list(provenance), baseline),
        "",
        "## 1. Controlled pairs (paper Table 1)",
        "",
        f"Free-form questions (`{'`, `'.join(free_form)}`); a pair is right when the metric "
        "ranks the better summary first (ties are wrong). Verdict: the binomial p against chance "
        "(0.5), adjusted over the judge's pair types, lies below the plan's level. The McNemar "
        "test compares each alternative metric with SelfReflect on the same pairs (its own "
        "family).",
        "",
        *_pairs(validation),
        "",
    ]
    if "mc_study" in tables:
        lines += [
            "## 2. Multiple-choice study",
            "",
            "MMLU-format questions. The truth is the subject's exact distribution over the "
            "choices (first-token probabilities of the choice letters), tempered at "
            f"{', '.join(map(str, config['report']['mc_temperatures']))} into stated-"
            "distribution summaries. Per question, the Spearman rho of SelfReflect and the true "
            "W1 over the temperatures (one-sided Wilcoxon test of its median), and the paper's "
            "rho over all summaries pooled, each with its verdict; the plan names the one that "
            "decides. The truth check compares each question's truth with the shares of the "
            "choices its sampled answers name. The simulated power of this design is in "
            "[power.md](power.md).",
            "",
            *_mc(tables["mc_study"]),
            "",
        ]
    lines += [
        "## 3. Strategies compared",
        "",
        f"Paired differences of SelfReflect (lower is better) to {baseline} on the questions "
        "every strategy scored; verdict by the Wilcoxon p adjusted within the family "
        "(`strategies`; a reference is a family of its own).",
        "",
        *_strategies(main, baseline),
        "",
    ]
    if "backend_agreement" in tables:
        lines += [
            "## 4. The judge's backends agree",
            "",
            "Scores of the same summaries on each backend against the configured one.",
            "",
            *_agreement(tables["backend_agreement"]),
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def default_out(config: Path) -> Path:
    """The page of ``config``'s records unless ``--out`` says: ``docs/science.md`` for the
    science run's config, ``docs/science-<name>.md`` for another (beside its records)."""
    return Path(f"{default_records(config)}.md")


def _inputs(config: Path, records: Path) -> list[Path]:
    """The files :func:`render` reads: the config and every file of the records."""
    return [config, records / PLAN_CHANGES, *records.glob("*/*")]


@click.command(help="Render docs/science.md from the science run's records.")
@CONFIG
@RECORDS
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    help="The page [default: docs/science.md for science.yaml, else docs/science-NAME.md].",
)
@click.option("--check", is_flag=True, help="Fail if --out differs from what it renders.")
def science_doc(config: str, records: str | None, out: str | None, check: bool) -> None:
    folder = Path(records) if records else default_records(Path(config))
    page = Path(out) if out else default_out(Path(config))
    if not check:
        refuse_overwriting_inputs([page], _inputs(Path(config), folder))
    text = render(Path(config).resolve(), folder)
    if not check:
        write_text(page, text)
        print(f"wrote {page}")
    elif not page.is_file() or page.read_text(encoding="utf-8") != text:
        raise click.ClickException(f"{page} is not what the records render: run without --check")
