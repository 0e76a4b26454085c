"""docs/power.md and docs/figures/power.png from the multiple-choice study's simulated power
that ``selfreflect bench power`` recorded (docs/power.json).

    selfreflect docs power [--check]
"""

from __future__ import annotations

from pathlib import Path

import click
import pandas as pd

from selfreflect.docs import publish, render
from selfreflect.docs.tables import table


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


def text(curves: pd.DataFrame, design: dict) -> str:
    """docs/power.md: the setting, the figure and the table (power, rows = question counts)."""
    wide = curves.pivot_table(index="questions", columns=["judge", "n_answers"], values="power")
    header = ["questions", *(f"{judge}, N = {n}" for judge, n in wide.columns)]
    rows = [
        [q, *(f"{v:.2f}" for v in row)] for q, row in zip(wide.index, wide.to_numpy(), strict=True)
    ]
    powers = table(header, rows, align="r" * len(header))
    return render("power.md.j2", design=design, powers=powers)


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
    page = text(curves, recorded["design"])
    if not check:
        figure(curves, Path(figure_path))
    publish(out, page, check, "docs power")
