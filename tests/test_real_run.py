"""`selfreflect bench real-run`: the Snakemake arguments it is given reach the run it times."""

import pytest

from selfreflect.bench.real_run import measure
from tests.conftest import REPO

pytestmark = pytest.mark.workflow


def test_added_snakemake_arguments_reach_the_timed_run(monkeypatch):
    monkeypatch.chdir(REPO)  # the run copies the project's tracked files from here
    record = measure("config/smoke.yaml", "1", install=False, snakemake_args=["--dry-run"])
    assert record["returncode"] == 0, record["error_tail"]
    assert record["command"].endswith(" --resources gpu=1 --dry-run")
    assert record["snakemake_args"] == ["--dry-run"]
    # a dry run: nothing was computed, so the smoke DAG wrote no report
    assert record["reports"] == [] and record["main_table"] is None
