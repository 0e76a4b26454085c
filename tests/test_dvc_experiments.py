"""DVC as its users expect, on copies of the session's DVC smoke run: experiments with `-S` that
never touch a config, readable metrics, and no stale table when switching to Snakemake."""

import base64
import csv
import io
import shutil
from pathlib import Path

import pytest

from selfreflect.snakemake_jobs import job_stats
from selfreflect.workflow import PARAMS_STAGE
from tests.conftest import built_once, session_root
from tests.workflow_utils import clone_completed, run, snakemake

pytestmark = pytest.mark.workflow

SETTING = "report.figure_dpi"  # left at its default by the smoke config
READERS = {
    "report_main_table",
    "report_validation",
    "report_mc_study",
    "report_convergence",
}  # rules that track it
JUDGES = {"judge", "report_alt_metrics"}


def clone(smoke_dvc_run: Path, dest: Path) -> Path:
    project = clone_completed(smoke_dvc_run, dest)
    for key, value in (("user.name", "t"), ("user.email", "t@t")):  # experiments commit
        run(["git", "config", key, value], project)
    return project


def dvc_sync(project: Path) -> None:
    run(["selfreflect", "dvc-sync", "--config", "config/smoke.yaml"], project)


def sync_line(project: Path) -> str:
    """The one line `snakemake -n` gives when `selfreflect dvc-sync` is due; it plans anyway."""
    planned = snakemake(project, "-n")
    (line,) = [line for line in planned.stderr.splitlines() if "selfreflect dvc-sync" in line]
    assert line.startswith("warning: config/smoke.yaml: "), line  # shown relative, not absolute
    return line


def assert_reruns_nothing(project: Path) -> None:
    """After `selfreflect dvc-sync`, which dates the outputs DVC restored unchanged, Snakemake
    runs no job and asks for nothing more."""
    dvc_sync(project)
    planned = snakemake(project, "-n")
    assert job_stats(planned.stdout) == {} and "dvc-sync" not in planned.stderr
    done = snakemake(project)
    assert "Nothing to be done" in done.stdout + done.stderr, done.stderr


@pytest.fixture(scope="module")
def experiment(smoke_dvc_run, tmp_path_factory) -> tuple[Path, str]:
    """A copy of the DVC smoke run after `dvc exp run -S report.figure_dpi=100` (run once per
    session), and its log."""
    log = session_root(tmp_path_factory) / "experiment.log"

    def build(project: Path) -> None:
        clone(smoke_dvc_run, project)
        command = ["dvc", "exp", "run", "-n", "dpi100", "-S", f"{SETTING}=100"]
        log.write_text(run(command, project).stdout)

    return built_once(tmp_path_factory, "experiment", build), log.read_text()


def test_an_experiment_reruns_exactly_the_stages_that_read_the_setting(experiment):
    _, out = experiment
    ran = {line.split("'")[1] for line in out.splitlines() if line.startswith("Running stage")}
    assert ran == READERS | {PARAMS_STAGE}  # and the check of all of params.yaml


def test_an_experiment_leaves_the_configs_alone_and_dvc_compares_it(experiment):
    project, _ = experiment
    assert run(["git", "status", "--porcelain", "config/"], project).stdout == ""
    diff = run(["dvc", "params", "diff", "HEAD"], project).stdout
    assert any(line.split()[:3] == ["params.yaml", SETTING, "300"] for line in diff.splitlines())
    shown = run(["dvc", "exp", "show", "--csv"], project).stdout
    (row,) = [row for row in csv.DictReader(io.StringIO(shown)) if row["Experiment"] == "dpi100"]
    # a column is named by its key, prefixed by its file only where two files share the key
    (dpi,) = [value for column, value in row.items() if column.split(":")[-1] == SETTING]
    assert dpi == "100"
    headline = {column.split(":")[-1].split(".")[-1] for column, value in row.items() if value}
    assert {"mean", "pairs_correct", "median_rho", "pooled_rho"} <= headline
    metrics = run(["dvc", "metrics", "show"], project).stdout.splitlines()
    # one row per strategy: the main table's numbers
    assert any(line.startswith("reports/smoke/metrics/main/greedy.json") for line in metrics)
    assert max(map(len, metrics)) <= 250
    run(["dvc", "plots", "diff", "HEAD", "--out", "plots"], project)
    assert (project / "plots" / "index.html").is_file()


def test_snakemake_after_an_experiment_reruns_its_tables_and_no_judge(experiment, tmp_path):
    """The experiment's tables look up to date to Snakemake (it keeps no record of what DVC
    made): `snakemake -n` plans, saying in one line that `selfreflect dvc-sync` is due; a run
    has no job to stop before (Snakemake's "Nothing to be done"), so it says the same line and
    changes nothing; after the command, Snakemake remakes those tables and runs no judge."""
    project = clone_completed(experiment[0], tmp_path / "p")
    line = sync_line(project)
    assert f"outputs DVC made with another {SETTING} look up to date" in line
    table = project / "reports/smoke/tables/main.csv"
    made = table.stat().st_mtime_ns
    done = snakemake(project)
    assert line in done.stderr.splitlines() and table.stat().st_mtime_ns == made
    dvc_sync(project)
    counts = job_stats(snakemake(project, "-n").stdout)
    assert set(counts) == READERS and not JUDGES & set(counts)


def test_a_runs_config_overrides_are_in_the_command_that_dates_its_outputs(smoke_dvc_run, tmp_path):
    """`snakemake --config report={…}` over DVC's outputs made with the file's value: the
    warning's `dvc-sync` command repeats the override (without it, the command dated nothing
    and the warning came back); run as printed, Snakemake then remakes exactly the tables."""
    import shlex

    project = clone(smoke_dvc_run, tmp_path / "p")
    override = ["--config", 'report={"figure_dpi": 100}']
    planned = snakemake(project, "-n", *override)
    (line,) = [line for line in planned.stderr.splitlines() if "selfreflect dvc-sync" in line]
    command = line.split("`")[1]
    assert command == (
        'selfreflect dvc-sync --config config/smoke.yaml --set \'report={"figure_dpi": "100"}\''
    )
    assert "0 before" not in run(shlex.split(command), project).stdout
    planned = snakemake(project, "-n", *override)
    assert set(job_stats(planned.stdout)) == READERS and "dvc-sync" not in planned.stderr
    bad = run(
        ["selfreflect", "dvc-sync", "--config", "config/smoke.yaml", "--set", "x"],
        project,
        check=False,
    )
    assert bad.returncode == 1 and bad.stderr.startswith("error: --set: Invalid config")


def test_an_applied_experiment_snakemake_and_the_way_back(experiment, tmp_path):
    """`dvc exp apply`, then Snakemake with the committed config: the experiment's tables are
    stale; after Snakemake rebuilt them, `dvc status` says so; docs/dvc.md's way back to the
    committed state leaves both engines with nothing to do."""
    project = clone_completed(experiment[0], tmp_path / "p")
    run(["dvc", "exp", "apply", "dpi100"], project)
    assert f"outputs DVC made with another {SETTING}" in sync_line(project)
    dvc_sync(project)
    snakemake(project)
    changed = run(["dvc", "status"], project).stdout
    stages = {line.rstrip(":") for line in changed.splitlines() if not line.startswith("\t")}
    assert stages == READERS and "changed outs" in changed, changed
    run(["git", "checkout", "params.yaml", "dvc.lock"], project)
    run(["dvc", "checkout"], project)
    assert "up to date" in run(["dvc", "status"], project).stdout
    assert_reruns_nothing(project)


def test_an_applied_experiment_over_snakemakes_own_run_is_remade(experiment, smoke_run, tmp_path):
    """Snakemake made the run (its records hold each input's checksum), then `dvc exp apply`
    brought tables made with another setting: dated before their inputs, they still looked up to
    date (a newer input whose recorded checksum matches reruns nothing, profile
    `max-checksum-file-size`). `dvc-sync` also removes Snakemake's records of them, so that
    Snakemake remakes exactly those tables."""
    project = clone_completed(experiment[0], tmp_path / "p")
    records = project / ".snakemake" / "metadata"
    shutil.copytree(smoke_run / ".snakemake" / "metadata", records, dirs_exist_ok=True)
    run(["dvc", "exp", "apply", "dpi100"], project)
    dvc_sync(project)
    assert set(job_stats(snakemake(project, "-n").stdout)) == READERS


def test_snakemake_after_a_config_change_reruns_the_tables_dvc_made(smoke_dvc_run, tmp_path):
    """The config changed and params.yaml was regenerated: Snakemake keeps no record of what
    DVC made, so the tables DVC built with the old value must not count as up to date."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    config = project / "config/smoke.yaml"
    config.write_text(config.read_text() + "\nreport:\n  figure_dpi: 100\n")  # over the include
    run(["selfreflect", "dvc-yaml", "--config", "config/smoke.yaml", "--project", "."], project)
    assert f"outputs DVC made with another {SETTING} look up to date" in sync_line(project)
    dvc_sync(project)
    counts = job_stats(snakemake(project, "-n").stdout)
    assert set(counts) == READERS and not JUDGES & set(counts)


def test_snakemake_after_dvc_checkout_of_unchanged_data_reruns_nothing(smoke_dvc_run, tmp_path):
    """Snakemake keeps no record of DVC's run: a restored answer set would rerun what follows.
    A dry run plans and names `selfreflect dvc-sync`; a run stops with that line before its
    first job, changing nothing; after the command neither engine has anything to do."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    answers = project / "results/smoke/smoke/tiny/answers.parquet"
    answers.unlink()
    run(["dvc", "checkout", str(answers.relative_to(project))], project)
    line = sync_line(project)  # a dry run plans, dates nothing
    assert "dated before their inputs" in line
    table = project / "reports/smoke/tables/main.csv"
    made = table.stat().st_mtime_ns
    stopped = snakemake(project, check=False)
    assert stopped.returncode == 1
    assert stopped.stderr.strip().splitlines()[-1] == line.replace("warning: ", "error: ", 1)
    assert table.stat().st_mtime_ns == made
    assert_reruns_nothing(project)
    assert "up to date" in run(["dvc", "status"], project).stdout


def test_snakemake_after_dvc_remade_a_stage_of_its_run_reruns_only_what_follows(
    smoke_dvc_run, tmp_path
):
    """`dvc repro` of a stage over Snakemake's run: DVC writes the stage's shards and outputs
    anew and leaves Snakemake's benchmark file of its last job as it was. After `dvc-sync` no
    shard is newer than that file, so Snakemake does not remake the answers DVC vouches for."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    run(["dvc", "repro", "--force", "--single-item", "merge_answers@smoke-tiny"], project)
    dvc_sync(project)
    planned = job_stats(snakemake(project, "-n").stdout)
    assert not {"answers", "merge_answers"} & set(planned), planned


def test_a_bad_setting_stops_the_experiment_with_one_line_naming_it(smoke_dvc_run, tmp_path):
    project = clone(smoke_dvc_run, tmp_path / "p")
    failed = run(["dvc", "exp", "run", "-S", "report.confidence=2"], project, check=False)
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert errors and errors[0].startswith("error: params.yaml: report.confidence: 2 is")
    assert "Traceback" not in failed.stderr + failed.stdout


def test_a_key_typed_into_params_yaml_stops_dvc_with_one_line(smoke_dvc_run, tmp_path):
    """No other stage tracks an unknown key: DVC would call the run up to date."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    params = project / "params.yaml"
    params.write_text(params.read_text().replace("\nreport:\n", "\nreport:\n  baselin: basic\n"))
    failed = run(["dvc", "repro"], project, check=False)
    assert failed.returncode != 0
    assert "Running stage 'dvc_yaml'" in failed.stdout
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: params.yaml: report: Additional properties are not allowed ('baselin' was"
        " unexpected)"
    ]


def test_an_unknown_baseline_stops_the_experiment_with_one_line(smoke_dvc_run, tmp_path):
    """`-S report.baseline=nosuch` once made a main table with an empty comparison column."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    table = project / "reports/smoke/tables/main.csv"
    before = table.read_text()
    failed = run(["dvc", "exp", "run", "-S", "report.baseline=nosuch"], project, check=False)
    assert failed.returncode != 0
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error:")]
    assert errors and errors[0].startswith(
        "error: params.yaml: report.baseline: 'nosuch' is not a strategy of this run"
        " (summaries.strategies: greedy, basic,"
    )
    assert "Traceback" not in failed.stderr + failed.stdout
    # DVC removes a stage's outputs before its command runs; nothing is lost: dvc.lock still
    # records the last good table and `dvc checkout` brings it back from the cache
    run(["git", "checkout", "params.yaml"], project)
    assert "dvc.lock" not in run(["git", "status", "--porcelain"], project).stdout
    run(["dvc", "checkout"], project)
    assert table.read_text() == before


def test_snakemakes_records_of_files_dvc_replaced_are_removed(smoke_dvc_run, smoke_run, tmp_path):
    """A probe's case: Snakemake made the tables with another setting, then DVC put back the
    config's (here `dvc checkout`; a `dvc repro` after a config edit does the same). Snakemake's
    records still held the other setting, so after `dvc-sync` it planned to remake them ("Params
    have changed"). `dvc-sync` removes a record whose params are not its job's; the records of
    the files Snakemake made with the config's settings are kept."""
    project = clone(smoke_dvc_run, tmp_path / "p")
    records = project / ".snakemake" / "metadata"
    shutil.copytree(smoke_run / ".snakemake" / "metadata", records, dirs_exist_ok=True)
    other = 'report={"figure_dpi": 100}'  # Snakemake's --config takes a top-level key
    run(["selfreflect", "dvc-sync", "--config", "config/smoke.yaml", "--set", other], project)
    made = snakemake(project, "--config", other)
    assert set(job_stats(made.stdout + made.stderr)) == READERS
    run(["dvc", "checkout", "--force"], project)
    assert "up to date" in run(["dvc", "status"], project).stdout
    answers = "results/smoke/smoke/tiny/answers.parquet"
    record = records / base64.urlsafe_b64encode(answers.encode()).decode()
    assert record.is_file()
    assert_reruns_nothing(project)
    assert record.is_file()
