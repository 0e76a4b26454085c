"""Write the synthetic human-ratings example file (data/human_ratings_example.csv).

Every (question, strategy) of a config's first summarised dataset gets a latent quality from 1
to 5; each rater gives that quality, one point off with probability ``--noise`` (clipped to
1..5). Question ids are the artifacts' ids, so the smoke run's human-agreement table joins them.

    python scripts/make_human_ratings.py --config config/smoke.yaml \
        --out data/human_ratings_example.csv
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from selfreflect.config import load_config, question_count, summarized_datasets
from selfreflect.fileio import write_text
from selfreflect.questions import load_questions


def ratings(config: dict, raters: int, noise: float, seed: int) -> pd.DataFrame:
    """One row per question, strategy and rater: ``question_id, strategy, rater, rating``."""
    dataset = summarized_datasets(config)[0]
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
                rows.append((question, strategy, f"r{rater}", rating))
    return pd.DataFrame(rows, columns=["question_id", "strategy", "rater", "rating"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/smoke.yaml")
    parser.add_argument("--out", default="data/human_ratings_example.csv")
    parser.add_argument("--raters", type=int, default=3)
    parser.add_argument("--noise", type=float, default=0.3, help="Chance a rating is one off.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    table = ratings(load_config(args.config), args.raters, args.noise, args.seed)
    write_text(args.out, table.to_csv(index=False))
    print(f"{len(table)} ratings written to {args.out}")


if __name__ == "__main__":
    main()
