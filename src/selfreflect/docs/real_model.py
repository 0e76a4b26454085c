"""docs/real_model.md from what ``selfreflect bench real-run`` measured (docs/real_model.json).

selfreflect docs real-model [--json docs/real_model.json] [--out docs/real_model.md] [--check]
"""

from __future__ import annotations

import click

from selfreflect.docs import publish, render
from selfreflect.docs.performance import per_rule
from selfreflect.docs.tables import table


def text(result: dict) -> str:
    """docs/real_model.md from a measurement."""
    seconds = result["install_seconds"]
    install = "not measured (`--no-install`)" if seconds is None else f"{seconds / 60:.1f} min"
    measures = [
        ["install wall time", install],
        ["Snakemake wall time", f"{result['seconds'] / 60:.1f} min ({result['seconds']:.0f} s)"],
        ["CPU time, all processes", f"{result['cpu_seconds'] / 60:.1f} min"],
        ["peak memory (RSS of Snakemake and all its jobs)", f"{result['peak_rss_mib']} MiB"],
        ["exit status", result["returncode"]],
        ["CPU cores / memory", f"{result['cpus']} / {result['memory_gib']} GiB"],
        ["mean 1-min load average during the run", result["mean_load"]],
    ]
    return render(
        "real_model.md.j2",
        result=result,
        measures=table(["measure", "value"], measures, align="ll"),
        **per_rule(result),
    )


@click.command("real-model")
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), default="docs/real_model.json"
)
@click.option("--out", type=click.Path(dir_okay=False), default="docs/real_model.md")
@click.option("--check", is_flag=True, help="Fail if --out differs from its render.")
def real_model(json_path: str, out: str, check: bool) -> None:
    """Render docs/real_model.md from docs/real_model.json (selfreflect bench real-run)."""
    from selfreflect.bench.outputs import refuse_overwriting_inputs
    from selfreflect.fileio import read_json

    refuse_overwriting_inputs([out], [json_path])
    publish(out, text(read_json(json_path)), check, "docs real-model")
