"""Render the multiple-choice study's simulated power: docs/figures/power.png and docs/power.md.

    python3 scripts/render_power.py                 # defaults below, 6 min on 2 shared cores
    python3 scripts/render_power.py --trials 100    # quicker, coarser

No model runs: :mod:`selfreflect.report.power` simulates the study with a perfect and a random
judge at each question count and number of answers N, and the docs show the share of
simulated studies whose one-sided Wilcoxon test fires (p < 0.05).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from selfreflect.report.power import power_curve

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = [5, 10, 20, 30, 40, 60, 80]
N_ANSWERS = [3, 10, 25, 50]
TEMPERATURES = [0.25, 1.0, 4.0]


def curves(args: argparse.Namespace) -> pd.DataFrame:
    """:func:`power_curve` for every N, one frame."""
    frames = [
        power_curve(args.questions, n, args.temperatures, args.trials, args.seed)
        for n in args.n_answers
    ]
    return pd.concat(frames, ignore_index=True)


def figure(table: pd.DataFrame, path: Path) -> None:
    """Power against the question count: a line per judge and N, Wilson intervals shaded."""
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


def markdown(table: pd.DataFrame, args: argparse.Namespace) -> str:
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
    temperatures = ", ".join(f"{t:g}" for t in args.temperatures)
    return f"""# Power of the multiple-choice study (simulated)

Rendered by `python3 scripts/render_power.py` (`selfreflect.report.power`); no model runs.

Each simulated question has 4 choices and a true distribution over them drawn from a flat
Dirichlet. As in the study, where the truth is exact (the subject's first-token probabilities of
the choice letters), each temperature ({temperatures}) tempers the truth into a stated
distribution in whole percentages, and a summary's true distance is the total variation between
its stated distribution and the truth. A *perfect* judge scores a summary with the total
variation to the shares of the N held-out answers it reads (the true distance plus the sampling
noise of N answers); a *random* judge's scores are noise. The statistic is the study's: the
per-question Spearman rho of score and true distance, tested > 0 across questions with a
one-sided Wilcoxon signed-rank test. Each cell is the share of {args.trials} simulated studies
(seed {args.seed}) with p < 0.05: the power for the perfect judge, the false-positive rate for
the random one (which stays near the test's 5 % level).

![Simulated power](figures/power.png)

{chr(10).join(lines)}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, nargs="+", default=QUESTIONS)
    parser.add_argument("--n-answers", type=int, nargs="+", default=N_ANSWERS)
    parser.add_argument("--temperatures", type=float, nargs="+", default=TEMPERATURES)
    parser.add_argument("--trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = curves(args)
    figure(table, REPO / "docs" / "figures" / "power.png")
    (REPO / "docs" / "power.md").write_text(markdown(table, args), encoding="utf-8")


if __name__ == "__main__":
    main()
