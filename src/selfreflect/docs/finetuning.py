"""docs/finetuning.md and its figures from what ``selfreflect bench finetuning`` recorded, one
record per finetuning config (docs/finetuning/<run>.json): each run's training loss (and GRPO's
reward and its cost per step), scores against greedy, the adapters' teacher and the other arms
of their seed, a positive control's verdict, what the run can show, and its time and memory.

    selfreflect docs finetuning [--check]
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
import numpy as np
import pandas as pd

from selfreflect.bench.finetuning import RECORDS, record_path, rows_path
from selfreflect.docs import publish, render
from selfreflect.docs.tables import p_text, table

DOCS = Path("docs")
DOC = DOCS / "finetuning.md"
FIRST = "finetune"  # config/finetune.yaml's run: the page's first section
CONFIGS = "config/finetune*.yaml"  # the shipped finetuning configs


def recompute(result: dict, rows: pd.DataFrame) -> list[str]:
    """The record's main table built again from its per-question ``rows`` under its config:
    one line per recorded value that differs (naming the record, row and column)."""
    from selfreflect.bench.science_record import table_differences
    from selfreflect.config import load_config
    from selfreflect.report.catalog import report_for

    config = load_config(result["config_path"])
    report = report_for("main")
    built = report.build(rows, **report.arguments(config))
    recorded = pd.DataFrame(result["main"])
    name = record_path(config["run"])
    return table_differences(name, recorded, built, ["strategy"])


def figure_path(run: str) -> Path:
    """The run's training figure (loss per method, GRPO's reward), beside its record."""
    return RECORDS / f"{run}.png"


def read_records() -> dict[str, dict]:
    """Every finetuning record by run name: config/finetune.yaml's first, then by name."""
    from selfreflect.fileio import read_json

    runs = sorted(path.stem for path in RECORDS.glob("*.json"))
    runs.sort(key=lambda run: run != FIRST)
    return {run: read_json(record_path(run)) for run in runs}


def planned(records: dict[str, dict]) -> list[str]:
    """The shipped finetuning configs (``CONFIGS``) that no record has run yet."""
    recorded = {result["config_path"] for result in records.values()}
    return sorted(p.as_posix() for p in Path().glob(CONFIGS) if p.as_posix() not in recorded)


def by_method(loss: dict[str, list[dict]]) -> dict[str, dict[int, list[dict]]]:
    """The per-step log of each adapter (``sft-seed2``) grouped by method, then seed."""
    from selfreflect.config import finetuned

    grouped: dict[str, dict[int, list[dict]]] = {}
    for adapter, steps in loss.items():
        method, seed = finetuned(f"finetuned_{adapter}")
        grouped.setdefault(method, {})[seed] = steps
    return grouped


def is_grpo(adapter: str) -> bool:
    """Whether ``adapter`` (``grpo-seed0``) was trained with GRPO."""
    from selfreflect.config import finetuned

    return finetuned(f"finetuned_{adapter}")[0] == "grpo"


def loss_header(adapters: dict[str, list[int]]) -> str:
    """The loss column's header: per epoch, and over all steps for GRPO where it trained."""
    return "mean loss per epoch" + " (GRPO: over all its steps)" * ("grpo" in adapters)


def epoch_means(loss: list[dict], epochs: int) -> list[float]:
    """The mean training loss of each epoch (its equal share of the steps)."""
    steps = pd.DataFrame(loss)["loss"].to_numpy()
    return [float(part.mean()) for part in np.array_split(steps, epochs)]


def training_figure(result: dict, path: Path) -> None:
    """Each method's training loss per optimiser step and GRPO's mean reward per step, one
    line per seed, a small PNG."""
    from selfreflect.plotting import pyplot

    plt = pyplot()

    epochs = result["config"]["training"]["epochs"]
    panels = [(m, "loss", f"{m.upper()} loss") for m in by_method(result["loss"]) if m != "grpo"]
    panels += [("grpo", "reward", "GRPO mean reward")] if result.get("rewards") else []
    figure, axes_row = plt.subplots(
        1, len(panels), figsize=(4.5 * len(panels), 2.6), dpi=100, squeeze=False
    )
    for axes, (method, column, label) in zip(axes_row[0], panels, strict=True):
        logs = result["rewards"] if column == "reward" else result["loss"]
        for seed, steps in by_method(logs)[method].items():
            frame = pd.DataFrame(steps)
            axes.plot(frame["step"], frame[column], marker="o", markersize=2, label=f"seed {seed}")
        title = f"{method.upper()}: training {column}" + (
            f" ({epochs} epochs)" * (method != "grpo")
        )
        axes.set(xlabel="optimiser step", ylabel=label, title=title)
        axes.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def _interval(row: dict, estimate: str, low: str, high: str) -> str:
    if row.get(estimate) is None:
        return "–"
    return f"{row[estimate]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"


def _p(value: float | None, level: float) -> str:
    """A p-value as the table shows it: "<0.001", else to two significant digits or more
    where needed to show its side of the plan's ``level`` (:func:`p_text`)."""
    if value is None:
        return "–"
    return "<0.001" if value < 0.001 else p_text(value, level)


def _verdict(row: dict, other: str, prefix: str, level: float) -> str:
    """One clause on a finetuned strategy against ``other``: its difference and the table's
    verdict (the plan's corrected test at ``level``)."""
    diff, verdict = row.get(f"{prefix}diff"), row.get(f"{prefix}verdict")
    if diff is None or verdict is None:
        return f"has no paired test against {other}"
    side = "lower (better)" if diff < 0 else "higher (worse)"
    adjusted = _p(row[f"{prefix}p_adjusted"], level)
    return f"is {abs(diff):.3f} {side} than {other} (adjusted p = {adjusted}: {verdict})"


def detectable_difference(rows: list[dict], plan: dict, prefix: str = "") -> float | None:
    """The paired difference the table would call significant with 80 % power, roughly: the
    median standard error of the finetuned strategies' differences (from their bootstrap
    intervals, taken as 95 % normal ones) times the z-values of the strictest Holm step (the
    family's size) and of the power."""
    from scipy.stats import norm

    tested = [r for r in rows if r.get("teacher") and r.get(f"{prefix}diff") is not None]
    if not tested:
        return None
    errors = [(r[f"{prefix}diff_high"] - r[f"{prefix}diff_low"]) / (2 * 1.96) for r in tested]
    family = [r for r in rows if r.get(f"{prefix}p_value") is not None]
    level = plan["level"] / len(family)
    return float(np.median(errors) * (norm.ppf(1 - level / 2) + norm.ppf(0.8)))


def _verdict_counts(rows: list[dict], prefix: str) -> str:
    counts = Counter(r[f"{prefix}verdict"] for r in rows if r.get(f"{prefix}verdict"))
    return ", ".join(f"{verdict} {n}" for verdict, n in sorted(counts.items()))


def _seed_counts(adapters: dict[str, list[int]]) -> str:
    counts = sorted({len(seeds) for seeds in adapters.values()})
    return " or ".join(map(str, counts)) + " seed" + ("" if counts == [1] else "s")


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _comparison(row: dict, prefix: str, level: float) -> list[str]:
    """A comparison's cells: difference with CI, p, adjusted p and verdict."""
    return [
        _interval(row, f"{prefix}diff", f"{prefix}diff_low", f"{prefix}diff_high"),
        _p(row.get(f"{prefix}p_value"), level),
        _p(row.get(f"{prefix}p_adjusted"), level),
        row.get(f"{prefix}verdict") or "–",
    ]


def score_table(result: dict) -> str:
    """Each strategy's score, its summaries' length, and its tests against the baseline and,
    where it has one, its teacher."""
    rows, level = result["main"], result["config"]["plan"]["level"]
    words = result.get("summary_words")  # the records before 2026-12-04 have none
    baseline = result["config"]["baseline"]
    header = ["strategy", "n", *(["words"] if words else []), "score", f"vs {baseline}"]
    header += ["p", "adjusted p", "verdict"]
    teachers = any(row.get("teacher") for row in rows)
    header += ["vs teacher", "p", "adjusted p", "verdict"] if teachers else []
    body = []
    for row in rows:
        cells = [row["strategy"], row["n_scored"]]
        cells += [_number(words.get(row["strategy"]), 1)] if words else []
        cells += [_interval(row, "mean", "ci_low", "ci_high"), *_comparison(row, "", level)]
        body.append(cells + (_comparison(row, "teacher_", level) if teachers else []))
    return table(header, body, "l" * len(header))


def arm_table(result: dict) -> str | None:
    """Each adapter against the other methods' adapters of its seed (``vs_<method>_*``), or
    None where the run compares none."""
    rows, level = result["main"], result["config"]["plan"]["level"]
    methods = sorted(
        {
            key[3:]
            for row in rows
            for key in row
            if key.startswith("vs_") and f"{key}_verdict" in row
        }
    )
    compared = [row for row in rows if any(row.get(f"vs_{m}") for m in methods)]
    if not compared:
        return None
    header = ["strategy", "against", "difference", "p", "adjusted p", "verdict"]
    body = [
        [row["strategy"], row[f"vs_{m}"], *_comparison(row, f"vs_{m}_", level)]
        for row in compared
        for m in methods
        if row.get(f"vs_{m}")
    ]
    return table(header, body, "l" * len(header))


def reward_table(result: dict) -> str | None:
    """GRPO's cost and reward per adapter, from its per-step log; None without GRPO."""
    if not result.get("rewards"):
        return None
    body = []
    for adapter, steps in result["rewards"].items():
        frame = pd.DataFrame(steps)
        body.append(
            [
                adapter,
                len(frame),
                f"{frame['reward'].iloc[0]:.3f} -> {frame['reward'].iloc[-1]:.3f}",
                _number(frame["step_time"].mean(), 1),
                _number(frame["reward_cpu_s"].mean(), 1),
                _number(frame["reward_cpu_s_per_summary"].mean(), 1),
                int(frame["unscored"].sum()),
                f"{frame['summary_words'].iloc[0]:.1f} -> {frame['summary_words'].iloc[-1]:.1f}",
            ]
        )
    header = ["adapter", "steps", "mean reward, first -> last step", "s per step"]
    header += ["reward CPU-s per step", "per summary", "unscored", "summary words, first -> last"]
    return table(header, body, "l" * len(header))


def control(result: dict) -> dict | None:
    """The positive control (``report.plan.control_min_adapters``), if any: its verdict, the
    line that states it, and the teacher's and its adapters' mean summary length (words)."""
    from selfreflect.claims import finetuning_control

    sizes = result["config"]
    needed = sizes["plan"].get("control_min_adapters")
    if needed is None:
        return None
    teacher, main = sizes["teacher"], pd.DataFrame(result["main"])
    found = finetuning_control(main, teacher, sizes["baseline"], needed)
    words = result.get("summary_words", {})
    taught = main.loc[main["teacher"] == teacher, "strategy"]
    return {
        "verdict": found.verdict,
        "line": f"**The positive control {found.verdict}**: {found.numbers}.",
        "teacher_words": words.get(teacher),
        "adapter_words": float(np.mean([words[s] for s in taught])) if words else None,
    }


def invocation_table(run: dict) -> str | None:
    """What the measured invocation took, or None where none measured the run (it spanned
    sittings under plain Snakemake)."""
    if "seconds" not in run:
        return None
    rows = [
        ["Snakemake wall time", f"{run['seconds'] / 60:.1f} min ({run['seconds']:.0f} s)"],
        ["CPU time, all processes", f"{run['cpu_seconds'] / 60:.1f} min"],
        ["peak memory (RSS of Snakemake and all its jobs)", f"{run['peak_rss_mib']} MiB"],
        ["exit status", run["returncode"]],
        ["CPU cores / mean 1-min load average", f"{run['cpus']} / {run['mean_load']}"],
    ]
    return table(["measure", "value"], rows, "ll")


def _listed(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def section(run: str, result: dict) -> str:
    """One record's section of the page."""
    run_entry, sizes, rows = result["run"], result["config"], result["main"]
    epochs = sizes["training"]["epochs"]
    losses = [  # GRPO's steps are no epochs: one mean over them
        [
            adapter,
            len(steps),
            ", ".join(f"{m:.3f}" for m in epoch_means(steps, 1 if is_grpo(adapter) else epochs)),
        ]
        for adapter, steps in result["loss"].items()
    ]
    jobs = [
        [
            job["rule"],
            job["jobs"],
            _number(job["wall_s"] / 60, 1),
            _number(job["cpu_s"] / 60, 1),
            _number(job["peak_rss_mib"], 0),
        ]
        for job in result["jobs"]
    ]
    adapters = {method: list(seeds) for method, seeds in by_method(result["loss"]).items()}
    return render(
        "finetuning_run.md.j2",
        name=run,
        rows=rows_path(run).as_posix() if rows_path(run).is_file() else None,
        figure=figure_path(run).relative_to(DOCS),
        config_path=result["config_path"],
        commit=result.get("commit"),  # none in the records made before 2026-12-04
        run=run_entry,
        sizes=sizes,
        plan=sizes["plan"],
        references=[
            name
            for name in sizes["plan"].get("references", [])
            if name in {row["strategy"] for row in rows}
        ],
        adapters=adapters,
        methods=_listed([method.upper() for method in adapters]),
        judges=", ".join(f"`{judge}`" for judge in sizes["evaluation_judges"]),
        losses=table(["adapter", "optimiser steps", loss_header(adapters)], losses, "lll"),
        scores=score_table(result),
        words=bool(result.get("summary_words")),
        arms=arm_table(result),
        rewards=reward_table(result),
        control=control(result),
        finetuned=[row for row in rows if row.get("teacher")],
        greedy_mde=detectable_difference(rows, sizes["plan"]),
        teacher_mde=detectable_difference(rows, sizes["plan"], "teacher_"),
        seed_counts=_seed_counts(adapters),
        jobs=table(["rule", "jobs", "wall min", "CPU min", "peak MiB"], jobs, "lllll"),
        measures=invocation_table(run_entry),
        verdict=_verdict,
        verdict_counts=_verdict_counts,
        number=_number,
    )


def text(records: dict[str, dict]) -> str:
    """docs/finetuning.md from the recorded runs."""
    sections = [section(run, result) for run, result in records.items()]
    controls = {run: control(result) for run, result in records.items()}
    return render(
        "finetuning.md.j2",
        records=records,
        planned=planned(records),
        sections=sections,
        controls=controls,
    )


@click.command()
@click.option("--check", is_flag=True, help="Fail if docs/finetuning.md differs from its render.")
def finetuning(check: bool) -> None:
    """Render docs/finetuning.md and its figures from docs/finetuning/*.json; with --check,
    also build each record's main table again from its per-question scores."""
    records = read_records()
    if not records:
        raise click.ClickException(
            f"{RECORDS}: no finetuning record; run selfreflect bench finetuning"
        )
    page = text(records)
    if check:
        differences = [
            line
            for run, result in records.items()
            if rows_path(run).is_file()
            for line in recompute(result, pd.read_parquet(rows_path(run)))
        ]
        if differences:
            raise click.ClickException(f"{len(differences)} values differ: {differences[0]}")
    if not check:
        for run, result in records.items():
            training_figure(result, figure_path(run))
    publish(DOC, page, check, "docs finetuning")
