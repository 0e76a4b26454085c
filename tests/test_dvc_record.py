"""Snakemake takes DVC's record for the outputs DVC made (selfreflect.dvc_record), on a one-stage
DVC project: vouched outputs are dated after their inputs, outputs made with other settings stop
the run unless forced, and outputs DVC itself would rerun are left to Snakemake."""

import os
from pathlib import Path

import pytest
import yaml

from selfreflect.dvc_record import align_with_dvc
from selfreflect.errors import ConfigError
from tests.workflow_utils import run

STAGE = {
    "cmd": ["cp in.txt part.txt", "cp part.txt out.txt"],  # part.txt: a Snakemake temp file
    "deps": ["in.txt"],
    "params": ["report.baseline"],
    "meta": {"temporary": ["part.txt"]},
}


def config(baseline: str) -> dict:
    return {"report": {"baseline": baseline, "confidence": 0.95}}


def write_params(project: Path, baseline: str) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(config(baseline)))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A DVC project whose one stage `table` ran with report.baseline=greedy."""
    run(["git", "init", "-q"], tmp_path)
    run(["dvc", "init", "-q"], tmp_path)
    (tmp_path / "in.txt").write_text("answers\n")
    write_params(tmp_path, "greedy")
    stages = {"stages": {"table": {**STAGE, "outs": ["out.txt"]}}}
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(stages))
    run(["dvc", "repro", "-q"], tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_restored_input_dates_the_vouched_outputs_after_it(project):
    os.utime(project / "in.txt", (2e9, 2e9))  # as `dvc checkout` leaves a restored file
    align_with_dvc(config("greedy"), "c.yaml")
    assert (project / "out.txt").stat().st_mtime == 2e9
    assert (project / "part.txt").stat().st_mtime == 2e9


def test_an_output_made_with_other_settings_stops_the_run_unless_forced(project):
    write_params(project, "basic")
    run(["dvc", "repro", "-q"], project)
    with pytest.raises(ConfigError) as err:
        align_with_dvc(config("greedy"), "c.yaml")
    assert str(err.value) == (
        "c.yaml: DVC made 1 jobs' outputs with another report.baseline (params.yaml, dvc.lock); "
        "rerun them: snakemake --configfile c.yaml --forcerun out.txt"
    )
    align_with_dvc(config("greedy"), "c.yaml", forced={"out.txt"})
    align_with_dvc(config("greedy"), "c.yaml", forced={"table"})
    align_with_dvc(config("basic"), "c.yaml")


def test_outputs_dvc_would_rerun_are_left_to_snakemake(project):
    """The config changed and params.yaml with it: both engines rerun the stage themselves."""
    write_params(project, "basic")
    os.utime(project / "in.txt", (2e9, 2e9))
    align_with_dvc(config("basic"), "c.yaml")
    assert (project / "out.txt").stat().st_mtime < 2e9
