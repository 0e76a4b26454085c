"""Render docs/science.md from the science run's report (config/science.yaml).

Reads what `snakemake --configfile config/science.yaml` (or `dvc repro` of its stages) wrote
under reports/science/ and benchmarks/science/, the same tables tests/test_science.py asserts
on, and writes the verdict whatever it shows; nothing is typed by hand.

    selfreflect bench science-doc [--config config/science.yaml] [--out docs/science.md]
"""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from selfreflect.config import answer_settings, load_config, summarized_datasets
from selfreflect.fileio import write_text
from selfreflect.report.performance import read_benchmarks


def _verdict(passed: bool) -> str:
    return "**yes**" if passed else "**no**"


def _table(header: list[str], rows: list[list[object]]) -> list[str]:
    """A Markdown table: text columns left-aligned, the rest right-aligned."""
    align = ["---" if isinstance(cell, str) else "---:" for cell in (rows[0] if rows else header)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    return lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows]


def _pairs(validation: pd.DataFrame, datasets: list[str]) -> list[str]:
    header = ["judge", "pair type", "metric", "right / pairs", "fraction", "95 % Wilson CI"]
    header += ["p vs chance", "adjusted p", "above chance"]
    rows = [
        [
            row.judge,
            row.pair_type,
            row.metric,
            f"{row.n_correct} / {row.n_pairs}",
            round(row.fraction, 2),
            f"[{row.ci_low:.2f}, {row.ci_high:.2f}]",
            float(f"{row.p_value_vs_chance:.2g}"),
            float(f"{row.p_adjusted_vs_chance:.2g}"),
            _verdict(row.verdict_vs_chance == "above chance") if row.n_pairs else "no pairs",
        ]
        for row in validation[validation["dataset"].isin(datasets)].itertuples()
    ]
    return _table(header, rows)


def _mc(mc: pd.DataFrame, datasets: list[str]) -> list[str]:
    header = ["judge", "questions with a rho", "skipped", "median per-question rho"]
    header += ["95 % bootstrap CI", "Wilcoxon p (rho > 0)", "tracks W1", "pooled rho (p)"]
    header += ["pooled verdict", "truth"]
    rows = [
        [
            row.judge,
            row.n_rho,
            row.n_rho_skipped,
            round(row.median_rho, 2),
            f"[{row.median_rho_low:.2f}, {row.median_rho_high:.2f}]",
            float(f"{row.p_value:.2g}"),
            _verdict(row.verdict == "orders as W1"),
            f"{row.pooled_rho:.2f} ({row.pooled_p_value:.2g})",
            row.pooled_verdict,
            row.truth,
        ]
        for row in mc[mc["dataset"].isin(datasets)].itertuples()
    ]
    return _table(header, rows)


def _strategies(main: pd.DataFrame, baseline: str, datasets: list[str]) -> list[str]:
    header = ["judge", "strategy", "mean score (95 % CI)", f"difference to {baseline} (95 % CI)"]
    header += ["Wilcoxon p", "adjusted p", "better"]
    compared = main[main["dataset"].isin(datasets) & (main["strategy"] != baseline)]
    rows = [
        [
            row.judge,
            row.strategy,
            f"{row.mean:.4f} [{row.ci_low:.4f}, {row.ci_high:.4f}]",
            f"{row.diff:+.4f} [{row.diff_low:+.4f}, {row.diff_high:+.4f}]",
            float(f"{row.p_value:.2g}"),
            float(f"{row.p_adjusted:.2g}"),
            _verdict(row.verdict == "better"),
        ]
        for row in compared.itertuples()
    ]
    return _table(header, rows)


def _verdicts(
    read: dict[str, pd.DataFrame], free_form: list[str], choices: list[str], baseline: str
) -> list[str]:
    """One line per judge: what each study concludes (the sections below give the numbers)."""
    pairs = read["validation"].query("metric == 'selfreflect' and n_pairs > 0")
    pairs = pairs[pairs["dataset"].isin(free_form)]
    mc = read["mc_study"][read["mc_study"]["dataset"].isin(choices)]
    main = read["main"][read["main"]["dataset"].isin(free_form)]
    rows = []
    for judge in dict.fromkeys(read["main"]["judge"]):
        own = pairs[pairs["judge"] == judge]
        above = own.loc[own["verdict_vs_chance"] == "above chance", "pair_type"].tolist()
        tracks = mc[(mc["judge"] == judge) & (mc["verdict"] == "orders as W1")]
        better = main[(main["judge"] == judge) & (main["verdict"] == "better")]["strategy"].tolist()
        rows.append(
            [
                judge,
                f"{len(above)} of {len(own)}" + (f" ({', '.join(above)})" if above else ""),
                _verdict(not tracks.empty),
                ", ".join(better) or "none",
            ]
        )
    header = ["judge", "pair types above chance", "MC study tracks W1"]
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


JUDGE_JOBS = (  # each judge's jobs among the benchmark files (benchmarks/<run>/<rule>/...)
    "judge/*/*/{judge}/*.tsv",
    "report_alt_metrics/*/*/{judge}.tsv",
    "report_agreement_scores/*/*/{judge}.tsv",
)


def _timing(benchmarks: Path, judges: list[str]) -> list[str]:
    """Wall minutes of each judge's jobs (judge pass, alternative metrics, backends compared)
    and of all jobs."""
    rows = []
    for judge in judges:
        files = [path for job in JUDGE_JOBS for path in benchmarks.glob(job.format(judge=judge))]
        wall = sum(pd.read_csv(path, sep="\t")["s"].iloc[-1] for path in files)  # last repeat
        rows.append([judge, len(files), round(wall / 60, 1)])
    every = read_benchmarks([benchmarks])
    rows.append(["all jobs of the run", len(every), round(every["wall_s"].sum() / 60, 1)])
    return _table(["judge", "jobs", "wall minutes"], rows)


def _plan(plan: dict) -> str:
    """The analysis plan (config ``report.plan``), fixed before the run, above its results."""
    return (
        f"**Analysis plan** (`report.plan` of the config, fixed before the run): "
        f"{plan['correction'].capitalize()} correction within each family of tests (a judge's "
        f"pair types; its comparisons with the baseline; each MC statistic alone), verdict "
        f"where the adjusted p is below {plan['level']:g}, and only on at least "
        f"{plan['min_pairs']} pairs or {plan['min_questions']} questions."
    )


def render(config_path: Path) -> str:
    """docs/science.md of the run of ``config_path`` (in the project holding ``config/``)."""
    config = load_config(config_path)
    root, run = config_path.parents[1], config["run"]
    tables = root / "reports" / run / "tables"
    names = ("validation", "mc_study", "main")
    read = {name: pd.read_csv(tables / f"{name}.csv") for name in names}
    agreement = tables / "backend_agreement.csv"
    subject = ", ".join(config["subjects"])
    free_form = summarized_datasets(config)
    choices = [name for name, spec in config["datasets"].items() if spec["source"] == "mmlu"]
    n_mc = ", ".join(str(answer_settings(config, name)["num_answers"]) for name in choices)
    lines = [
        "# The benchmark's science on real models",
        "",
        f"Rendered by `selfreflect bench science-doc` from `reports/{run}/` (the run of "
        f"`config/{config_path.name}`; do not edit by hand). Subject and summariser: "
        f"{subject}; judges: {', '.join(config['judges'])} (transformers on a CPU, post-hoc "
        f"temperature {config['scoring']['temperature']}, `{config['scoring']['stopwords']}` "
        "stopwords). `pytest -m science` asserts on the same tables.",
        "",
        _plan(config["report"]["plan"]),
        "",
        "## Verdict",
        "",
        *_verdicts(read, free_form, choices, config["report"]["baseline"]),
        "",
        "## 1. Controlled pairs (paper Table 1)",
        "",
        f"Free-form questions (`{'`, `'.join(free_form)}`, N = "
        f"{config['answers']['num_answers']}); a pair is"
        " right when the metric ranks the better summary first (ties are wrong). Verdict: the"
        " binomial p against chance (0.5), adjusted over the judge's pair types (the report's"
        " analysis plan, `report.plan`), lies below the plan's level.",
        "",
        *_pairs(read["validation"], free_form),
        "",
        "## 2. Multiple-choice study",
        "",
        f"MMLU-format questions (`{'`, `'.join(choices)}`, N = {n_mc} test answers). The truth is "
        "the "
        "subject's exact distribution over the choices (first-token probabilities of the choice "
        "letters; `truth`), tempered at "
        f"{', '.join(map(str, config['report']['mc_temperatures']))} into stated-distribution "
        "summaries. Per question, the Spearman rho of SelfReflect and the true W1 over the "
        "temperatures; verdict: the one-sided Wilcoxon test of the per-question rho lies below "
        "the plan's level (it decides); the paper's pooled rho has its own verdict. The "
        "simulated power of this design is in "
        "[power.md](power.md).",
        "",
        *_mc(read["mc_study"], choices),
        "",
        "## 3. Strategies compared",
        "",
        "Paired differences of SelfReflect (lower is better) on the questions every strategy "
        "scored; verdict: the Wilcoxon p, adjusted over the judge's comparisons with the "
        "baseline, lies below the plan's level and the difference is negative.",
        "",
        *_strategies(read["main"], config["report"]["baseline"], free_form),
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
        *_timing(root / "benchmarks" / run, config["judges"]),
    ]
    return "\n".join(lines) + "\n"


@click.command(help=__doc__.split("\n\n")[0])
@click.option(
    "--config", type=click.Path(dir_okay=False), default="config/science.yaml", show_default=True
)
@click.option(
    "--out", type=click.Path(dir_okay=False), default="docs/science.md", show_default=True
)
def science_doc(config: str, out: str) -> None:
    write_text(out, render(Path(config).resolve()))
    print(f"wrote {out}")
