"""Snakemake takes DVC's record for the outputs DVC made (selfreflect.dvc_record), on a one-stage
DVC project: vouched outputs are dated after their inputs (by the run proper: a dry run changes
nothing), outputs DVC made with other settings stop the run unless forced (whether or not
params.yaml still holds those), and outputs Snakemake made (recorded with `dvc commit`), changed
since, or of another run are left to Snakemake. And on a copy of the DVC smoke run: planning
changes nothing."""

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from selfreflect.dvc_record import align_with_dvc
from selfreflect.errors import ConfigError
from tests.workflow_utils import clone_completed, run, snakemake

OUT, PART = "reports/r/out.txt", "reports/r/part.txt"  # PART: a Snakemake temp file
BENCHMARK = "benchmarks/r/table.tsv"  # a Snakemake run's benchmark file of the stage's job
DVC_MADE, SNAKEMAKE_MADE = (lambda path: False), (lambda path: path == OUT)  # Snakemake's records
STAGE = {
    "cmd": [f"mkdir -p reports/r && cp in.txt {PART}", f"cp {PART} {OUT}"],
    "deps": ["in.txt"],
    "params": ["report.baseline"],
    "meta": {"temporary": [PART], "benchmarks": [BENCHMARK]},
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
    """To the nanosecond (Snakemake reruns a job whose input is newer by any amount), with the
    stage's temporary files and, where a Snakemake run left one, its benchmark file."""
    restored = 2_000_000_000_123_456_789  # as `dvc checkout` leaves a restored file (later)
    (project / BENCHMARK).parent.mkdir(parents=True)
    (project / BENCHMARK).write_text("s\n1\n")
    os.utime(project / "in.txt", ns=(restored, restored))
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE)
    for path in (OUT, PART, BENCHMARK):
        assert (project / path).stat().st_mtime_ns == restored, path


def test_a_folder_snakemake_made_is_dated_by_its_timestamp_file(project):
    """Snakemake takes a folder output's time from its `.snakemake_timestamp` (after `dvc pull`
    wrote its files in any order, the folder's own time is not what Snakemake reads)."""
    folder = "reports/r/folder"
    made = f"mkdir -p {folder} && cp in.txt {folder}/a.txt && touch {folder}/.snakemake_timestamp"
    stage = {"cmd": made, "deps": ["in.txt"], "outs": [folder]}  # as Snakemake makes a folder
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"f": stage}}))
    run(["dvc", "repro", "-q"], project)
    restored = 2_000_000_000_123_456_789
    os.utime(project / "in.txt", ns=(restored, restored))
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE)
    assert (project / folder / ".snakemake_timestamp").stat().st_mtime_ns == restored


def test_a_dry_run_dates_nothing_and_says_so(project):
    os.utime(project / "in.txt", (2e9, 2e9))
    before = (project / OUT).stat().st_mtime
    with pytest.raises(ConfigError) as err:
        align_with_dvc(config("greedy"), "c.yaml", DVC_MADE, dry_run=True)
    assert str(err.value) == (
        "c.yaml: 2 outputs DVC vouches for (dvc.lock) are dated before their inputs, as `dvc "
        f"checkout` leaves them (first: {PART}); a dry run changes nothing: snakemake without "
        "-n dates them before it plans"
    )
    assert (project / OUT).stat().st_mtime == before


def test_package_code_dates_nothing(project):
    """Snakemake compares the package code by content (an ancient input), not by timestamp: a
    code file `git checkout` rewrote unchanged reruns nothing, so it dates nothing."""
    code = project / "src/selfreflect/x.py"
    code.parent.mkdir(parents=True)
    code.write_text("")
    stage = {**STAGE, "deps": ["in.txt", "src/selfreflect/x.py"], "outs": [OUT]}
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"table": stage}}))
    run(["dvc", "repro", "-q"], project)
    os.utime(code, (2e9, 2e9))
    align_with_dvc(config("greedy"), "c.yaml", DVC_MADE, dry_run=True)
    assert (project / OUT).stat().st_mtime < 2e9


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


def test_the_snakemake_internals_the_rules_read_are_there():
    """While the DAG is built, workflow/rules/common.smk reads Snakemake's workflow object, no
    public interface (pyproject pins snakemake below 10): an upgrade dropping one fails here."""
    from importlib.metadata import version

    import snakemake.api  # noqa: F401  (snakemake.workflow is imported through it)
    from snakemake.persistence import PersistenceBase
    from snakemake.settings.types import DAGSettings
    from snakemake.workflow import Workflow

    read = {
        "Workflow.dryrun": isinstance(getattr(Workflow, "dryrun", None), property),
        "Workflow.persistence": isinstance(getattr(Workflow, "persistence", None), property),
        "Workflow.dag_settings": hasattr(Workflow, "dag_settings"),
        "PersistenceBase.metadata": callable(getattr(PersistenceBase, "metadata", None)),
        "DAGSettings.forceall": "forceall" in DAGSettings.__dataclass_fields__,
        "DAGSettings.forcerun": "forcerun" in DAGSettings.__dataclass_fields__,
    }
    missing = [name for name, there in read.items() if not there]
    assert not missing, f"snakemake {version('snakemake')} lacks {missing}"


def mtimes(project: Path) -> dict[str, int]:
    return {
        str(path): path.stat().st_mtime_ns
        for top in ("results", "reports")
        for path in (project / top).rglob("*")
    }


@pytest.mark.workflow
def test_planning_changes_nothing(smoke_dvc_run, tmp_path):
    """Dry runs of a finished run DVC recorded, two at once, after `git checkout` rewrote a
    code file unchanged, leave every timestamp under results/ and reports/ as it was."""
    project = clone_completed(smoke_dvc_run, tmp_path / "p")
    os.utime(project / "src/selfreflect/cli/__init__.py")
    before = mtimes(project)
    with ThreadPoolExecutor(2) as pool:
        plans = list(pool.map(lambda _: snakemake(project, "-n").stdout, range(2)))
    assert all("Nothing to be done" in plan for plan in plans), plans
    assert mtimes(project) == before
