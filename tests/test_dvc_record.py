"""`selfreflect dvc-sync` (selfreflect.dvc_record) dates the outputs DVC made so that Snakemake
reruns what DVC would, on a one-stage DVC project: vouched outputs after their inputs, outputs
DVC made with other settings before them (whether or not params.yaml still holds those), outputs
changed since or of another run left to Snakemake; planning it changes nothing. And on a copy
of the DVC smoke run: Snakemake plans after DVC's commands, says in one line when `selfreflect
dvc-sync` is due, and neither planning nor listing the targets changes a file."""

import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from selfreflect.dvc_record import dvc_sync, sync_plan
from selfreflect.errors import ConfigError
from tests.workflow_utils import clone_completed, run, snakemake

OUT, PART = "reports/r/out.txt", "reports/r/part.txt"  # PART: a Snakemake temp file
BENCHMARK = "benchmarks/r/table.tsv"  # a Snakemake run's benchmark file of the stage's job
STAGE = {
    "cmd": [f"mkdir -p reports/r && cp in.txt {PART}", f"cp {PART} {OUT}"],
    "deps": ["in.txt"],
    "params": ["report.baseline"],
    "meta": {"temporary": [PART], "benchmarks": [BENCHMARK]},
}
QUESTIONS = "results/smoke/smoke/questions.parquet"  # of the smoke run
RESTORED = 2_000_000_000_123_456_789  # as `dvc checkout` leaves a restored file (later)


def config(baseline: str, run: str = "r") -> dict:
    return {"run": run, "report": {"baseline": baseline, "confidence": 0.95}}


def write_params(project: Path, baseline: str) -> None:
    (project / "params.yaml").write_text(yaml.safe_dump(config(baseline)))


def mtime(project: Path, path: str) -> int:
    return (project / path).stat().st_mtime_ns


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
    stage's temporary files and, where a Snakemake run left one, its benchmark file; planning
    it changes nothing, and once done there is nothing left to do."""
    (project / BENCHMARK).parent.mkdir(parents=True)
    (project / BENCHMARK).write_text("s\n1\n")
    os.utime(project / "in.txt", ns=(RESTORED, RESTORED))
    before = {path: mtime(project, path) for path in (OUT, PART, BENCHMARK)}
    plan = sync_plan(config("greedy"))
    assert set(plan.after) == {OUT, PART, BENCHMARK} and not plan.before
    assert {path: mtime(project, path) for path in before} == before
    dvc_sync(config("greedy"), "c.yaml")
    for path in (OUT, PART, BENCHMARK):
        assert mtime(project, path) == RESTORED, path
    assert not sync_plan(config("greedy"))


def test_a_temporary_file_newer_than_the_stage_s_benchmark_file_is_dated_as_its_input(project):
    """`dvc repro` wrote the stage's shard anew and left an earlier Snakemake run's benchmark
    file: the shard, newer than it, would make Snakemake rerun the stage's last job. A shard
    older than what the stage leaves (a plain `dvc repro`) stays as it is."""
    (project / BENCHMARK).parent.mkdir(parents=True)
    (project / BENCHMARK).write_text("s\n1\n")
    made = mtime(project, "in.txt")
    os.utime(project / BENCHMARK, ns=(made, made))
    assert sync_plan(config("greedy")).after == {PART: made}


def test_a_reader_of_a_re_dated_output_is_dated_after_that_output_s_new_time(project):
    """A second stage reads the first's output: it is dated by the time that output gets, not
    by the one it has on disk, so after the sync neither stage is older than its inputs."""
    reader = {"cmd": f"cp {OUT} reports/r/summary.txt", "deps": [OUT]}
    reader["outs"] = ["reports/r/summary.txt"]
    stages = {"table": {**STAGE, "outs": [OUT]}, "summary": reader}
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": stages}))
    run(["dvc", "repro", "-q"], project)
    os.utime(project / "in.txt", ns=(RESTORED, RESTORED))
    assert sync_plan(config("greedy")).after["reports/r/summary.txt"] == RESTORED
    dvc_sync(config("greedy"), "c.yaml")
    assert not sync_plan(config("greedy"))


def test_a_folder_snakemake_made_is_dated_by_its_timestamp_file(project):
    """Snakemake takes a folder output's time from its `.snakemake_timestamp` (after `dvc pull`
    wrote its files in any order, the folder's own time is not what Snakemake reads)."""
    folder = "reports/r/folder"
    made = f"mkdir -p {folder} && cp in.txt {folder}/a.txt && touch {folder}/.snakemake_timestamp"
    stage = {"cmd": made, "deps": ["in.txt"], "outs": [folder]}  # as Snakemake makes a folder
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"f": stage}}))
    run(["dvc", "repro", "-q"], project)
    os.utime(project / "in.txt", ns=(RESTORED, RESTORED))
    dvc_sync(config("greedy"), "c.yaml")
    assert mtime(project, f"{folder}/.snakemake_timestamp") == RESTORED


def test_a_folder_without_a_timestamp_file_is_dated_itself(project):
    """A folder `dvc repro` made holds no `.snakemake_timestamp`: Snakemake takes the folder's
    own time, which is the one dated (and no timestamp file is made)."""
    folder = "reports/r/folder"
    made = f"mkdir -p {folder} && cp in.txt {folder}/a.txt"
    stage = {"cmd": made, "deps": ["in.txt"], "outs": [folder]}
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"f": stage}}))
    run(["dvc", "repro", "-q"], project)
    os.utime(project / "in.txt", ns=(RESTORED, RESTORED))
    dvc_sync(config("greedy"), "c.yaml")
    assert mtime(project, folder) == RESTORED
    assert not (project / folder / ".snakemake_timestamp").exists()


def test_the_plan_is_one_line_naming_the_command(project):
    os.utime(project / "in.txt", (2e9, 2e9))
    assert sync_plan(config("greedy")).message("c.yaml") == (
        "c.yaml: 2 outputs DVC vouches for are dated before their inputs (dvc.lock; first: "
        f"{OUT}): `selfreflect dvc-sync --config c.yaml` re-dates them, so that Snakemake reruns "
        "only what the config changed"
    )


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
    assert not sync_plan(config("greedy"))


@pytest.mark.parametrize("changed", ["src/selfreflect/x.py", "src/selfreflect/prompts.yaml"])
def test_outputs_dvc_made_by_other_code_or_prompts_are_dated_before_their_inputs(project, changed):
    """A code file or prompt text edited after DVC made the outputs: Snakemake, which compares
    code by a hash it records only for its own jobs, would call them up to date; dated before
    their input, they are remade. Once remade (newer than the edit, here to the same bytes),
    they are Snakemake's to judge, and no longer dated."""
    code, prompts = project / "src/selfreflect/x.py", project / "src/selfreflect/prompts.yaml"
    code.parent.mkdir(parents=True)
    code.write_text("A = 1\n")
    prompts.write_text("basic: Hedge.\n")
    stage = {
        **STAGE,
        "deps": ["in.txt", "src/selfreflect/x.py"],
        "params": ["report.baseline", {"src/selfreflect/prompts.yaml": ["basic"]}],
        "outs": [OUT],
    }
    (project / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"table": stage}}))
    run(["dvc", "repro", "-q"], project)
    edited = project / changed
    edited.write_text(edited.read_text().replace("1", "2").replace("Hedge", "Hedge more"))
    os.utime(edited, ns=(RESTORED, RESTORED))
    plan = sync_plan(config("greedy"))
    assert set(plan.before) == {OUT, PART} and plan.keys == (changed,)
    assert f"outputs DVC made with another {changed} look up to date" in plan.message("c")
    dvc_sync(config("greedy"), "c.yaml")
    assert mtime(project, OUT) == mtime(project, "in.txt") - 1_000_000_000
    later = RESTORED + 1
    for path in (OUT, PART):  # remade by Snakemake after the edit, to the recorded bytes
        os.utime(project / path, ns=(later, later))
    assert not sync_plan(config("greedy")).before


@pytest.mark.parametrize("params", ["basic", "greedy"])
def test_outputs_dvc_made_with_other_settings_are_dated_before_their_inputs(project, params):
    """Made with report.baseline=basic while the config says greedy, params.yaml still holding
    basic (after `dvc exp apply`) or regenerated from the config since: Snakemake, which keeps
    no record of what DVC made, would call them up to date; dated a second before their newest
    input (with the stage's temporary files: its jobs rerun, not just the last), it remakes
    them."""
    write_params(project, "basic")
    run(["dvc", "repro", "-q"], project)
    write_params(project, params)
    plan = sync_plan(config("greedy"))
    assert set(plan.before) == {OUT, PART} and plan.keys == ("report.baseline",)
    assert "outputs DVC made with another report.baseline look up to date" in plan.message("c")
    dvc_sync(config("greedy"), "c.yaml")
    for path in (OUT, PART):
        assert mtime(project, path) == mtime(project, "in.txt") - 1_000_000_000, path
    assert not sync_plan(config("greedy"))
    # for the config they were made with, they are vouched for: dated after their input again
    assert set(sync_plan(config("basic")).after) == {OUT, PART}


def test_a_stale_output_without_an_input_to_date_it_before_names_the_forced_rerun(project):
    """A ``foreach`` stage's (``table@r``): a rerun forced by its rule's name needs none."""
    stage = {
        "cmd": "mkdir -p reports/${item.run} && echo x > reports/${item.run}/out.txt",
        "params": ["report.baseline"],
        "outs": ["reports/${item.run}/out.txt"],
    }
    (project / "dvc.yaml").write_text(
        yaml.safe_dump({"stages": {"table": {"foreach": {"r": {"run": "r"}}, "do": stage}}})
    )
    run(["dvc", "repro", "-q"], project)
    with pytest.raises(ConfigError) as err:
        dvc_sync(config("basic"), "c.yaml")
    assert str(err.value) == (
        "c.yaml: DVC made 1 jobs' outputs with another report.baseline (params.yaml, dvc.lock); "
        f"rerun them: snakemake --configfile c.yaml --forcerun {OUT}"
    )
    plan = sync_plan(config("basic"))
    assert plan.unforced({OUT}) is not plan and not plan.unforced({OUT})
    assert not plan.unforced({"table"}) and plan.unforced({"other"})


def test_outputs_changed_since_or_of_another_run_are_left_to_snakemake(project):
    assert not sync_plan(config("basic", run="other"))  # no stage of run "other"
    assert not sync_plan({"run": "r"})  # a config without the setting: another workflow
    (project / OUT).write_text("rewritten by Snakemake\n")
    os.utime(project / "in.txt", (2e9, 2e9))
    assert not sync_plan(config("basic"))


def test_a_stage_whose_input_or_output_changed_since_dvc_recorded_it_is_left_to_snakemake(
    project,
):
    """Newer than the output, an input DVC did not record (edited since) or the input as
    recorded beside an output rewritten since: DVC vouches for neither, nothing is dated."""
    (project / "in.txt").write_text("other answers\n")
    assert not sync_plan(config("greedy"))
    (project / "in.txt").write_text("answers\n")
    (project / OUT).write_text("rewritten by Snakemake\n")
    os.utime(project / "in.txt", ns=(RESTORED, RESTORED))
    assert not sync_plan(config("greedy"))


def test_a_copy_without_git_has_no_record_to_date(project):
    """A release archive (no .git): DVC cannot open its project, so Snakemake plans on the files
    as they are instead of failing on DVC's "not a git repository"."""
    assert sync_plan(config("basic"))  # made with another baseline: dated before its input
    shutil.rmtree(project / ".git")
    assert not sync_plan(config("basic"))


def test_the_snakemake_internals_the_rules_read_are_there():
    """While the Snakefile is read and when a run starts, workflow/rules/common.smk reads
    Snakemake's workflow object, and dvc-sync its records (those of `--cleanup-metadata`), no
    public interface (pyproject pins snakemake below 10): an upgrade dropping one fails here."""
    from importlib.metadata import version

    import snakemake.api  # noqa: F401  (snakemake.workflow is imported through it)
    from snakemake.persistence.file import FilePersistence
    from snakemake.settings.types import DAGSettings
    from snakemake.workflow import Workflow

    read = {
        "FilePersistence.metadata": callable(getattr(FilePersistence, "metadata", None)),
        "FilePersistence.cleanup_metadata": callable(
            getattr(FilePersistence, "cleanup_metadata", None)
        ),
        "Workflow.is_main_process": isinstance(
            getattr(Workflow, "is_main_process", None), property
        ),
        "Workflow.dag_settings": hasattr(Workflow, "dag_settings"),
        "DAGSettings.forceall": "forceall" in DAGSettings.__dataclass_fields__,
        "DAGSettings.forcerun": "forcerun" in DAGSettings.__dataclass_fields__,
    }
    missing = [name for name, there in read.items() if not there]
    assert not missing, f"snakemake {version('snakemake')} lacks {missing}"


def mtimes(project: Path) -> dict[str, int]:
    return {
        str(path): path.stat().st_mtime_ns
        for top in ("results", "reports", "benchmarks")
        for path in (project / top).rglob("*")
    }


@pytest.mark.workflow
def test_after_dvc_commit_and_checkout_snakemake_plans_and_dvc_sync_leaves_nothing_to_run(
    smoke_run, tmp_path
):
    """A Snakemake run recorded with `dvc commit` (which may rewrite files in any order):
    `snakemake -n` plans (exit 0). After `dvc checkout` restored its questions (dated after
    every output that follows; Snakemake's checksums call them unchanged) it still plans, with
    one line naming `selfreflect dvc-sync`; neither it nor listing the targets changes a file;
    after the command nothing is left to run, and the line is gone."""
    project = clone_completed(smoke_run, tmp_path / "p")
    run(["dvc", "commit", "--force", "--quiet"], project)
    snakemake(project, "-n")  # exits 0
    (project / QUESTIONS).unlink()
    run(["dvc", "checkout", QUESTIONS], project)
    before = mtimes(project)
    planned = snakemake(project, "-n")
    lines = [line for line in planned.stderr.splitlines() if "selfreflect dvc-sync" in line]
    assert len(lines) == 1 and "dated before their inputs" in lines[0], planned.stderr
    assert "`selfreflect dvc-sync --config config/smoke.yaml` re-dates them" in lines[0]
    listed = run(["snakemake", "--configfile", "config/smoke.yaml", "--list-target-rules"], project)
    assert "all" in listed.stdout.split()
    assert mtimes(project) == before
    run(["selfreflect", "dvc-sync", "--config", "config/smoke.yaml"], project)
    planned = snakemake(project, "-n")
    assert "Nothing to be done" in planned.stdout and "dvc-sync" not in planned.stderr


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


def test_a_run_without_a_lock_plans_without_importing_dvc(tmp_path):
    """Snakemake's start reads the plan: where DVC recorded nothing, DVC is not imported (a
    machine with the workflow's requirements but not DVC's, a lent GPU, runs the DAG)."""
    check = (
        "import sys; from selfreflect.dvc_record import sync_plan; "
        "assert not sync_plan({'run': 'r'}); assert 'dvc' not in sys.modules"
    )
    run(["python3", "-c", check], tmp_path)
