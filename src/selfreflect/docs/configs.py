"""README.md's table of the shipped configs (its span ``configs``): each run's time, memory and
sizes as its benchmark recorded them: the laptop run (docs/real_model.json, ``selfreflect bench
real-run``), the science runs' records (docs/science/, docs/science-confirm/, ``selfreflect bench
science-record``),
the finetuning runs (docs/finetuning/, ``selfreflect bench finetuning``) and the
paper's run after the judge (docs/scale.json, ``selfreflect bench scale``). What no run measured
stays "not measured" in the template (``templates/configs.md.j2``).

    selfreflect docs configs [--check]
"""

from __future__ import annotations

from pathlib import Path

import click

from selfreflect.docs import fill, publish, render
from selfreflect.docs.finetuning import FIRST, planned, read_records, record_path
from selfreflect.docs.performance import REAL_RUN
from selfreflect.docs.scale import RECORD as SCALE
from selfreflect.docs.scale import rule_table
from selfreflect.fileio import read_json

README = Path("README.md")
SCIENCE = [Path("config") / "science.yaml", Path("config") / "confirm.yaml"]


def science_times(config_path: Path) -> dict[str, dict[str, float] | None]:
    """Each judge of a science run (in the config's order): its record's jobs' summed time,
    None where it has no record yet."""
    from selfreflect.bench.science_record import default_records, read_records
    from selfreflect.config import load_config

    config = load_config(config_path)
    provenance, _ = read_records(default_records(config_path), config)
    return {judge: provenance.get(judge, {}).get("time") for judge in config["judges"]}


def finetuning_times() -> dict[str, float | None]:
    """Each shipped finetuning config but config/finetune.yaml, in name order: its record's jobs'
    summed wall time in seconds (such runs span sittings; no one invocation measured them), None
    where it has no record yet."""
    records = read_records()
    times = dict.fromkeys(planned(records))
    records.pop(FIRST, None)
    times |= {
        result["config_path"]: next(j["wall_s"] for j in result["jobs"] if j["rule"] == "total")
        for result in records.values()
    }
    return dict(sorted(times.items()))


def table() -> str:
    """The README's table of shipped configs, its figures from the runs' records."""
    from selfreflect.docs.science import default_out

    scale = read_json(SCALE)
    return render(
        "configs.md.j2",
        laptop=read_json(REAL_RUN),
        science={path.as_posix(): science_times(path) for path in SCIENCE},
        science_pages={path.as_posix(): default_out(path).as_posix() for path in SCIENCE},
        finetune=read_json(record_path(FIRST))["run"],
        finetuning=finetuning_times(),
        scale=scale,
        scale_peak=int(rule_table(scale)["peak_rss_mib"].max()),
    )


@click.command()
@click.option("--check", is_flag=True, help="Fail if README.md's table of configs is stale.")
def configs(check: bool) -> None:
    """Render README.md's table of shipped configs from the runs' records."""
    text = fill(README.read_text(encoding="utf-8"), {"configs": table()})
    publish(README, text, check, "docs configs")
