"""Snakemake takes DVC's record for the outputs DVC made (selfreflect.dvc_record), on a one-stage
DVC project: vouched outputs are dated after their inputs, outputs DVC made with other settings
stop the run unless forced (whether or not params.yaml still holds those), and outputs Snakemake
made (recorded with `dvc commit`), changed since, or of another run are left to Snakemake."""

import os
from pathlib import Path

import pytest
import yaml

from selfreflect.dvc_record import align_with_dvc
from selfreflect.errors import ConfigError
from tests.workflow_utils import run

OUT, PART = "reports/r/out.txt", "reports/r/part.txt"  # PART: a Snakemake temp file
DVC_MADE, SNAKEMAKE_MADE = (lambda path: False), (lambda path: path == OUT)  # Snakemake's records
STAGE = {
    "cmd": [f"mkdir -p reports/r && cp in.txt {PART}", f"cp {PART} {OUT}"],
    "deps": ["in.txt"],
    "params": ["report.baseline"],
    "meta": {"temporary": [PART]},
}


def config(baseline: str, run: str = "r") -> dict:
    return {"run": run, "report": {"baseline": baseline, "confidence": 0.95}}


def write_params(project: Path, baseline: str) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(config(baseline)))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A DVC project whose one stage `table` ran with report.baseline=greedy."""
    run(["git", "init", "-q"], tmp_path)
    run(["dvc", "init", "-q"], tmp_path)
    (tmp_path / "in.txt").write_text("answers\n")
    write_params(tmp_path, "greedy")
    stages = {"stages": {"table": {**STAGE, "outs": [OUT]}}}
    (tmp_path / "dvc.yaml").write_text(yaml.safe_dump(stages))
    run(["dvc", "repro", "-q"], tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_restored_input_dates_the_vouched_outputs_after_it(project):
    os.utime(project / "in.txt", (2e9, 2e9))  # as `dvc checkout` leaves a restored file
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE)
    assert (project / OUT).stat().st_mtime == 2e9
    assert (project / PART).stat().st_mtime == 2e9


def test_an_output_made_with_other_settings_stops_the_run_unless_forced(project):
    write_params(project, "basic")
    run(["dvc", "repro", "-q"], project)
    with pytest.raises(ConfigError) as err:
        align_with_dvc(config("greedy"), "c.yaml", DVC_MADE)
    assert str(err.value) == (
        "c.yaml: DVC made 1 jobs' outputs with another report.baseline (params.yaml, dvc.lock); "
        f"rerun them: snakemake --configfile c.yaml --forcerun {OUT}"
    )
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE, forced={OUT})
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE, forced={"table"})
    align_with_dvc(config("basic"), "c.yaml", DVC_MADE)


def test_outputs_dvc_made_before_the_config_changed_stop_the_run(project):
    """The config changed and params.yaml was regenerated from it: Snakemake has no record of
    the output DVC made, so only DVC's record can tell that it is stale."""
    write_params(project, "basic")
    with pytest.raises(ConfigError, match=r"with another report\.baseline"):
        align_with_dvc(config("basic"), "c.yaml", DVC_MADE)
    # made by Snakemake and recorded with `dvc commit`: Snakemake's records see the change
    align_with_dvc(config("basic"), "c.yaml", SNAKEMAKE_MADE)


def test_outputs_changed_since_or_of_another_run_are_left_to_snakemake(project):
    align_with_dvc(config("basic", run="other"), "c.yaml", DVC_MADE)  # no stage of run "other"
    align_with_dvc(
        {"run": "r"}, "c.yaml", DVC_MADE
    )  # a config without the setting: another workflow
    (project / OUT).write_text("rewritten by Snakemake\n")
    os.utime(project / "in.txt", (2e9, 2e9))
    align_with_dvc(config("basic"), "c.yaml", DVC_MADE)
    assert (project / OUT).stat().st_mtime < 2e9
