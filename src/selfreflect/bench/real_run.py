"""Time README command 1 (install, then the real-model Snakemake run): docs/real_model.json.

    selfreflect bench real-run                  # install + run config/laptop.yaml
    selfreflect bench real-run --no-install     # the run only, in this Python
    selfreflect bench real-run -- --set-threads judge=4   # more Snakemake arguments

The run happens in a fresh copy of the project's tracked files (so the GGUF conversion is
timed too and the checkout's results are left alone). Unless ``--no-install``,
``scripts/install.sh`` first installs everything into a new virtual environment with pip's
cache off, as on a fresh machine, and the run uses that environment. Peak memory is the largest
total RSS of Snakemake and all its child processes (:mod:`selfreflect.bench.resources`). CPU
time (user + system of every process of the run) does not depend on other work on the machine,
the wall time does: the load average is sampled too. ``selfreflect docs real-model`` then
renders docs/real_model.md from the JSON, ``selfreflect docs performance`` the README's figure.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import click

OVERRIDES = "overrides.yaml"  # in the copy: settings over the config, a second --configfile


def copy_tracked(dest: Path) -> None:
    """The project's git-tracked files (and untracked, not ignored ones) copied to ``dest``."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, target = Path(name), dest / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())


def fresh_environment(folder: Path, project: Path) -> tuple[dict[str, str], float]:
    """A new virtual environment at ``folder`` with ``scripts/install.sh`` run into it (pip's
    cache off); the environment variables that select it and the install's wall time."""
    subprocess.run([sys.executable, "-m", "venv", folder], check=True)
    path = f"{folder / 'bin'}:{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "VIRTUAL_ENV": str(folder), "PIP_NO_CACHE_DIR": "1"}
    start = time.perf_counter()
    subprocess.run(["bash", "scripts/install.sh"], cwd=project, env=env, check=True)
    return env, time.perf_counter() - start


def measure(
    config: str,
    cores: str,
    install: bool,
    overrides: dict | None = None,
    targets: Sequence[str] = (),
    omit: Sequence[str] = (),
    snakemake_args: Sequence[str] = (),
) -> dict:
    """Run Snakemake on ``config`` (with ``overrides`` over it, on ``targets`` if any, without
    the rules ``omit`` and what depends on them, with ``snakemake_args`` added) in a fresh copy
    (after installing into a fresh environment if ``install``); wall time, peak memory, load,
    outcome."""
    import psutil
    import yaml

    from selfreflect.bench.resources import sampled_run

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        copy_tracked(project)
        env, install_seconds = dict(os.environ), None
        if install:
            env, install_seconds = fresh_environment(Path(tmp) / "venv", project)
        configs = [config]
        if overrides:
            configs.append(OVERRIDES)
            (project / OVERRIDES).write_text(yaml.safe_dump(overrides), encoding="utf-8")
        command = ["snakemake", *targets, "--configfile", *configs, "--cores", cores]
        command += ["--resources", "gpu=1", *(["--omit-from", *omit] if omit else [])]
        command += snakemake_args
        log = project / "snakemake.log"
        usage = sampled_run(command, project, log, env)
        run = yaml.safe_load((project / config).read_text())["run"]
        tables = project / "reports" / run / "tables"
        main = tables / "main.md"
        return {
            "date": usage["date"],
            "config": config,
            **({"overrides": overrides} if overrides else {}),
            **({"targets": list(targets)} if targets else {}),
            **({"snakemake_args": list(snakemake_args)} if snakemake_args else {}),
            "install_seconds": None if install_seconds is None else round(install_seconds, 1),
            **usage,
            "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "machine": platform.platform(),
            "reports": sorted(
                str(p.relative_to(project)) for p in (project / "reports" / run).rglob("*.*")
            ),
            "main_table": main.read_text() if main.is_file() else None,
            "per_rule": csv_records(tables / "performance.csv"),
            "judge_tokens": csv_records(tables / "judge_tokens.csv"),
            "error_tail": None if usage["returncode"] == 0 else log.read_text()[-3000:],
        }


def csv_records(path: Path) -> list[dict] | None:
    """A report table's rows (the run's per-rule performance, the judge's tokens), if written."""
    import pandas as pd

    return pd.read_csv(path).to_dict("records") if path.is_file() else None


@click.command(help=__doc__.split("\n\n")[0])
@click.option("--config", default="config/laptop.yaml", show_default=True)
@click.option("--cores", default="all", show_default=True)
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), default="docs/real_model.json"
)
@click.option("--no-install", is_flag=True, help="run in this Python")
@click.argument("snakemake_args", nargs=-1, type=click.UNPROCESSED)
def real_run(
    config: str, cores: str, json_path: str, no_install: bool, snakemake_args: tuple[str, ...]
) -> None:
    from selfreflect.bench.outputs import refuse_overwriting_inputs
    from selfreflect.fileio import write_json

    refuse_overwriting_inputs([json_path], [config])
    result = measure(config, cores, install=not no_install, snakemake_args=snakemake_args)
    write_json(json_path, result)
    print(
        f"{result['seconds']:.0f} s, peak {result['peak_rss_mib']} MiB, exit {result['returncode']}"
        f": {json_path}; render it with selfreflect docs real-model"
    )
    sys.exit(result["returncode"])
