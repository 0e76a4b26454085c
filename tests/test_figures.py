"""Every report figure is written as a valid PNG and PDF, with data and without."""

import time

import numpy as np
import pandas as pd
import pytest

from selfreflect.mc_study.figure import mc_figure
from selfreflect.mc_study.table import mc_table
from selfreflect.plotting import experiments
from selfreflect.report.figures import convergence_figure, main_figure, validation_figure
from selfreflect.report.tables import convergence_table, main_table, validation_table
from tests.conftest import mc_plan, report_plan

KEYS = {"dataset": "d", "subject": "s", "judge": "j"}
MAIN_PLAN = report_plan("min_questions")
PAIRS_PLAN = report_plan("min_pairs")
STRATEGIES = ["greedy", "basic", "cot", "sample_and_summarize"]


def synthetic_scores(rng):
    return pd.DataFrame(
        [
            {"id": f"q{i}", "strategy": s, "score": rng.uniform(0.1, 0.5) - 0.05 * k, **KEYS}
            for k, s in enumerate(STRATEGIES)
            for i in range(30)
        ]
    )


def synthetic_controlled(rng):
    rows = []
    for pair_type in ["majority_only", "no_likelihoods", "reversed", "extra_option", "idk"]:
        for i in range(20):
            for side, shift in (("good", 0.0), ("bad", 0.1)):
                rows.append(
                    {
                        "id": f"q{i}",
                        "pair_type": pair_type,
                        "side": side,
                        "has_summary": True,
                        "selfreflect": rng.uniform() * 0.2 + shift,
                        "llm_rating": rng.uniform(1, 5),
                        "embedding": rng.uniform(),
                        "p_true": rng.uniform(),
                        "error": None,
                        **KEYS,
                    }
                )
    return pd.DataFrame(rows)


def synthetic_mc(rng):
    w1 = rng.uniform(0, 1, 40)
    return pd.DataFrame(
        {
            "id": [f"q{i // 5}" for i in range(40)],
            "summary": "s",
            "w1": w1,
            "score": w1 * 0.3 + rng.normal(0, 0.03, 40),
            "temperature": np.tile([0.25, 0.5, 1.0, 2.0, 4.0], 8),
            "ambiguous_conditioning": 0,
            "ambiguous_test": 0,
            "choice_source": "logprobs",
            "choice_error": 0.0,
            "truth_tv": 0.05,
            "truth_tv_expected": 0.1,
            **KEYS,
        }
    )


def synthetic_convergence(rng):
    return pd.DataFrame(
        [
            {
                "id": f"q{i}",
                "strategy": s,
                "axis": axis,
                "size": size,
                "score": 0.3 / size + 0.05 * k + rng.normal(0, 0.02),
                "error": None,
                **KEYS,
            }
            for k, s in enumerate(STRATEGIES)
            for axis in ("conditioning", "test")
            for size in (1, 2, 5, 10)
            for i in range(10)
        ]
    )


def assert_figure_files(files, tmp_path, name):
    assert [f.name for f in files] == [f"{name}.png", f"{name}.pdf"]
    png, pdf = (f.read_bytes() for f in files)
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    assert pdf.startswith(b"%PDF") and len(pdf) > 1000
    width = int.from_bytes(png[16:20], "big")  # IHDR width in pixels: ~3.3 in at 150 dpi
    assert 400 < width < 700


def make_figures(tmp_path, rng):
    stats = {"n_resamples": 200, "confidence": 0.95, "seed": 0}
    mc = synthetic_mc(rng)
    return {
        "main": main_figure(
            main_table(synthetic_scores(rng), "greedy", **stats, plan=MAIN_PLAN),
            tmp_path / "main",
            3.3,
            150,
        ),
        "validation": validation_figure(
            validation_table(synthetic_controlled(rng), 0.95, PAIRS_PLAN),
            tmp_path / "validation",
            3.3,
            150,
        ),
        "mc_study": mc_figure(
            mc,
            mc_table(mc, **stats, plan=MAIN_PLAN, mc_plan=mc_plan()),
            tmp_path / "mc_study",
            3.3,
            150,
        ),
        "convergence": convergence_figure(
            convergence_table(synthetic_convergence(rng), **stats),
            tmp_path / "convergence",
            3.3,
            150,
        ),
    }


def test_figures_are_valid_png_and_pdf(tmp_path):
    for name, files in make_figures(tmp_path, np.random.default_rng(0)).items():
        assert_figure_files(files, tmp_path, name)


def test_the_same_figures_are_the_same_bytes(tmp_path):
    """A rerun must not change a figure's DVC hash (a PDF records its creation date)."""
    first = make_figures(tmp_path / "a", np.random.default_rng(0))
    time.sleep(1.1)  # the PDF date has a resolution of one second
    again = make_figures(tmp_path / "b", np.random.default_rng(0))
    for name, files in first.items():
        for file, other in zip(files, again[name], strict=True):
            assert file.read_bytes() == other.read_bytes(), file.name


@pytest.mark.parametrize("name", ["main", "validation", "mc_study", "convergence"])
def test_figures_without_data(tmp_path, name):
    empty = {
        "main": lambda: main_figure(
            pd.DataFrame(columns=["strategy", "mean", "ci_low", "ci_high", *KEYS]),
            tmp_path / name,
            3.3,
            150,
        ),
        "validation": lambda: validation_figure(
            pd.DataFrame(columns=["pair_type", "metric", "fraction", "ci_low", "ci_high"]),
            tmp_path / name,
            3.3,
            150,
        ),
        "mc_study": lambda: mc_figure(
            pd.DataFrame(columns=["w1", "score", "temperature"]),
            pd.DataFrame(),
            tmp_path / name,
            3.3,
            150,
        ),
        "convergence": lambda: convergence_figure(
            pd.DataFrame(columns=["axis", "strategy", "size", "mean", "ci_low", "ci_high", *KEYS]),
            tmp_path / name,
            3.3,
            150,
        ),
    }
    files = empty[name]()
    assert files[0].read_bytes().startswith(b"\x89PNG") and files[1].stat().st_size > 0


def png_height(path) -> int:
    return int.from_bytes(path.read_bytes()[20:24], "big")


def two_experiments(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([frame, frame.assign(dataset="d2")], ignore_index=True)


def test_one_panel_per_experiment_and_missing_values_are_not_zero(tmp_path):
    rng = np.random.default_rng(0)
    stats = {"n_resamples": 200, "confidence": 0.95, "seed": 0}
    validation = validation_table(two_experiments(synthetic_controlled(rng)), 0.95, PAIRS_PLAN)
    assert [title for title, _ in experiments(validation)] == ["d", "d2"]
    assert experiments(validation[validation["dataset"] == "d"])[0][0] == ""
    mc = two_experiments(synthetic_mc(rng))
    convergence = convergence_table(two_experiments(synthetic_convergence(rng)), **stats)
    scores = main_table(two_experiments(synthetic_scores(rng)), "greedy", **stats, plan=MAIN_PLAN)
    figures = {
        "main": lambda table, stem: main_figure(table, stem, 3.3, 150),
        "validation": lambda table, stem: validation_figure(table, stem, 3.3, 150),
        "mc": lambda table, stem: mc_figure(
            table, mc_table(table, **stats, plan=MAIN_PLAN, mc_plan=mc_plan()), stem, 3.3, 150
        ),
        "convergence": lambda table, stem: convergence_figure(table, stem, 3.3, 150),
    }
    tables = [scores, validation, mc, convergence]
    for (name, draw), table in zip(figures.items(), tables, strict=True):
        one = draw(table[table["dataset"] == "d"], tmp_path / f"{name}-1")[0]
        two = draw(table, tmp_path / f"{name}-2")[0]
        assert 1.7 < png_height(two) / png_height(one) < 2.3, name
    missing = validation.assign(fraction=np.nan, ci_low=np.nan, ci_high=np.nan)
    assert_figure_files(validation_figure(missing, tmp_path / "na", 3.3, 150), tmp_path, "na")
    scores = main_table(
        synthetic_scores(rng).assign(score=np.nan), "greedy", **stats, plan=MAIN_PLAN
    )
    assert_figure_files(main_figure(scores, tmp_path / "main", 3.3, 150), tmp_path, "main")


def test_every_pair_ranked_correctly_draws(tmp_path):
    """A fraction of 1 whose Wilson bound lies a rounding error below it (seen on SmolLM2)."""
    controlled = synthetic_controlled(np.random.default_rng(0))
    controlled.loc[controlled["side"] == "bad", "selfreflect"] += 1.0  # all ranked correctly
    table = validation_table(controlled, 0.95, PAIRS_PLAN)
    assert (table.query("metric == 'selfreflect'")["fraction"] == 1.0).all()
    figure = validation_figure(
        table.assign(ci_high=table["fraction"] - 1e-16), tmp_path / "v", 3.3, 150
    )
    assert_figure_files(figure, tmp_path, "v")


def _pixels_near(png, rgb: str) -> int:
    """How many pixels of the image ``png`` are within a small distance of the colour ``rgb``."""
    import matplotlib.colors
    import matplotlib.image

    image = matplotlib.image.imread(png)[..., :3]
    target = np.array(matplotlib.colors.to_rgb(rgb))
    return int((np.abs(image - target).max(axis=-1) < 0.1).sum())


def test_convergence_greedy_line_shows_where_strategies_coincide(tmp_path):
    """Two strategies with the same scores: the first (greedy) is drawn on top, not hidden."""
    scores = synthetic_convergence(np.random.default_rng(0))
    scores = scores[scores["strategy"] == "greedy"]
    both = pd.concat([scores, scores.assign(strategy="basic")])
    stats = {"n_resamples": 200, "confidence": 0.95, "seed": 0}
    alone, png = (
        convergence_figure(convergence_table(table, **stats), tmp_path / name, 3.3, 150)[0]
        for name, table in (("alone", scores), ("both", both))
    )
    # greedy is C0: where it coincides with basic most of its line still shows
    assert _pixels_near(png, "C0") > 0.7 * _pixels_near(alone, "C0")
