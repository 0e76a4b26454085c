"""Render the multiple-choice study's simulated power: docs/figures/power.png and docs/power.md.

    selfreflect bench power-doc                # defaults below, 6 min on 2 shared cores
    selfreflect bench power-doc --trials 100   # quicker, coarser

No model runs: :mod:`selfreflect.mc_study.power` simulates the study with a perfect and a random
judge at each question count and number of answers N, and the docs show the share of
simulated studies whose one-sided Wilcoxon test fires (p < 0.05).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import pandas as pd

from selfreflect.cli.options import POSITIVE

QUESTIONS = [5, 10, 20, 30, 40, 60, 80]
N_ANSWERS = [3, 10, 25, 50]
TEMPERATURES = [0.25, 1.0, 4.0]
FIGURE = Path("docs") / "figures" / "power.png"
DOC = Path("docs") / "power.md"


@dataclass(frozen=True)
class Design:
    """The simulated studies: question counts, numbers of answers, temperatures, trials."""

    questions: list[int]
    n_answers: list[int]
    temperatures: list[float]
    trials: int
    seed: int


def curves(design: Design) -> pd.DataFrame:
    """:func:`power_curve` for every N, one frame."""
    from selfreflect.mc_study.power import power_curve

    frames = [
        power_curve(design.questions, n, design.temperatures, design.trials, design.seed)
        for n in design.n_answers
    ]
    return pd.concat(frames, ignore_index=True)


def figure(table: pd.DataFrame, path: Path) -> None:
    """Power against the question count: a line per judge and N, Wilson intervals shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for (judge, n), rows in table.groupby(["judge", "n_answers"]):
        style = "-o" if judge == "perfect" else ":x"
        (line,) = ax.plot(rows["questions"], rows["power"], style, label=f"{judge}, N = {n}")
        ax.fill_between(
            rows["questions"], rows["low"], rows["high"], alpha=0.15, lw=0, color=line.get_color()
        )
    for level in (0.05, 0.95):
        ax.axhline(level, color="grey", lw=0.8, ls="--")
    ax.set(xlabel="questions", ylabel="share of studies with p < 0.05", ylim=(-0.02, 1.02))
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(table: pd.DataFrame, design: Design) -> str:
    """docs/power.md: the setting, the figure and the table (power, rows = question counts)."""
    wide = table.pivot_table(index="questions", columns=["judge", "n_answers"], values="power")
    header = ["questions", *(f"{judge}, N = {n}" for judge, n in wide.columns)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---:|" * len(header),
        *(
            f"| {q} | " + " | ".join(f"{v:.2f}" for v in row) + " |"
            for q, row in zip(wide.index, wide.to_numpy(), strict=True)
        ),
    ]
    temperatures = ", ".join(f"{t:g}" for t in design.temperatures)
    return f"""# Power of the multiple-choice study (simulated)

Rendered by `selfreflect bench power-doc` (`selfreflect.mc_study.power`); no model runs.

Each simulated question has 4 choices and a true distribution over them drawn from a flat
Dirichlet. As in the study, where the truth is exact (the subject's first-token probabilities of
the choice letters), each temperature ({temperatures}) tempers the truth into a stated
distribution in whole percentages, and a summary's true distance is the total variation between
its stated distribution and the truth. A *perfect* judge scores a summary with the total
variation to the shares of the N held-out answers it reads (the true distance plus the sampling
noise of N answers); a *random* judge's scores are noise. The statistic is the study's: the
per-question Spearman rho of score and true distance, tested > 0 across questions with a
one-sided Wilcoxon signed-rank test. Each cell is the share of {design.trials} simulated studies
(seed {design.seed}) with p < 0.05: the power for the perfect judge, the false-positive rate for
the random one (which stays near the test's 5 % level).

![Simulated power](figures/power.png)

{chr(10).join(lines)}
"""


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--questions", type=POSITIVE, multiple=True, default=QUESTIONS, show_default=True)
@click.option("--n-answers", type=POSITIVE, multiple=True, default=N_ANSWERS, show_default=True)
@click.option("--temperatures", type=float, multiple=True, default=TEMPERATURES, show_default=True)
@click.option("--trials", type=POSITIVE, default=300, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
def power_doc(**options) -> None:
    from selfreflect.fileio import write_text

    lists = {name: list(options[name]) for name in ("questions", "n_answers", "temperatures")}
    design = Design(**{**options, **lists})
    table = curves(design)
    figure(table, FIGURE)
    write_text(DOC, markdown(table, design))
