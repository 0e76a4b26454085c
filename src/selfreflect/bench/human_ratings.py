"""Write the synthetic human-ratings example file (data/human_ratings_example.csv).

Every (question, strategy) of a config's first summarised dataset gets a latent quality from 1
to 5; each rater gives that quality, one point off with probability ``--noise`` (clipped to
1..5). Question ids are the artifacts' ids and the subject the config's first, so the smoke
run's human-agreement table joins them.

    selfreflect bench human-ratings --config config/smoke.yaml \\
        --out data/human_ratings_example.csv
"""

from __future__ import annotations

import click
import numpy as np
import pandas as pd

from selfreflect.config import load_config, question_count, summarized_datasets
from selfreflect.fileio import write_text
from selfreflect.questions import load_questions


def ratings(config: dict, raters: int, noise: float, seed: int) -> pd.DataFrame:
    """One row per question, strategy and rater: ``question_id, strategy, subject, rater,
    rating``, of the first subject's summaries."""
    dataset, subject = summarized_datasets(config)[0], config["subjects"][0]
    spec = config["datasets"][dataset]
    ids = load_questions(dataset, spec, question_count(config, dataset), config["seed"])["id"]
    strategies = config["summaries"]["strategies"]
    rng = np.random.default_rng(seed)
    rows = []
    for question in ids:
        for strategy in strategies:
            quality = rng.integers(1, 6)
            for rater in range(1, raters + 1):
                shift = rng.choice([-1, 1]) if rng.random() < noise else 0
                rating = int(np.clip(quality + shift, 1, 5))
                rows.append((question, strategy, subject, f"r{rater}", rating))
    return pd.DataFrame(rows, columns=["question_id", "strategy", "subject", "rater", "rating"])


@click.command(help=__doc__.split("\n\n")[0])
@click.option(
    "--config", type=click.Path(dir_okay=False), default="config/smoke.yaml", show_default=True
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False),
    default="data/human_ratings_example.csv",
    show_default=True,
)
@click.option("--raters", type=int, default=3, show_default=True)
@click.option(
    "--noise", type=float, default=0.3, show_default=True, help="Chance a rating is one off."
)
@click.option("--seed", type=int, default=0, show_default=True)
def human_ratings(config: str, out: str, raters: int, noise: float, seed: int) -> None:
    table = ratings(load_config(config), raters, noise, seed)
    write_text(out, table.to_csv(index=False))
    print(f"{len(table)} ratings written to {out}")
