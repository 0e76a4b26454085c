"""Summaries through the real Snakemake DAG (and DVC's view of it) on the smoke project."""

import pytest
import yaml

from selfreflect.artifacts import read_table
from selfreflect.config import read_config_file
from tests.workflow_utils import copy_project, job_name, run

pytestmark = pytest.mark.workflow

SUMMARIES = "results/smoke/smoke/tiny/summaries/{}.parquet"


def smoke_snakemake(project, *args, check=True):
    options = ["--configfile", "config/smoke.yaml", "--cores", "2", "--resources", "gpu=1"]
    return run(["snakemake", *args, *options], project, check=check)  # targets before --resources


def shell_commands(dry_run_output):
    prefix = "Shell command: "
    return [line[len(prefix) :] for line in dry_run_output.splitlines() if line.startswith(prefix)]


def set_strategies(project, strategies, plugins):
    path = project / "config/smoke.yaml"
    config = read_config_file(path)
    config["summaries"]["strategies"] = strategies
    config["summaries"]["plugins"].update(plugins)
    path.write_text(yaml.safe_dump(config))


def test_smoke_dag_summarises_with_each_of_its_strategies(smoke_run):
    config = read_config_file(smoke_run / "config/smoke.yaml")
    questions = read_table("questions", smoke_run / "results/smoke/smoke/questions.parquet")
    for strategy in config["summaries"]["strategies"]:
        table = read_table("summaries", smoke_run / SUMMARIES.format(strategy))
        assert list(table["id"]) == list(questions["id"]), strategy
        assert table["error"].isna().all() and table["summary"].notna().all(), strategy
        assert (table["summarizer"] == "tiny-hf").all()
        assert (table["completion_tokens"] > 0).all() or strategy.startswith("cluster_and")


def test_failing_plugin_keeps_other_summaries(tmp_path):
    project = copy_project(tmp_path / "p")
    plugins = {
        "echo": "tests.test_strategies_plugins:echo_plugin",
        "boom": "tests.test_strategies_plugins:boom",
    }
    strategies = ["greedy", "echo"]
    set_strategies(project, [*strategies, "boom"], plugins)
    targets = [SUMMARIES.format(s) for s in [*strategies, "boom"]]

    dry = smoke_snakemake(project, *targets, "-n", "--printshellcmds").stdout
    summarize = [c for c in shell_commands(dry) if c.startswith("selfreflect summarize")]
    assert len(summarize) == len(strategies) + 1
    assert all("--questions results/smoke/smoke/questions.parquet" in c for c in summarize)
    assert not any("answers.parquet" in c.split(" --out ")[0] for c in summarize)  # no answers

    result = smoke_snakemake(project, *targets, "--keep-going", check=False)
    assert result.returncode != 0
    log = (project / "logs/smoke/summarize/smoke/tiny/boom.log").read_text()
    plugin = "summaries.plugins.boom: strategy 'boom': plug-in tests.test_strategies_plugins:boom"
    assert f"error: {project / 'config/smoke.yaml'}: {plugin} raised" in log  # the user's file
    assert not (project / SUMMARIES.format("boom")).exists()
    for strategy in strategies:
        table = read_table("summaries", project / SUMMARIES.format(strategy))
        assert table["summary"].notna().all()

    set_strategies(project, [*strategies, "verbalized_confidence"], {})
    targets = [SUMMARIES.format(s) for s in [*strategies, "verbalized_confidence"]]
    commands = shell_commands(smoke_snakemake(project, *targets, "-n", "--printshellcmds").stdout)
    assert len(commands) == 1 and "--strategy verbalized_confidence " in commands[0]


def test_unknown_strategy_stops_snakemake_with_one_line(tmp_path):
    project = copy_project(tmp_path / "p")
    set_strategies(project, ["greedy", "made_up"], {})
    result = smoke_snakemake(project, "-n", check=False)
    assert result.returncode != 0
    error = result.stderr.splitlines()[-1]  # one line, after any profile notice
    assert error.startswith("error: ")
    assert error.endswith("finetuned_sft, finetuned_dpo, finetuned_grpo, majority_vote)")
    assert "config/smoke.yaml: summaries.strategies: unknown strategy 'made_up' (known: " in error


def test_dvc_has_one_summaries_stage_per_strategy(tmp_path):
    project = copy_project(tmp_path / "p")
    stages = map(job_name, run(["dvc", "stage", "list", "--name-only"], project).stdout.split())
    config = read_config_file(project / "config/smoke.yaml")
    expected = {
        f"summarize-{dataset}-{subject}-{strategy}"
        for dataset in config["summaries"]["datasets"]
        for subject in config["subjects"]
        for strategy in config["summaries"]["strategies"]
    }
    assert expected == {s for s in stages if s.startswith("summarize-")}
