"""Simulate the multiple-choice study's power: docs/power.json.

    selfreflect bench power                # defaults below, 6 min on 2 shared cores
    selfreflect bench power --trials 100   # quicker, coarser

No model runs: :mod:`selfreflect.mc_study.power` simulates the study with a perfect and a random
judge at each question count and number of answers N; the JSON holds the design and, per judge,
N and question count, the share of simulated studies whose one-sided Wilcoxon test fires
(p < 0.05) with its Wilson interval. ``selfreflect docs power`` renders docs/power.md and
docs/figures/power.png from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import click
import pandas as pd

QUESTIONS = [5, 10, 20, 30, 40, 60, 80]
N_ANSWERS = [3, 10, 25, 50]
TEMPERATURES = [0.25, 1.0, 4.0]


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


@click.command(help=__doc__.split("\n\n")[0])
@click.option(
    "--questions", type=click.IntRange(min=1), multiple=True, default=QUESTIONS, show_default=True
)
@click.option(
    "--n-answers", type=click.IntRange(min=1), multiple=True, default=N_ANSWERS, show_default=True
)
@click.option("--temperatures", type=float, multiple=True, default=TEMPERATURES, show_default=True)
@click.option("--trials", type=click.IntRange(min=1), default=300, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default="docs/power.json")
def power(json_path: str, **options) -> None:
    from selfreflect.fileio import check_writable, write_json

    check_writable(json_path)
    lists = {name: list(options[name]) for name in ("questions", "n_answers", "temperatures")}
    design = Design(**{**options, **lists})
    table = curves(design)
    write_json(json_path, {"design": asdict(design), "curves": table.to_dict("records")})
    print(f"wrote {json_path}; render it with selfreflect docs power")
