"""docs/power.md and docs/figures/power.png from the science run's tests' power that
``selfreflect bench power`` recorded (docs/power.json): the controlled pairs', the strategies'
and the multiple-choice study's.

    selfreflect docs power [--check]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
import pandas as pd

from selfreflect.docs import publish, render
from selfreflect.docs.tables import table


def figure(table: pd.DataFrame, path: Path) -> None:
    """Power against the question count: a line per judge and N, Wilson intervals shaded."""
    from selfreflect.plotting import pyplot

    plt = pyplot()

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


def _wide(frame: pd.DataFrame, rows: str, columns: str | list[str], label: Callable) -> str:
    """``frame``'s power as a table: a row per ``rows`` value, a column per ``columns`` value
    (headed ``label(value)``)."""
    wide = frame.pivot_table(index=rows, columns=columns, values="power")
    header = [rows, *map(label, wide.columns)]
    cells = [
        [i, *(f"{v:.2f}" for v in row)] for i, row in zip(wide.index, wide.to_numpy(), strict=True)
    ]
    return table(header, cells, align="r" * len(header))


def smallest_sizes(frame: pd.DataFrame, size: str, effect: str, power: float = 0.8) -> dict:
    """Per ``effect`` value, the smallest ``size`` whose power reaches ``power`` (None: none)."""
    reached = frame[frame["power"] >= power].groupby(effect)[size].min()
    return {value: reached.get(value) for value in sorted(frame[effect].unique())}


def _sizes(recorded: dict) -> str:
    pairs = pd.DataFrame(recorded["pairs"])
    strategies = pd.DataFrame(recorded["strategies"])
    curves = pd.DataFrame(recorded["curves"])
    perfect = curves[curves["judge"] == "perfect"]
    rows = [
        ["controlled pairs (per pair type)", f"true share ranked right {a:g}", _size(n, "pairs")]
        for a, n in smallest_sizes(pairs, "pairs", "accuracy").items()
    ]
    rows += [
        ["strategy vs baseline (per strategy)", f"standardized effect {e:g}", _size(n, "questions")]
        for e, n in smallest_sizes(strategies, "questions", "effect").items()
    ]
    rows += [
        ["multiple-choice study", f"perfect judge, N = {n}", _size(q, "questions")]
        for n, q in smallest_sizes(perfect, "questions", "n_answers").items()
    ]
    return table(["test", "effect", "size for power 0.8"], rows, align="lll")


def _size(value: float | None, unit: str) -> str:
    return "beyond the sizes simulated" if value is None or pd.isna(value) else f"{value} {unit}"


def text(recorded: dict) -> str:
    """docs/power.md: the sizes for 80 % power, then each test's table (and the MC figure)."""
    return render(
        "power.md.j2",
        design=recorded["design"],
        sizes=_sizes(recorded),
        pairs=_wide(
            pd.DataFrame(recorded["pairs"]), "pairs", "accuracy", lambda a: f"accuracy {a:g}"
        ),
        strategies=_wide(
            pd.DataFrame(recorded["strategies"]), "questions", "effect", lambda e: f"effect {e:g}"
        ),
        powers=_wide(
            pd.DataFrame(recorded["curves"]),
            "questions",
            ["judge", "n_answers"],
            lambda column: f"{column[0]}, N = {column[1]}",
        ),
    )


@click.command()
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default="docs/power.json")
@click.option("--out", type=click.Path(dir_okay=False), default="docs/power.md")
@click.option(
    "--figure", "figure_path", type=click.Path(dir_okay=False), default="docs/figures/power.png"
)
@click.option("--check", is_flag=True, help="Fail if --out differs from its render.")
def power(json_path: str, out: str, figure_path: str, check: bool) -> None:
    """Render docs/power.md and its figure from docs/power.json (selfreflect bench power)."""
    from selfreflect.bench.outputs import refuse_overwriting_inputs
    from selfreflect.fileio import read_json

    refuse_overwriting_inputs([out, figure_path], [json_path])
    recorded = read_json(json_path)
    curves = pd.DataFrame(recorded["curves"])
    page = text(recorded)
    if not check:
        figure(curves, Path(figure_path))
    publish(out, page, check, "docs power")
