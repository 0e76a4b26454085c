"""Render docs/science.md from the science run's report (config/science.yaml).

Reads what `snakemake --configfile config/science.yaml` (or `dvc repro` of its stages) wrote
under reports/science/ and benchmarks/science/, the same tables tests/test_science.py asserts
on, and writes the verdict whatever it shows; nothing is typed by hand.

    python scripts/science_evidence.py [--config config/science.yaml] [--out docs/science.md]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from selfreflect.config import load_config
from selfreflect.fileio import write_text
from selfreflect.report.tables import read_benchmarks

REPO = Path(__file__).resolve().parents[1]
FREE_FORM, MULTIPLE_CHOICE = "real", "real_mmlu"


def _verdict(passed: bool) -> str:
    return "**yes**" if passed else "**no**"


def _pairs(validation: pd.DataFrame) -> list[str]:
    lines = [
        "| judge | pair type | metric | right / pairs | fraction | 95 % Wilson CI | p vs chance |"
        " above chance |",
        "|---|---|---|---:|---:|---|---:|---|",
    ]
    rows = validation[validation["dataset"] == FREE_FORM]
    for row in rows.itertuples():
        lines.append(
            f"| {row.judge} | {row.pair_type} | {row.metric} | {row.n_correct} / {row.n_pairs} |"
            f" {row.fraction:.2f} | [{row.ci_low:.2f}, {row.ci_high:.2f}] |"
            f" {row.p_value_vs_chance:.2g} | {_verdict(row.ci_low > 0.5)} |"
        )
    return lines


def _mc(mc: pd.DataFrame) -> list[str]:
    lines = [
        "| judge | questions (rho / skipped) | median per-question rho | 95 % bootstrap CI |"
        " Wilcoxon p (rho > 0) | pooled rho (p) | truth | tracks W1 |",
        "|---|---:|---:|---|---:|---|---|---|",
    ]
    for row in mc[mc["dataset"] == MULTIPLE_CHOICE].itertuples():
        lines.append(
            f"| {row.judge} | {row.n_rho} / {row.n_rho_skipped} | {row.median_rho:.2f} |"
            f" [{row.median_rho_low:.2f}, {row.median_rho_high:.2f}] | {row.p_value:.2g} |"
            f" {row.pooled_rho:.2f} ({row.pooled_p_value:.2g}) | {row.truth} |"
            f" {_verdict(row.median_rho_low > 0 and row.p_value < 0.05)} |"
        )
    return lines


def _strategies(main: pd.DataFrame, baseline: str) -> list[str]:
    lines = [
        f"| judge | strategy | mean score (95 % CI) | difference to {baseline} (95 % CI) |"
        " Wilcoxon p | better |",
        "|---|---|---|---|---:|---|",
    ]
    rows = main[(main["dataset"] == FREE_FORM) & (main["strategy"] != baseline)]
    for row in rows.itertuples():
        lines.append(
            f"| {row.judge} | {row.strategy} | {row.mean:.4f} [{row.ci_low:.4f}, "
            f"{row.ci_high:.4f}] | {row.diff:+.4f} [{row.diff_low:+.4f}, {row.diff_high:+.4f}] |"
            f" {row.p_value:.2g} | {_verdict(row.diff_high < 0)} |"
        )
    return lines


def _agreement(agreement: pd.DataFrame) -> list[str]:
    lines = ["| judge | backend | summaries | max abs difference | mean abs difference |"]
    lines.append("|---|---|---:|---:|---:|")
    for row in agreement.itertuples():
        lines.append(
            f"| {row.judge} | {row.backend} | {row.n_summaries} | {row.max_abs_diff:.1e} |"
            f" {row.mean_abs_diff:.1e} |"
        )
    return lines


def _timing(benchmarks: Path, judges: list[str]) -> list[str]:
    """Wall seconds of each judge's jobs (judge pass and alternative metrics) and in all."""
    lines = ["| judge | judge-pass and rating jobs, wall s |", "|---|---:|"]
    for judge in judges:
        roots = [benchmarks / rule for rule in ("score_shard", "alt_metrics")]
        jobs = [path for root in roots for path in root.rglob(f"{judge}/*.tsv")]
        jobs += [path for root in roots for path in root.rglob(f"{judge}.tsv")]
        wall = sum(pd.read_csv(path, sep="\t")["s"].iloc[-1] for path in set(jobs))
        lines.append(f"| {judge} | {wall:.0f} |")
    total = read_benchmarks([benchmarks])["wall_s"].sum()
    return [*lines, "", f"All {len(read_benchmarks([benchmarks]))} jobs: {total / 60:.0f} min."]


def render(config_path: Path) -> str:
    config = load_config(config_path)
    run = config["run"]
    tables = REPO / "reports" / run / "tables"
    names = ("validation", "mc_study", "main")
    read = {name: pd.read_csv(tables / f"{name}.csv") for name in names}
    agreement = tables / "backend_agreement.csv"
    subject = ", ".join(config["subjects"])
    answers = {name: spec.get("answers") or {} for name, spec in config["datasets"].items()}
    n_mc = answers[MULTIPLE_CHOICE].get("num_answers", config["answers"]["num_answers"])
    lines = [
        "# The benchmark's science on real models",
        "",
        f"Rendered by `scripts/science_evidence.py` from `reports/{run}/` (the run of "
        f"`{config_path.relative_to(REPO)}`; do not edit by hand). Subject and summariser: "
        f"{subject}; judges: {', '.join(config['judges'])} (transformers on a CPU, post-hoc "
        f"temperature {config['scoring']['temperature']}, `{config['scoring']['stopwords']}` "
        "stopwords). `pytest -m science` asserts on the same tables.",
        "",
        "## 1. Controlled pairs (paper Table 1)",
        "",
        f"Free-form questions (`{FREE_FORM}`, N = {config['answers']['num_answers']}); a pair is"
        " right when the metric ranks the better summary first (ties are wrong). Verdict: the"
        " Wilson interval lies above chance (0.5).",
        "",
        *_pairs(read["validation"]),
        "",
        "## 2. Multiple-choice study",
        "",
        f"MMLU-format questions (`{MULTIPLE_CHOICE}`, N = {n_mc} test answers). The truth is the "
        "subject's exact distribution over the choices (first-token probabilities of the choice "
        "letters; `truth`), tempered at "
        f"{', '.join(map(str, config['report']['mc_temperatures']))} into stated-distribution "
        "summaries. Per question, the Spearman rho of SelfReflect and the true W1 over the "
        "temperatures; verdict: the bootstrap interval of the median lies above 0 and the "
        "one-sided Wilcoxon test rejects at 5 %. The simulated power of this design is in "
        "[power.md](power.md).",
        "",
        *_mc(read["mc_study"]),
        "",
        "## 3. Strategies compared",
        "",
        "Paired differences of SelfReflect (lower is better) on the questions every strategy "
        "scored; verdict: the interval lies below 0.",
        "",
        *_strategies(read["main"], config["report"]["baseline"]),
        "",
    ]
    if agreement.is_file():
        lines += [
            "## 4. The judge's backends agree",
            "",
            "Scores of the same summaries on each backend against the configured one.",
            "",
            *_agreement(pd.read_csv(agreement)),
            "",
        ]
    lines += [
        "## Time",
        "",
        *_timing(REPO / "benchmarks" / run, config["judges"]),
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=REPO / "config" / "science.yaml")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "science.md")
    args = parser.parse_args()
    write_text(args.out, render(args.config.resolve()))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
