"""The smoke DAG end to end through real Snakemake and DVC subprocesses."""

import json
import re
import shutil

import pandas as pd
import pytest

from selfreflect.artifacts import read_metadata, read_table, write_table
from tests.conftest import SMOKE_STDOUT, session_root
from tests.workflow_utils import clone_completed, copy_project, run, snakemake

pytestmark = pytest.mark.workflow

QUESTIONS = "results/smoke/smoke/questions.parquet"
ANSWERS = "results/smoke/smoke/tiny/answers.parquet"
SUMMARIES = "results/smoke/smoke/tiny/summaries/{}.parquet"
JUDGEMENTS = "results/smoke/smoke/tiny/judgements/tiny.parquet"
JUDGE_CACHE = "results/smoke/.judge_cache"


def assert_full_answers(project):
    questions = read_table("questions", project / QUESTIONS)
    answers = read_table("answers", project / ANSWERS)
    assert len(questions) == 20
    assert list(answers["id"]) == list(questions["id"])
    assert answers["error"].isna().all()
    assert answers["test_answers"].map(len).eq(4).all()
    assert answers["conditioning_answers"].map(len).eq(4).all()


def test_snakemake_lint_is_clean(tmp_path):
    project = copy_project(tmp_path / "p")
    result = run(["snakemake", "--lint", "--configfile", "config/smoke.yaml"], project)
    assert "Congratulations" in result.stdout + result.stderr


def test_snakemake_runs_smoke_dag(smoke_run):
    assert_full_answers(smoke_run)
    again = snakemake(smoke_run, "-n")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_job_progress_lines_reach_snakemakes_terminal(smoke_run, tmp_path_factory):
    """A job's log is its standard error; its progress lines also reach the terminal of the
    Snakemake run, whose standard output shows the jobs', each line naming its job."""
    last = re.compile(r"(\S+)/tiny judge tiny: judging: questions: (\d+)/\2 \(100%\)")
    terminal = (session_root(tmp_path_factory) / SMOKE_STDOUT).read_text()
    logs = list((smoke_run / "logs/smoke/judge").rglob("*.log"))  # judge/DATASET/tiny/tiny/0
    shown = [match[1] for line in terminal.splitlines() if (match := last.match(line))]
    logged = [line for log in logs for line in log.read_text().splitlines() if last.search(line)]
    assert shown, terminal[-2000:]
    assert len(shown) == len(logged) == len(logs)  # each judge job's last line, also logged
    assert sorted(shown) == sorted(
        log.relative_to(smoke_run / "logs/smoke/judge").parts[0] for log in logs
    )


def test_a_plugin_strategys_job_reports_progress_as_the_others_do(smoke_run, tmp_path_factory):
    """Its summaries' checkpoints count the questions (the plug-in counted them again)."""
    terminal = (session_root(tmp_path_factory) / SMOKE_STDOUT).read_text()
    lines = [line for line in terminal.splitlines() if line.startswith("smoke/tiny majority_vote:")]
    assert lines and all("majority_vote: summaries: questions: " in line for line in lines), lines


def test_vllm_engine_lines_go_to_the_jobs_logs_not_the_terminal(smoke_run, tmp_path_factory):
    """vLLM logs to standard output unless told otherwise: its tens of lines an engine would
    bury the jobs' own lines on Snakemake's terminal."""
    engine = re.compile(r"^(\(\w+ pid=\d+\) )?(INFO|WARNING) \d\d-\d\d \d\d:\d\d:\d\d \[")
    terminal = (session_root(tmp_path_factory) / SMOKE_STDOUT).read_text()
    assert not [line for line in terminal.splitlines() if engine.match(line)]
    log = (smoke_run / "logs/smoke/answers/smoke/tiny/0.log").read_text()
    assert any(engine.match(line) for line in log.splitlines())


def test_the_mc_study_says_why_a_dataset_has_no_summaries(smoke_run, tmp_path_factory):
    terminal = (session_root(tmp_path_factory) / SMOKE_STDOUT).read_text()
    written = [line for line in terminal.splitlines() if "multiple-choice summaries" in line]
    assert sorted(written) == [
        "0 multiple-choice summaries written to results/smoke/smoke/tiny/studies/tiny/mc.parquet"
        " (results/smoke/smoke/questions.parquet: no choices)",
        "40 multiple-choice summaries written to"
        " results/smoke/smoke_mmlu/tiny/studies/tiny/mc.parquet",
    ]


def test_jobs_logs_hold_no_progress_bar(smoke_run):
    """A job's log is a file: a library's progress bar (vLLM's, the datasets', MiniLM's) would
    redraw itself there with carriage returns, one line growing for as long as the job runs."""
    logs = list((smoke_run / "logs/smoke").rglob("*.log"))
    assert len(logs) > 20
    assert not [log for log in logs if b"\r" in log.read_bytes()]


def test_a_run_reports_its_time_memory_and_judge_work(smoke_run):
    """Every job's benchmark file, summed per rule after the run; the judge jobs record the
    tokens the judge computed."""
    tables = smoke_run / "reports/smoke/tables"
    performance = pd.read_csv(tables / "performance.csv").set_index("rule")
    jobs = len(list((smoke_run / "benchmarks").rglob("*.tsv")))  # the run's and the models'
    assert performance.loc["total", "jobs"] == jobs > 0
    assert {"answers", "judge", "report_main_table", "report_alt_metrics"} <= set(performance.index)
    assert (performance["wall_s"] > 0).all()
    assert performance.loc["total", "wall_s"] == pytest.approx(
        performance["wall_s"].iloc[:-1].sum()
    )
    # seconds as Snakemake measures them (2 decimals): no float noise in the sums
    assert not re.search(r"\.\d{3,}", (tables / "performance.csv").read_text())
    tokens = pd.read_csv(tables / "judge_tokens.csv").set_index("kind")["judge_forward_tokens"]
    assert tokens["judgements"] > 0 and tokens["alt_metrics"] > 0
    assert tokens["total"] == tokens.drop("total").sum()
    assert (smoke_run / "reports/smoke/figures/performance.png").is_file()


def test_invalid_config_stops_snakemake_with_one_line(tmp_path):
    project = copy_project(tmp_path / "p")
    included = project / "config" / "base" / "smoke.yaml"  # named by the file given
    included.write_text(included.read_text().replace("num_answers: 4", "num_answers: zero"))
    result = snakemake(project, "-n", check=False)
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and result.stderr.splitlines()[-1] == errors[0]
    assert "config/smoke.yaml: answers.num_answers: 'zero' is not of type" in errors[0]


def test_before_a_run_dvc_plans_with_status_as_its_dry_run_stops(tmp_path):
    """docs/dvc.md: in a fresh project DVC's dry run stops at the first stage that reads an
    output not yet made (DVC 3.67 hashes its inputs); `dvc status` and `snakemake -n` plan.
    docs/answer-sets.md: with no lock, `dvc pull` has nothing to pull, and both still plan."""
    project = copy_project(tmp_path / "p")
    dry = run(["dvc", "repro", "--dry"], project, check=False)
    assert dry.returncode != 0, dry.stdout
    assert "failed to reproduce" in dry.stderr and "No such file or directory" in dry.stderr
    assert "Running stage 'questions" in dry.stdout and not (project / "results").exists()
    status = run(["dvc", "status"], project).stdout
    assert "judge" in status and "deleted:" in status, status
    assert "judge" in snakemake(project, "-n").stdout
    pull = run(["dvc", "pull"], project, check=False)  # docs/answer-sets.md: no lock, no data
    assert pull.returncode != 0 and "No file hash info found" in pull.stderr, pull.stderr
    assert not [path for path in (project / "results").rglob("*") if not path.is_dir()]
    assert "judge" in snakemake(project, "-n").stdout
    assert "deleted:" in run(["dvc", "status"], project).stdout


def test_dvc_records_the_smoke_run(smoke_dvc_run):
    assert_full_answers(smoke_dvc_run)
    assert "up to date" in run(["dvc", "status"], smoke_dvc_run).stdout
    assert "Running stage" not in run(["dvc", "repro"], smoke_dvc_run).stdout


def outputs(project, stage: dict) -> dict[str, object]:
    """A stage's outputs that no clock changes: Parquet tables without their wall times (no
    provenance) and CSV and JSON files but the cost table's; folders as their files."""
    files = {}
    for out in stage["outs"]:
        path = project / (out if isinstance(out, str) else next(iter(out)))
        for file in sorted(path.rglob("*")) if path.is_dir() else [path]:
            name = str(file.relative_to(project))
            if file.suffix == ".parquet":
                files[name] = pd.read_parquet(file).drop(columns="seconds", errors="ignore")
            elif file.suffix in (".csv", ".json") and not file.name.startswith("cost"):
                files[name] = file.read_bytes()
    return files


def seconds(project, stage: dict) -> float:
    """The wall time of a stage's jobs in the run recorded (their benchmark files)."""
    files = stage.get("meta", {}).get("benchmarks", [])
    return sum(pd.read_csv(project / file, sep="\t")["s"].sum() for file in files)


def test_dvc_repro_runs_a_stage_of_each_rule_to_snakemakes_outputs(smoke_dvc_run, tmp_path):
    """`dvc repro --force` of one stage of every rule (its quickest), inputs first (answers
    sampled again, summaries, the judge pass, every table), makes exactly what Snakemake made,
    and DVC records each: only the stages after them that did not run see changed inputs
    (their tables hold wall times, so the bytes differ). The tiny model's stage is left out: the
    model is an input of every other stage."""
    import networkx as nx
    import yaml
    from dvc.repo import Repo

    from selfreflect.workflow import PARAMS_STAGE, expanded, rule_of

    project = clone_completed(smoke_dvc_run, tmp_path / "p")
    stages = expanded(yaml.safe_load((project / "dvc.yaml").read_text())["stages"])
    first = {}  # the quickest stage of each rule, as the smoke run's benchmark files time them
    for name in sorted(stages, key=lambda name: seconds(project, stages[name])):
        first.setdefault(rule_of(name), name)
    first.pop("tiny_model")
    first.pop(PARAMS_STAGE)  # DVC's own, no rule's: it writes nothing
    with Repo(str(project)) as repo:  # edges point from a stage to the stages it reads
        order = [stage.name for stage in reversed(list(nx.topological_sort(repo.index.graph)))]
    forced = [name for name in order if name in first.values()]
    before = {name: outputs(project, stages[name]) for name in forced}
    out = run(["dvc", "repro", "--force", "--single-item", *forced], project).stdout
    assert set(re.findall(r"Running stage '([^']+)'", out)) == set(forced)
    for name in forced:
        after = outputs(project, stages[name])
        assert after.keys() == before[name].keys(), name
        for file, content in after.items():
            if isinstance(content, pd.DataFrame):
                pd.testing.assert_frame_equal(content, before[name][file], obj=file)
            else:
                assert content == before[name][file], file
    status = json.loads(run(["dvc", "status", "--json"], project).stdout or "{}")
    assert not set(status) & set(forced), "a forced stage is as DVC recorded it"
    changes = {change for entries in status.values() for entry in entries for change in entry}
    assert changes <= {"changed deps"}, status


def judge_pass(project, out: str, summaries: list[str], cache: str = JUDGE_CACHE):
    """`selfreflect judge` on the smoke dataset as the workflow runs it: its judgements and
    the tokens its judge computed."""
    command = ["selfreflect", "judge", "--config", "logs/smoke/config.yaml", "--dataset"]
    command += ["smoke", "--subject", "tiny", "--judge", "tiny", "--questions", QUESTIONS]
    run([*command, "--answers", ANSWERS, "--cache", cache, "--out", out, *summaries], project)
    return read_table("judgements", project / out), read_metadata(project / out)[
        "judge_forward_tokens"
    ]


def test_a_rerun_judges_only_the_new_and_changed_summaries(smoke_run, tmp_path):
    """The finished run's judge pass, run again, computes nothing; with a strategy added and
    another one's summaries changed (as a prompt edit changes them) it computes exactly what
    judging those summaries alone computes, and the other strategies' rows stay as they were."""
    project = clone_completed(smoke_run, tmp_path / "p")
    finished = read_table("judgements", project / JUDGEMENTS)
    strategies = list(dict.fromkeys(finished["strategy"].dropna()))
    files = [SUMMARIES.format(strategy) for strategy in strategies]
    again, tokens = judge_pass(project, "again.parquet", files)
    assert tokens == 0
    pd.testing.assert_frame_equal(again, finished)

    greedy = read_table("summaries", project / files[strategies.index("greedy")])
    added = greedy.assign(strategy="greedy_again", summary="Surely " + greedy["summary"])
    basic = read_table("summaries", project / files[strategies.index("basic")])
    basic.loc[:2, "summary"] = "Perhaps " + basic.loc[:2, "summary"]
    write_table("summaries", added, project / "added.parquet")
    write_table("summaries", basic, project / "basic.parquet")
    shutil.copytree(project / JUDGE_CACHE, project / "cache-copy")
    _, alone = judge_pass(
        project, "alone.parquet", ["added.parquet", "basic.parquet"], "cache-copy"
    )
    files[strategies.index("basic")] = "basic.parquet"
    rerun, tokens = judge_pass(project, "rerun.parquet", [*files, "added.parquet"])
    assert tokens == alone > 0
    untouched = rerun[~rerun["strategy"].isin(["basic", "greedy_again"])]  # pairs, MC, others
    pd.testing.assert_frame_equal(
        untouched.reset_index(drop=True),
        finished[finished["strategy"] != "basic"].reset_index(drop=True),
    )
