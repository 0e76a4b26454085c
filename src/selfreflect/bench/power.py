"""The science run's power, before its run: docs/power.json.

    selfreflect bench power                # defaults below, about 10 min on 2 shared cores
    selfreflect bench power --trials 100   # quicker, coarser

No model runs. For each of the plan's tests (``--config``: its level, its families' sizes, the
multiple-choice study's temperatures), at the sizes a plan may choose:

- the multiple-choice study (:mod:`selfreflect.mc_study.power`), simulated with a perfect and a
  random judge at each question count and number of answers N: the share of studies whose
  one-sided Wilcoxon test fires, with its Wilson interval;
- the controlled pairs: the exact power of the one-sided binomial test against chance at the
  strictest step of Holm's correction over the pair types (level / pair types), per number of
  pairs and true share ranked right (:func:`selfreflect.stats.binomial_power`);
- the strategies compared with the baseline: the simulated power of the two-sided Wilcoxon
  signed-rank test at the strictest Holm step of their family, per number of questions and
  standardized effect (mean paired difference over its standard deviation;
  :func:`selfreflect.stats.signed_rank_power`).

``selfreflect docs power`` renders docs/power.md and docs/figures/power.png from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import click
import pandas as pd

QUESTIONS = [5, 10, 20, 30, 40, 60, 80]
N_ANSWERS = [3, 10, 25, 50]
PAIRS = [20, 40, 71, 100, 150, 200, 300, 400]
ACCURACIES = [0.6, 0.65, 0.7, 0.75, 0.8]
STRATEGY_QUESTIONS = [40, 100, 200, 300, 400, 600]
EFFECTS = [0.1, 0.15, 0.2, 0.3, 0.5]
STRATEGY_TRIALS = 4000  # simulated studies per strategy cell: vectorized tests, cheap


@dataclass(frozen=True)
class Design:
    """The simulated and computed studies: the multiple-choice study's question counts,
    numbers of answers and temperatures; pair counts and true accuracies; strategy question
    counts and effects; the plan's level and family sizes (from ``config``); simulated studies
    per cell (the MC study's, the strategies') and seed."""

    questions: list[int]
    n_answers: list[int]
    temperatures: list[float]
    pairs: list[int]
    accuracies: list[float]
    strategy_questions: list[int]
    effects: list[float]
    level: float
    pair_types: int
    comparisons: int
    config: str
    trials: int
    strategy_trials: int
    seed: int


def curves(design: Design) -> pd.DataFrame:
    """The multiple-choice study's :func:`power_curve` for every N, one frame."""
    from selfreflect.mc_study.power import power_curve

    frames = [
        power_curve(design.questions, n, design.temperatures, design.trials, design.seed)
        for n in design.n_answers
    ]
    return pd.concat(frames, ignore_index=True)


def pair_power(design: Design) -> pd.DataFrame:
    """Exact power of each pair type's test at the strictest Holm step, per pair count and
    accuracy: columns pairs, accuracy, power."""
    from selfreflect.stats import binomial_power

    level = design.level / design.pair_types
    rows = [
        (n, accuracy, binomial_power(n, accuracy, level))
        for n in design.pairs
        for accuracy in design.accuracies
    ]
    return pd.DataFrame(rows, columns=["pairs", "accuracy", "power"])


def strategy_power(design: Design) -> pd.DataFrame:
    """Simulated power of each strategy's comparison with the baseline at the strictest Holm
    step, per question count and effect: columns questions, effect, power."""
    from selfreflect.stats import signed_rank_power

    level = design.level / design.comparisons
    rows = [
        (n, effect, signed_rank_power(n, effect, level, design.strategy_trials, design.seed))
        for n in design.strategy_questions
        for effect in design.effects
    ]
    return pd.DataFrame(rows, columns=["questions", "effect", "power"])


def plan_sizes(config_path: str) -> dict[str, float | int | list[float]]:
    """What the plan of ``config_path`` fixes: its level, the pair types (one family), the
    strategies compared with the baseline (references apart) and the MC temperatures."""
    from selfreflect.config import load_config

    config = load_config(config_path)
    report = config["report"]
    baseline, references = report["baseline"], report["plan"]["references"]
    compared = [s for s in config["summaries"]["strategies"] if s not in {baseline, *references}]
    return {
        "level": report["plan"]["level"],
        "pair_types": len(report["pair_types"]),
        "comparisons": max(len(compared), 1),
        "temperatures": list(report["mc_temperatures"]),
    }


def _many(name: str, kind: type, default: list) -> click.Option:
    return click.option(
        f"--{name.replace('_', '-')}", name, type=kind, multiple=True, default=default,
        show_default=True,
    )  # fmt: skip


@click.command(help=__doc__.split("\n\n")[0])
@click.option(
    "--config",
    type=click.Path(exists=True, dir_okay=False),
    default="config/science.yaml",
    show_default=True,
    help="The run whose plan sets the level, the families' sizes and the MC temperatures.",
)
@_many("questions", click.IntRange(min=1), QUESTIONS)
@_many("n_answers", click.IntRange(min=1), N_ANSWERS)
@_many("pairs", click.IntRange(min=1), PAIRS)
@_many("accuracies", click.FloatRange(0, 1), ACCURACIES)
@_many("strategy_questions", click.IntRange(min=6), STRATEGY_QUESTIONS)
@_many("effects", float, EFFECTS)
@click.option("--trials", type=click.IntRange(min=1), default=300, show_default=True)
@click.option(
    "--strategy-trials",
    type=click.IntRange(min=1),
    default=STRATEGY_TRIALS,
    show_default=True,
    help="Simulated studies per strategy cell.",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default="docs/power.json")
def power(json_path: str, config: str, **options) -> None:
    from selfreflect.fileio import check_writable, write_json

    check_writable(json_path)
    lists = {name: list(value) for name, value in options.items() if isinstance(value, tuple)}
    design = Design(**{**options, **lists, **plan_sizes(config), "config": config})
    write_json(
        json_path,
        {
            "design": asdict(design),
            "curves": curves(design).to_dict("records"),
            "pairs": pair_power(design).to_dict("records"),
            "strategies": strategy_power(design).to_dict("records"),
        },
    )
    print(f"wrote {json_path}; render it with selfreflect docs power")
