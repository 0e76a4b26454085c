"""The workflow deployed as a Snakemake module (docs/deploy.md). In a folder of its own, a
workflow/Snakefile as `snakedeploy deploy-workflow` writes it (with the onstart line the page
adds) uses a release's workflow/Snakefile, from a local path or from the release's git tag; the
package is installed from that tag (pip), not imported from a checkout; the folder holds the
release's config/, data/ and examples/ (what the smoke config names). The smoke config runs to
its main table there (half its DAG: sampling, summaries, judge and scores of one dataset), its
jobs' code inputs are the installed package's files, and the tag's module plans the same run."""

from __future__ import annotations

import os
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from selfreflect import __version__
from selfreflect.snakemake_jobs import job_stats
from tests.workflow_utils import copy_project, run

pytestmark = pytest.mark.workflow

TAG = f"v{__version__}"
SNAKEFILE = """\
configfile: "config/smoke.yaml"


module selfreflect_workflow:
    snakefile:
        {source}
    config:
        config


use rule * from selfreflect_workflow


onstart:
    selfreflect_workflow.onstart()
"""
STRATEGIES = ["greedy", "majority_vote"]  # the baseline and the plug-in (examples/plugins.py)
REPORT = "reports/smoke/tables/main.csv"  # the one target: the jobs of the main table


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """The project's git repository, its commit tagged as the release."""
    repo = copy_project(tmp_path_factory.mktemp("release") / "repo")
    run(["git", "tag", TAG], repo)
    return repo


@pytest.fixture(scope="module")
def site(release, tmp_path_factory) -> Path:
    """The package as pip installs it from the release's tag: its files, package data
    included, in a folder of their own (``--target``), with its ``selfreflect`` command."""
    target = tmp_path_factory.mktemp("site")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
    run([*pip, "--target", str(target), f"git+file://{release}@{TAG}"], target)
    return target


def installed(site: Path) -> dict[str, str]:
    """The variables that make a run use the installed package, ahead of any other copy."""
    return {"PYTHONPATH": str(site), "PATH": f"{site / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def snakemake(folder: Path, site: Path, *args: str) -> str:
    """``snakemake ARGS`` in the deployment ``folder``; what it printed (its jobs, with their
    inputs, on standard error)."""
    command = ["snakemake", *args, REPORT, "--cores", "2", "--resources", "gpu=1"]
    result = run(command, folder, env=installed(site))
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def deployed(release, site, tmp_path_factory) -> tuple[Path, str]:
    """A deployment of the release's workflow from its local path (config/, data/ and
    examples/ taken from the tag, its config cut to :data:`STRATEGIES`) after Snakemake ran
    the smoke config's main table there, and what it printed."""
    folder = tmp_path_factory.mktemp("deployed") / "analysis"
    archive = folder.parent / "release.tar"
    run(["git", "archive", "--output", str(archive), TAG, "config", "data", "examples"], release)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    config = folder / "config" / "smoke.yaml"  # the folder's own config: two strategies suffice
    settings = yaml.safe_load(config.read_text())
    settings["summaries"]["strategies"] = STRATEGIES
    config.write_text(yaml.safe_dump(settings))
    source = f'"{release / "workflow" / "Snakefile"}"'
    (folder / "workflow").mkdir()
    (folder / "workflow" / "Snakefile").write_text(SNAKEFILE.format(source=source), "utf-8")
    return folder, snakemake(folder, site)


def test_the_smoke_config_runs_as_a_module_on_the_installed_package(deployed, site):
    """The run ends with its main table; every job's code inputs are the installed package's
    files (and the plug-in strategy's module of the folder), none of a checkout."""
    folder, printed = deployed
    assert (folder / REPORT).is_file()
    assert not (folder / "src").exists()
    inputs = {
        path
        for line in printed.splitlines()
        if line.strip().startswith("input:")
        for path in line.split(":", 1)[1].strip().split(", ")
    }
    code = {path for path in inputs if path.endswith(".py")}
    assert "examples/plugins.py" in code
    assert all(Path(path).is_relative_to(site) for path in code - {"examples/plugins.py"}), code


def test_the_release_tag_as_the_module_plans_the_same_run(deployed, release, site):
    """The workflow from the tag of a local clone (Snakemake's ``gitfile``, no network) is the
    run's own: nothing to do."""
    folder, _ = deployed
    source = f'gitfile("{release}", path="workflow/Snakefile", tag="{TAG}")'
    (folder / "tagged.smk").write_text(SNAKEFILE.format(source=source), "utf-8")
    assert job_stats(snakemake(folder, site, "-n", "--snakefile", "tagged.smk")) == {}


def test_an_edit_of_the_installed_package_reruns_the_jobs_that_run_it(deployed, site):
    """The code inputs of a deployment mean what they mean in a checkout: editing the
    installed metric reruns the judge pass and the scores, not the sampling or summaries."""
    folder, _ = deployed
    metric = site / "selfreflect" / "scoring" / "metric.py"
    text = metric.read_text(encoding="utf-8")
    metric.write_text(text + "\n# an edit\n", encoding="utf-8")
    try:
        jobs = set(job_stats(snakemake(folder, site, "-n")))
    finally:
        metric.write_text(text, encoding="utf-8")
    assert {"judge", "strategy_scores"} <= jobs and not {"answers", "summarize"} & jobs, jobs
