"""Time README command 1 (install, then the real-model Snakemake run); render docs/real_model.md.

    python3 scripts/measure_real_run.py                 # install + run config/laptop.yaml
    python3 scripts/measure_real_run.py --no-install    # the run only, in this Python
    python3 scripts/measure_real_run.py --render-only   # re-render the doc from the JSON

The run happens in a fresh copy of the project's tracked files (so the GGUF conversion is
timed too and the checkout's results are left alone). Unless ``--no-install``,
``scripts/install.sh`` first installs everything into a new virtual environment with pip's
cache off, as on a fresh machine, and the run uses that environment. Peak memory is the largest
total RSS of Snakemake and all its child processes, sampled every 0.2 s. CPU time (user +
system of every process of the run) does not depend on other work on the machine, the wall time
does: the load average is sampled too. ``python3 scripts/render_performance.py`` then renders
the README's figure from the JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]


def copy_tracked(dest: Path) -> None:
    """The project's git-tracked files (and untracked, not ignored ones) copied to ``dest``."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, target = REPO / name, dest / name
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())


def tree_rss(process: psutil.Process) -> int:
    """Resident memory of ``process`` and all its descendants, in bytes."""
    total = 0
    for proc in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += proc.memory_info().rss
    return total


def fresh_environment(folder: Path, project: Path) -> tuple[dict[str, str], float]:
    """A new virtual environment at ``folder`` with ``scripts/install.sh`` run into it (pip's
    cache off); the environment variables that select it and the install's wall time."""
    subprocess.run([sys.executable, "-m", "venv", folder], check=True)
    path = f"{folder / 'bin'}:{os.environ['PATH']}"
    env = {**os.environ, "PATH": path, "VIRTUAL_ENV": str(folder), "PIP_NO_CACHE_DIR": "1"}
    start = time.perf_counter()
    subprocess.run(["bash", "scripts/install.sh"], cwd=project, env=env, check=True)
    return env, time.perf_counter() - start


def measure(config: str, cores: str, install: bool) -> dict:
    """Run Snakemake on ``config`` in a fresh copy (after installing into a fresh environment
    if ``install``); wall time, peak memory, load, outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        copy_tracked(project)
        env, install_seconds = dict(os.environ), None
        if install:
            env, install_seconds = fresh_environment(Path(tmp) / "venv", project)
        command = ["snakemake", "--configfile", config, "--cores", cores, "--resources", "gpu=1"]
        log = project / "snakemake.log"
        start = time.perf_counter()
        with log.open("w") as handle:
            process = psutil.Popen(
                command, cwd=project, env=env, stdout=handle, stderr=subprocess.STDOUT
            )
            peak, loads = 0, []
            while process.poll() is None:
                peak = max(peak, tree_rss(process))
                loads.append(os.getloadavg()[0])
                time.sleep(0.2)
        seconds = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        run = yaml.safe_load((project / config).read_text())["run"]
        tables = project / "reports" / run / "tables"
        main = tables / "main.md"
        return {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "config": config,
            "install_seconds": None if install_seconds is None else round(install_seconds, 1),
            "command": " ".join(command),
            "returncode": process.returncode,
            "seconds": round(seconds, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "peak_rss_mib": round(peak / 2**20),
            "mean_load": round(sum(loads) / max(len(loads), 1), 1),
            "cpus": os.cpu_count(),
            "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
            "machine": platform.platform(),
            "reports": sorted(
                str(p.relative_to(project)) for p in (project / "reports" / run).rglob("*.*")
            ),
            "main_table": main.read_text() if main.is_file() else None,
            "per_rule": csv_records(tables / "performance.csv"),
            "judge_tokens": csv_records(tables / "judge_tokens.csv"),
            "error_tail": None if process.returncode == 0 else log.read_text()[-3000:],
        }


def csv_records(path: Path) -> list[dict] | None:
    """A report table's rows (the run's per-rule performance, the judge's tokens), if written."""
    import pandas as pd

    return pd.read_csv(path).to_dict("records") if path.is_file() else None


def render(result: dict) -> str:
    from render_performance import per_rule_lines  # a sibling script (run as a script)

    """docs/real_model.md from a measurement."""
    minutes = result["seconds"] / 60
    seconds = result["install_seconds"]
    install = "not measured (`--no-install`)" if seconds is None else f"{seconds / 60:.1f} min"
    installed = (
        ""
        if seconds is None
        else "`bash scripts/install.sh` into a new virtual environment with pip's cache off, then "
    )
    lines = [
        "# The real-model run (measured)",
        "",
        "Rendered by `scripts/measure_real_run.py` from `docs/real_model.json`; do not edit.",
        "",
        f"README command 1 on {result['date']}: {installed}`{result['command']}` in a fresh",
        "copy of the project (so converting SmolLM2 from its GGUF file is included):",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| install wall time | {install} |",
        f"| Snakemake wall time | {minutes:.1f} min ({result['seconds']:.0f} s) |",
        f"| CPU time, all processes | {result['cpu_seconds'] / 60:.1f} min |",
        f"| peak memory (RSS of Snakemake and all its jobs) | {result['peak_rss_mib']} MiB |",
        f"| exit status | {result['returncode']} |",
        f"| CPU cores / memory | {result['cpus']} / {result['memory_gib']} GiB |",
        f"| mean 1-min load average during the run | {result['mean_load']} |",
        "",
        f"A load average above {result['cpus']} means other work shared the cores: the wall time",
        "is then longer than on an idle machine; the CPU time is not.",
        "",
    ]
    if result.get("per_rule"):
        lines += ["## Where the time went", "", *per_rule_lines(result), ""]
    if result["main_table"]:
        lines += ["## Main table of that run", "", result["main_table"].strip(), ""]
    if result["error_tail"]:
        lines += ["## The run failed", "", "```", result["error_tail"].strip(), "```", ""]
    lines += ["## Reports written", ""] + [f"- `{path}`" for path in result["reports"]]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/laptop.yaml")
    parser.add_argument("--cores", default="all")
    parser.add_argument("--json", type=Path, default=REPO / "docs" / "real_model.json")
    parser.add_argument("--doc", type=Path, default=REPO / "docs" / "real_model.md")
    parser.add_argument("--no-install", action="store_true", help="run in this Python")
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    if args.render_only:
        result = json.loads(args.json.read_text())
    else:
        result = measure(args.config, args.cores, install=not args.no_install)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    args.doc.write_text(render(result))
    print(
        f"{result['seconds']:.0f} s, peak {result['peak_rss_mib']} MiB, exit {result['returncode']}"
    )
    sys.exit(result["returncode"])


if __name__ == "__main__":
    main()
