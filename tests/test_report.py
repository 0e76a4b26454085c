"""The report's DAG: experiment matrix expansion, and the smoke tables, figures and report."""

import json
import re

import pandas as pd
import pytest
import yaml

from selfreflect.config import read_config_file
from selfreflect.report.catalog import MAIN_METRICS
from selfreflect.report.runner import json_safe
from tests.conftest import MINIMAL_CONFIG, REPO
from tests.workflow_utils import copy_project, run, snakemake

pytestmark = pytest.mark.workflow

TABLES = ["main", "validation", "mc_study", "convergence", "cost", "human_agreement"]
FIGURES = ["main", "validation", "mc_study", "convergence"]


def test_matrix_config_expands_over_subjects_and_datasets(tmp_path):
    """Every per-experiment job runs once per dataset and subject; the judge backend agreement
    (off by default) is switched on to show its job does too."""
    project = copy_project(tmp_path / "p", config="config/matrix.yaml")
    config = project / "config" / "matrix.yaml"
    matrix = read_config_file(config)
    matrix["report"]["agreement_backends"] = ["reference"]
    config.write_text(yaml.safe_dump(matrix))
    result = run(["snakemake", "-n", "--configfile", "config/matrix.yaml", "--cores", "1"], project)
    out = result.stdout
    for dataset in ("smoke", "smoke_mmlu"):
        for subject in ("tiny", "tiny-b"):
            studies = f"results/matrix/{dataset}/{subject}/studies/tiny"
            for study in ("controlled", "mc", "convergence", "agreement"):
                assert f"{studies}/{study}.parquet" in out
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", out, re.M))
    assert jobs["report_controlled_scores"] == "4" and jobs["report_main_table"] == "1"
    assert jobs["report_agreement_scores"] == "4" and jobs["report_backend_agreement"] == "1"


def assert_tables_and_figures(project):
    reports = project / "reports" / "smoke"
    for name in TABLES:
        table = pd.read_csv(reports / "tables" / f"{name}.csv")
        assert len(table) > 0, name
        assert (reports / "tables" / f"{name}.md").read_text().strip()
        assert "\\begin{table}" in (reports / "tables" / f"{name}.tex").read_text()
    for name in FIGURES:
        assert (reports / "figures" / f"{name}.png").read_bytes().startswith(b"\x89PNG")
        assert (reports / "figures" / f"{name}.pdf").read_bytes().startswith(b"%PDF")
    config = read_config_file(project / "config" / "smoke.yaml")
    main = pd.read_csv(reports / "tables" / "main.csv")
    assert set(main["strategy"]) == set(config["summaries"]["strategies"])
    assert set(main["dataset"]) == set(config["summaries"]["datasets"])
    assert (main["n_scored"] + main["n_failed"]).eq(config["questions"]["num_questions"]).all()
    metrics = json.loads((reports / "metrics" / "validation.json").read_text())
    assert 0 <= metrics["smoke"]["pairs_correct"] <= 1  # one subject and judge: keyed by dataset
    for row in main.to_dict("records"):  # one computation: the DVC metrics are the table's
        metrics = reports / "metrics" / "main" / f"{row['strategy']}.json"
        assert json.loads(metrics.read_text()) == pytest.approx(
            {field: json_safe(row[field]) for field in MAIN_METRICS}
        )


def test_snakemake_builds_every_table_figure_and_the_report(smoke_run):
    assert_tables_and_figures(smoke_run)
    snakemake(smoke_run, "--report", "report.html")
    html = (smoke_run / "report.html").read_text(errors="replace")
    assert len(html) > 10_000 and "Metric validation" in html
    # captions say what the tables compute: a 95 % interval (not "0.95 percentile"), over the
    # questions every strategy scored; the MC study's distance is to the truth (line breaks in
    # the page's data are written \n)
    space = r"(?:\s|\\n)+"
    assert re.search(rf"every strategy{space}scored with a 95 % percentile{space}bootstrap", html)
    assert re.search(r"1-Wasserstein distance \(0/1 ground metric\) to the truth", html)


def test_a_runs_report_is_recorded_per_judge_and_renders_the_science_doc(smoke_run, tmp_path):
    """``bench science-record`` keeps a judge's report rows and the run's provenance;
    ``docs science`` renders the page from the records (``--check`` fails once it differs)
    and refuses a record made under another analysis plan than the config's."""
    from selfreflect.config import load_config

    records, out = tmp_path / "records", tmp_path / "science.md"
    options = ["--config", "config/smoke.yaml", "--records", str(records)]
    run(["selfreflect", "bench", "science-record", *options], smoke_run)
    made = json.loads((records / "tiny" / "record.json").read_text(encoding="utf-8"))
    config = load_config(smoke_run / "config" / "smoke.yaml")
    assert made["plan"] == config["report"]["plan"] and made["judge"] == "tiny"
    assert made["questions"]["smoke"] == config["questions"]["num_questions"]
    assert made["time"]["jobs"] > 0 and made["commit"]
    run(["selfreflect", "docs", "science", *options, "--out", str(out)], smoke_run)
    text = out.read_text(encoding="utf-8")
    mc = pd.read_csv(records / "tiny" / "mc_study.csv").iloc[0]
    assert f"| tiny | {mc['n_rho']} ({mc['n_rho_skipped']} skipped) |" in text
    assert "| tiny | concatenated_answers | concatenated_answers |" in text  # a reference
    assert "## Analysis plan" in text and "\n| tiny | 20" in text  # the run's date
    run(["selfreflect", "docs", "science", *options, "--out", str(out), "--check"], smoke_run)
    out.write_text(text.replace("tiny", "tyni"), encoding="utf-8")
    stale = run(
        ["selfreflect", "docs", "science", *options, "--out", str(out), "--check"],
        smoke_run,
        check=False,
    )
    assert stale.returncode != 0 and "stale; run selfreflect docs science" in stale.stderr
    other = tmp_path / "other-plan.yaml"
    raw = read_config_file(smoke_run / "config" / "smoke.yaml")
    raw.setdefault("report", {}).setdefault("plan", {})["level"] = 0.01
    other.write_text(yaml.safe_dump(raw), encoding="utf-8")
    refused = run(
        [
            "selfreflect",
            "docs",
            "science",
            "--config",
            str(other),
            "--records",
            str(records),
            "--out",
            str(out),
        ],
        smoke_run,
        check=False,
    )
    assert refused.returncode != 0
    [line] = refused.stderr.strip().splitlines()
    assert "tiny/record.json: plan:" in line and "(level)" in line


@pytest.mark.parametrize("config", ["science.yaml", "confirm.yaml"])
def test_docs_science_md_is_what_the_science_records_render(config):
    """Each run's page (docs/science.md, docs/science-confirm.md), and every table of a record
    that keeps per-question rows built again."""
    command = ["selfreflect", "docs", "science", "--config", f"config/{config}"]
    run([*command, "--check", "--recompute"], REPO)


def test_dvc_repro_builds_every_table_and_dvc_reads_metrics_and_plots(smoke_dvc_run):
    assert_tables_and_figures(smoke_dvc_run)
    metrics = run(["dvc", "metrics", "show", "--json"], smoke_dvc_run).stdout
    assert "reports/smoke/metrics/validation.json" in metrics
    run(["dvc", "plots", "show", "--out", "plots"], smoke_dvc_run)
    assert (smoke_dvc_run / "plots" / "index.html").stat().st_size > 1000


def table_command(tmp_path, command: str, common: str = "reports") -> list[str]:
    """``selfreflect report COMMAND`` of an empty input, its tables, figures and metrics into
    the one folder ``common`` (made, holding others' files)."""
    from selfreflect.artifacts import SCHEMAS, write_table

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(MINIMAL_CONFIG))
    kind = {"cost-table": "summaries", "validation": "controlled_scores"}.get(command, "scores")
    write_table(kind, pd.DataFrame(columns=SCHEMAS[kind].names), tmp_path / "in.parquet")
    (tmp_path / common).mkdir()
    for name in ("README.md", "main.txt", "cost.csv.orig", "greedy.json.bak"):
        (tmp_path / common / name).write_text(f"{name}'s own text")
    args = ["selfreflect", "report", command, "--config", "c.yaml", "--out-dir", common]
    if command == "main-table":
        args += ["--figure-dir", common, "--metrics-dir", common]
    if command == "validation":
        args += ["--figure-dir", common]
    return [*args, "in.parquet"]


@pytest.mark.parametrize("command", ["cost-table", "main-table"])
def test_table_commands_write_only_their_own_files_in_a_common_folder(tmp_path, command):
    """Tables, figures and metrics into one folder that holds others' files: those stay as
    they were; the command adds its own table's files (and the list of them) and nothing
    else, and a rerun replaces them."""
    from selfreflect.config import load_config
    from selfreflect.fileio import SHARED_LIST
    from tests.assertions import snapshot

    args = table_command(tmp_path, command)
    common = tmp_path / "reports"
    before = snapshot(common)
    run(args, tmp_path)
    after = snapshot(common)
    assert {name: after[name] for name in before} == before
    if command == "cost-table":
        own = {f"cost.{ext}" for ext in ("csv", "md", "tex")}
    else:
        strategies = load_config(tmp_path / "c.yaml")["summaries"]["strategies"]
        own = {f"main.{ext}" for ext in ("csv", "md", "tex", "png", "pdf")}
        own |= {f"{strategy}.json" for strategy in strategies}
    assert {path.rsplit("/", 1)[1] for path in set(after) - set(before)} == own | {SHARED_LIST}
    run(args, tmp_path)
    assert {name: snapshot(common)[name] for name in before} == before


@pytest.mark.parametrize(
    ("command", "theirs"),
    [("cost-table", "cost.md"), ("main-table", "main.pdf"), ("main-table", "greedy.json")],
)
def test_table_commands_refuse_to_overwrite_a_file_of_their_names_they_did_not_write(
    tmp_path, command, theirs
):
    """A person's file that bears the name of a table's or figure's file is not overwritten:
    one line names it, and nothing in the folder is touched."""
    from tests.assertions import one_line_error, snapshot

    args = table_command(tmp_path, command)
    (tmp_path / "reports" / theirs).write_text("a person's own table")
    before = snapshot(tmp_path / "reports")
    refused = run(args, tmp_path, check=False)
    one_line_error(refused, f"reports/{theirs}: exists and was not written by selfreflect report")
    assert snapshot(tmp_path / "reports") == before


def test_a_failed_table_command_claims_no_file_and_a_refused_one_writes_none(tmp_path):
    """A run that fails lists none of its names as its own (a person's file of that name, put
    there later, is then still refused); a metrics folder that cannot be made stops the
    command before any table or figure is written."""
    from tests.assertions import one_line_error, snapshot

    args = table_command(tmp_path, "main-table")
    failed = run([*args[:-1], "nosuch.parquet"], tmp_path, check=False)
    one_line_error(failed, "nosuch.parquet")
    (tmp_path / "reports" / "main.csv").write_text("a person's own table")
    one_line_error(run(args, tmp_path, check=False), "reports/main.csv: exists and was not")
    (tmp_path / "reports" / "main.csv").unlink()
    (tmp_path / "afile").write_text("x")
    at = args.index("--metrics-dir") + 1
    before = snapshot(tmp_path)
    unwritable = run([*args[:at], "afile/m", *args[at + 1 :]], tmp_path, check=False)
    one_line_error(unwritable, "afile/m/greedy.json: cannot write here")
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("metrics", ["afolder", "reports/validation.csv"])
def test_metrics_naming_a_folder_or_a_table_stop_before_anything_is_written(tmp_path, metrics):
    from tests.assertions import one_line_error, snapshot

    *args, given = table_command(tmp_path, "validation")
    (tmp_path / "afolder").mkdir()
    before = snapshot(tmp_path)
    args += ["--metrics", metrics, given]
    one_line_error(run(args, tmp_path, check=False), f"{metrics}: --metrics names a folder")
    assert snapshot(tmp_path) == before


def test_metrics_of_a_strategy_the_files_do_not_hold_stop_before_anything_is_written(tmp_path):
    """The config's strategies each get a metrics file: one whose scores were not given would
    be an empty `{}` that DVC reads as its metrics."""
    from selfreflect.artifacts import write_table
    from tests.assertions import one_line_error, snapshot
    from tests.test_tables import scores_frame

    args = table_command(tmp_path, "main-table")
    scores = scores_frame({"greedy": [0.2], "basic": [0.1]}).assign(tasks=None)
    write_table("scores", scores, tmp_path / "in.parquet")
    before = snapshot(tmp_path)
    refused = run(args, tmp_path, check=False)
    one_line_error(
        refused,
        "reports: --metrics-dir: writes a file per strategy of summaries.strategies, and the"
        " files given hold no rows of cot, sample_and_summarize, concatenated_answers,"
        " twostep_cot (give their scores too, or leave --metrics-dir out)",
    )
    assert snapshot(tmp_path) == before
