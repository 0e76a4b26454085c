"""docs/finetuning.md and its figure docs/finetuning_loss.png from what ``selfreflect bench
finetuning`` recorded (docs/finetuning.json): the finetuned summarisers' training loss, scores
against greedy and their teacher, what the run can show, and its time and memory.

    selfreflect docs finetuning [--check]
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click
import numpy as np
import pandas as pd

from selfreflect.docs import publish, render
from selfreflect.docs.tables import p_text, table

DOCS = Path("docs")
JSON = DOCS / "finetuning.json"
DOC = DOCS / "finetuning.md"
FIGURE = DOCS / "finetuning_loss.png"


def by_method(loss: dict[str, list[dict]]) -> dict[str, dict[int, list[dict]]]:
    """The loss per adapter (``sft-seed2``) grouped by method, then seed."""
    from selfreflect.config import finetuned

    grouped: dict[str, dict[int, list[dict]]] = {}
    for adapter, steps in loss.items():
        method, seed = finetuned(f"finetuned_{adapter}")
        grouped.setdefault(method, {})[seed] = steps
    return grouped


def epoch_means(loss: list[dict], epochs: int) -> list[float]:
    """The mean training loss of each epoch (its equal share of the steps)."""
    steps = pd.DataFrame(loss)["loss"].to_numpy()
    return [float(part.mean()) for part in np.array_split(steps, epochs)]


def loss_figure(loss: dict[str, list[dict]], epochs: int, path: Path) -> None:
    """Each method's training loss per optimiser step, one line per seed, a small PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = by_method(loss)
    figure, panels = plt.subplots(
        1, len(methods), figsize=(4.5 * len(methods), 2.6), dpi=100, squeeze=False
    )
    for axes, (method, seeds) in zip(panels[0], methods.items(), strict=True):
        for seed, steps in seeds.items():
            frame = pd.DataFrame(steps)
            axes.plot(frame["step"], frame["loss"], marker="o", markersize=2, label=f"seed {seed}")
        axes.set(
            xlabel="optimiser step",
            ylabel=f"{method.upper()} loss",
            title=f"{method.upper()}: training loss ({epochs} epochs)",
        )
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


def text(result: dict) -> str:
    """docs/finetuning.md from the recorded run."""
    run, sizes, rows = result["run"], result["config"], result["main"]
    epochs = sizes["training"]["epochs"]
    losses = [
        [adapter, len(steps), ", ".join(f"{m:.3f}" for m in epoch_means(steps, epochs))]
        for adapter, steps in result["loss"].items()
    ]
    level = sizes["plan"]["level"]
    header = ["strategy", "n", "score", "vs greedy", "p", "adjusted p", "verdict"]
    header += ["vs teacher", "p", "adjusted p", "verdict"]
    scores = [
        [
            row["strategy"],
            row["n_scored"],
            _interval(row, "mean", "ci_low", "ci_high"),
            _interval(row, "diff", "diff_low", "diff_high"),
            _p(row["p_value"], level),
            _p(row.get("p_adjusted"), level),
            row.get("verdict") or "–",
            _interval(row, "teacher_diff", "teacher_diff_low", "teacher_diff_high"),
            _p(row.get("teacher_p_value"), level),
            _p(row.get("teacher_p_adjusted"), level),
            row.get("teacher_verdict") or "–",
        ]
        for row in rows
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
    measures = [
        ["Snakemake wall time", f"{run['seconds'] / 60:.1f} min ({run['seconds']:.0f} s)"],
        ["CPU time, all processes", f"{run['cpu_seconds'] / 60:.1f} min"],
        ["peak memory (RSS of Snakemake and all its jobs)", f"{run['peak_rss_mib']} MiB"],
        ["exit status", run["returncode"]],
        ["CPU cores / mean 1-min load average", f"{run['cpus']} / {run['mean_load']}"],
    ]
    adapters = {method: list(seeds) for method, seeds in by_method(result["loss"]).items()}
    return render(
        "finetuning.md.j2",
        run=run,
        sizes=sizes,
        plan=sizes["plan"],
        adapters=adapters,
        judges=", ".join(f"`{judge}`" for judge in sizes["evaluation_judges"]),
        losses=table(["adapter", "optimiser steps", "mean loss per epoch"], losses, "lll"),
        scores=table(header, scores, "l" * len(header)),
        finetuned=[row for row in rows if row.get("teacher")],
        greedy_mde=detectable_difference(rows, sizes["plan"]),
        teacher_mde=detectable_difference(rows, sizes["plan"], "teacher_"),
        seed_counts=_seed_counts(adapters),
        jobs=table(["rule", "jobs", "wall min", "CPU min", "peak MiB"], jobs, "lllll"),
        measures=table(["measure", "value"], measures, "ll"),
        verdict=_verdict,
        verdict_counts=_verdict_counts,
        number=_number,
    )


@click.command()
@click.option("--check", is_flag=True, help="Fail if docs/finetuning.md differs from its render.")
def finetuning(check: bool) -> None:
    """Render docs/finetuning.md and its loss figure from docs/finetuning.json."""
    from selfreflect.fileio import read_json

    result = read_json(JSON)
    page = text(result)
    if not check:
        loss_figure(result["loss"], result["config"]["training"]["epochs"], FIGURE)
    publish(DOC, page, check, "docs finetuning")
