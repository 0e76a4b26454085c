"""Run the real Snakemake and DVC command lines on a copy of the project."""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# what a developer's own runs leave in the checkout (git-ignored; absent from a fresh clone)
_SKIP = shutil.ignore_patterns(
    ".git",
    "results",
    "logs",
    ".snakemake",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    "tmp",
    "cache",
)


SYSTEM_TESTS = "SELFREFLECT_SYSTEM_TESTS"  # what asks for tests that install system software
SLURM_CLUSTER = ["bash", str(REPO / "scripts" / "slurm_cluster.sh")]


def slurm_cluster_up() -> bool:
    """Whether the SLURM cluster of scripts/slurm_cluster.sh answers (its controller is up)."""
    if shutil.which("scontrol") is None:
        return False
    return subprocess.run([*SLURM_CLUSTER, "status"], capture_output=True).returncode == 0


def fresh_clone(dest: Path) -> Path:
    """A `git clone` of the checkout's commit, as a user gets it."""
    commit = run(["git", "rev-parse", "HEAD"], REPO).stdout.strip()
    run(["git", "clone", "-q", "--no-checkout", str(REPO), str(dest)], REPO)
    run(["git", "checkout", "-q", commit], dest)
    return dest


def copy_project(dest: Path, config: str = "config/smoke.yaml") -> Path:
    """A fresh copy of the project (git + DVC initialised) with dvc.yaml and params.yaml
    generated for ``config``."""
    shutil.copytree(_template(config), dest, symlinks=True)
    return dest


@functools.cache
def _template(config: str) -> Path:
    """The project copied once per test process and ``config`` (generating dvc.yaml builds the
    DAG): what :func:`copy_project` copies."""
    root = Path(tempfile.mkdtemp(prefix="selfreflect-project-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    project = root / "p"
    shutil.copytree(REPO, project, ignore=_SKIP, symlinks=True)
    run(["selfreflect", "dvc-yaml", "--config", config, "--project", "."], project)
    run(["git", "init", "-q"], project)
    commit_all(project, "copy")
    return project


def job_name(stage: str) -> str:
    """The name of a job's stage before grouping (``rule-values``, ``stage_name``) from the name
    DVC gives it: a ``foreach`` stage's ``group@values`` (``summarize-2@smoke-tiny-greedy``:
    ``summarize-smoke-tiny-greedy``), a plain stage's own."""
    group, _, values = stage.partition("@")
    return f"{group.split('-')[0]}-{values}" if values else stage


def dvc_yaml_stages(project: Path) -> dict[str, dict]:
    """The stages of ``project``'s dvc.yaml, ``foreach`` stages expanded, by job name."""
    import yaml

    from selfreflect.workflow import expanded

    stages = yaml.safe_load((project / "dvc.yaml").read_text())["stages"]
    return {job_name(name): stage for name, stage in expanded(stages).items()}


def commit_all(project: Path, message: str) -> None:
    run(["git", "add", "-A"], project)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], project)


def clone_completed(project: Path, dest: Path) -> Path:
    """A copy of a project that has run, with its results and Snakemake's metadata."""
    shutil.copytree(project, dest, symlinks=True)
    return dest


def run_env(cwd: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a command run in ``cwd`` (with the variables ``env`` set): a project
    copy runs its own code."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    if (Path(cwd) / "src" / "selfreflect").is_dir():
        env["PYTHONPATH"] = os.pathsep.join([str(Path(cwd) / "src"), env.get("PYTHONPATH", "")])
    return env


def run(
    args: list[str], cwd: Path, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run ``args`` in ``cwd`` (with the variables ``env`` set), output captured."""
    result = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=run_env(cwd, env))
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    return result


def snakemake(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    base = [
        "snakemake",
        "--configfile",
        "config/smoke.yaml",
        "--cores",
        "2",
        "--resources",
        "gpu=1",
    ]
    return run([*base, *args], cwd, check=check)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def job_resources(plan: str) -> list[tuple[str, str]]:
    """(rule, resources line) of each job of a Snakemake dry run's printed plan."""
    return [(rule, resources) for rule, resources, _ in job_commands(plan)]


def job_commands(plan: str) -> list[tuple[str, str, str]]:
    """(rule, resources line, shell command or "") of each job of a Snakemake dry run's printed
    plan (``printshellcmds``, as the default profile sets)."""
    jobs = re.findall(r"^rule (\w+):\n(.*?)(?=^rule |\Z)", plan, flags=re.M | re.S)
    return [
        (
            rule,
            re.search(r"^    resources: (.*)$", body, flags=re.M)[1],
            next(iter(re.findall(r"^Shell command: (.*)$", body, flags=re.M)), ""),
        )
        for rule, body in jobs
    ]
