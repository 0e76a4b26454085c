"""Provably incremental: a change reruns exactly what it invalidates, in Snakemake and in DVC.

One completed smoke run (Snakemake, then recorded for DVC with `dvc commit`) is copied per case;
each case makes one change (regenerating dvc.yaml, as after any change) and compares, stage by
stage, what a Snakemake dry run schedules and what `dvc repro` may rerun (the stages `dvc status`
reports and everything downstream of them) with the exact set the change invalidates.
"""

import csv
import functools
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from selfreflect.config import read_config_file
from selfreflect.workflow import PARAMS_STAGE
from tests.conftest import built_once
from tests.workflow_utils import clone_completed, dvc_yaml_stages, job_name, run

pytestmark = pytest.mark.workflow

CONFIG = "config/smoke.yaml"
STRATEGIES = read_config_file(Path(__file__).parents[1].joinpath(CONFIG))["summaries"]["strategies"]
FIGURES = {"report_main_table", "report_validation", "report_mc_study", "report_convergence"}
TABLES = FIGURES | {"report_cost_table", "report_human_agreement"}
# what reads every summary of the summarised dataset, besides the dataset's judge pass
SUMMARY_READERS = {
    "report_cost_table",
    "report_main_table",
    "report_human_agreement",
    "report_convergence",
    "explorer",
}
# what reads the summarised dataset's answers alone (the explorer's clusters of them)
ANSWER_READERS = {"answer_clusters-smoke-tiny"}
# the judge's work on the multiple-choice dataset (no summaries there: only the studies)
PARAMS = {PARAMS_STAGE}  # DVC's stage checking params.yaml: runs on any edit of the config
MMLU_JUDGED = {
    f"{rule}-smoke_mmlu-tiny-tiny" for rule in ("merge_judgements", "report_alt_metrics")
}
MMLU_STUDIES = {
    f"{rule}-smoke_mmlu-tiny-tiny" for rule in ("report_controlled_scores", "report_mc_scores")
}


def summaries_and_scores(*strategies: str) -> set[str]:
    """Each strategy's summaries, and the summarised dataset's judge pass with everything read
    off it (its result cache judges only the new summaries: tests/test_studies.py)."""
    return {f"summarize-smoke-tiny-{s}" for s in strategies} | judged(*STRATEGIES, *strategies)


def judged(*strategies: str) -> set[str]:
    """The summarised dataset's judge pass, what is read off it (every strategy's scores and
    the studies) and the tables of those studies."""
    read_off = {f"strategy_scores-smoke-tiny-tiny-{s}" for s in strategies}
    read_off |= {
        f"{rule}-smoke-tiny-tiny" for rule in ("report_controlled_scores", "report_mc_scores")
    }
    read_off |= {"merge_judgements-smoke-tiny-tiny", "report_convergence_scores-smoke-tiny-tiny"}
    return read_off | {"report_validation", "report_mc_study", "report_convergence"}


def edit_config(edit):
    def apply(project: Path) -> None:
        path = project / CONFIG
        config = read_config_file(path)
        edit(config)
        path.write_text(yaml.safe_dump(config, sort_keys=False))

    return apply


def edit_file(name: str, change):
    def apply(project: Path) -> None:
        path = project / name
        path.write_text(change(path.read_text()))

    return apply


@functools.cache
def dvc_outs(project: Path) -> dict[str, str]:
    """Stage of each output DVC tracks, by its job's name (read once per project)."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        stages = repo.index.stages
        return {str(out.def_path): job_name(stage.name) for stage in stages for out in stage.outs}


def snakemake_reruns(project: Path) -> set[str]:
    """The DVC stages of the outputs a Snakemake run would now update (shards: their merge)."""
    args = ["snakemake", "--configfile", CONFIG, "--summary"]
    summary = run(args, project).stdout
    rows = csv.DictReader(io.StringIO(summary[summary.index("output_file") :]), delimiter="\t")
    stages = dvc_outs(project)
    planned = {stages.get(row["output_file"]) for row in rows if row["plan"] != "no update"}
    return planned - {None}


def dvc_reruns(project: Path) -> set[str]:
    """The stages `dvc status` reports changed, and every stage downstream of them."""
    changed = json.loads(run(["dvc", "status", "--json"], project).stdout or "{}")
    return with_downstream(project, set(map(job_name, changed)))


def with_downstream(project: Path, names: set[str]) -> set[str]:
    """The DVC stages ``names`` and every stage downstream of them (by their jobs' names)."""
    downstream = downstream_stages(project)
    return names | {stage for name in names for stage in downstream[name]}


@functools.cache
def downstream_stages(project: Path) -> dict[str, set[str]]:
    """Every stage downstream of each DVC stage of ``project``, by their jobs' names (read once
    per project)."""
    import networkx as nx
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        return {
            job_name(stage.name): {job_name(s.name) for s in nx.ancestors(graph, stage)}
            for stage in graph
        }


@pytest.fixture(scope="module")
def completed(smoke_run, tmp_path_factory):
    """The smoke run recorded by `dvc commit` as well (once per session)."""

    def build(project: Path) -> None:
        clone_completed(smoke_run, project)
        run(["selfreflect", "dvc-yaml"], project)
        run(["dvc", "commit", "--force", "--quiet"], project)
        assert "up to date" in run(["dvc", "status"], project).stdout

    return built_once(tmp_path_factory, "incremental", build)


@pytest.fixture
def changed(completed, tmp_path):
    """A fresh copy of the completed run with ``change`` applied and dvc.yaml regenerated."""

    def apply(change) -> Path:
        project = clone_completed(completed, tmp_path / "p")
        change(project)
        run(["selfreflect", "dvc-yaml"], project)
        return project

    return apply


def copy_plugin(project: Path) -> None:
    """examples/vote.py: the example plug-in under another module name."""
    (project / "examples" / "vote.py").write_text((project / "examples/plugins.py").read_text())


def move_plugin(project: Path) -> None:
    copy_plugin(project)
    plugins = {"majority_vote": "examples.vote:majority_vote"}
    edit_config(lambda c: c["summaries"]["plugins"].update(plugins))(project)


def add_strategy(project: Path) -> None:
    copy_plugin(project)

    def add(config):
        config["summaries"]["plugins"]["vote_again"] = "examples.vote:majority_vote"
        config["summaries"]["strategies"].append("vote_again")

    edit_config(add)(project)


CASES = {
    "nothing": (lambda project: None, set()),
    "strategy_prompt": (
        edit_file("src/selfreflect/data/prompts.yaml", lambda t: t.replace("all possible", "all")),
        summaries_and_scores("basic") | SUMMARY_READERS,
    ),
    "strategy_plugin": (
        move_plugin,
        summaries_and_scores("majority_vote") | SUMMARY_READERS | PARAMS,
    ),
    "new_strategy": (add_strategy, summaries_and_scores("vote_again") | SUMMARY_READERS | PARAMS),
    "plugin_code": (  # the plug-in's module is code of its strategy's jobs alone
        edit_file("examples/plugins.py", lambda t: t.replace("most_common(3)", "most_common(2)")),
        summaries_and_scores("majority_vote") | SUMMARY_READERS,
    ),
    "scoring_param": (
        edit_config(lambda c: c["scoring"].update(temperature=1.0)),
        judged(*STRATEGIES)
        | {"report_alt_metrics-smoke-tiny-tiny"}
        | MMLU_JUDGED
        | MMLU_STUDIES
        | FIGURES
        | {"report_human_agreement", "explorer"}
        | PARAMS,
    ),
    "figure_param": (edit_config(lambda c: c["report"].update(figure_dpi=150)), FIGURES | PARAMS),
    "questions_file": (
        edit_file("data/questions/smoke.jsonl", lambda t: t.replace("Australia", "Austria")),
        {"questions-smoke", "merge_answers-smoke-tiny", "report_alt_metrics-smoke-tiny-tiny"}
        | ANSWER_READERS
        | summaries_and_scores(*STRATEGIES)
        | TABLES
        | {"explorer"},
    ),
    "ratings_file": (
        edit_file("data/human_ratings_example.csv", lambda t: re.sub(r",5\n", ",4\n", t, count=1)),
        {"report_human_agreement"},
    ),
    "model": (
        edit_config(lambda c: c["models"]["tiny"].update(max_model_len=1024)),
        {
            "merge_answers-smoke-tiny",
            "merge_answers-smoke_mmlu-tiny",
            "report_alt_metrics-smoke-tiny-tiny",
        }
        | ANSWER_READERS
        | summaries_and_scores(*STRATEGIES)
        | MMLU_JUDGED
        | MMLU_STUDIES
        | TABLES
        | {"explorer"}
        | PARAMS,
    ),
}
CASES["fidelity"] = (edit_config(lambda c: c.update(fidelity="corrected")), CASES["model"][1])
CASES["other_backends_setting"] = (  # read by the openai backend alone; tiny runs on hf
    edit_config(lambda c: c["models"]["tiny"].update(timeout=5, max_concurrency=2)),
    PARAMS,
)


@pytest.mark.parametrize("case", list(CASES))
def test_a_change_reruns_exactly_what_it_invalidates(changed, case):
    change, expected = CASES[case]
    project = changed(change)
    assert snakemake_reruns(project) == expected - PARAMS, "Snakemake"
    assert dvc_reruns(project) == expected, "DVC"


# a setting's readers rerun by `dvc exp run`: tests/test_dvc_experiments.py
@pytest.mark.parametrize("case", ["ratings_file"])
def test_dvc_repro_reruns_exactly_those_stages(changed, case):
    change, expected = CASES[case]
    project = changed(change)
    out = run(["dvc", "repro"], project).stdout
    assert set(map(job_name, re.findall(r"Running stage '([^']+)'", out))) == expected


# The drift test: append a comment to a package file in a completed run; Snakemake and DVC
# must schedule exactly the stages whose commands import it (code_deps), and what follows them.
# Each job's code is its command's file list (every file, every job: test_dag_consistency.py),
# so a few files stand for all: a data file one stage reads, a module of several report
# stages, one of every stage's, the config schema (the params check's alone: Deps.job_files),
# and one no stage runs.
DRIFT_FILES = [
    "src/selfreflect/data/explorer.html",
    "src/selfreflect/report/tables.py",
    "src/selfreflect/errors.py",
    "src/selfreflect/data/config.schema.yaml",
    "src/selfreflect/cli/config_docs.py",
]


def stage_commands(project: Path) -> dict[str, list[str]]:
    """The ``selfreflect`` commands each DVC stage runs (by its job's name), read from its
    ``cmd`` lines."""
    from selfreflect.cli.commands import command_name

    stages = dvc_yaml_stages(project)
    commands: dict[str, list[str]] = {}
    for name, stage in stages.items():
        for line in [stage["cmd"]] if isinstance(stage["cmd"], str) else stage["cmd"]:
            commands.setdefault(name, []).append(command_name(line.split()[1:]))
    return commands


def importers(project: Path, path: str) -> set[str]:
    """The stages whose commands import the package file ``path``, and what follows them."""
    from selfreflect.cli import command_deps

    def code(stage: str, command: str) -> tuple[str, ...]:  # the params check keeps the schema
        deps = command_deps(command)
        return deps.files if stage in PARAMS else deps.job_files

    commands = stage_commands(project)
    direct = {s for s, cmds in commands.items() if any(path in code(s, c) for c in cmds)}
    return with_downstream(project, direct)


def reruns_after_editing(project: Path, path: str) -> tuple[set[str], set[str]]:
    """What Snakemake and DVC schedule with a comment appended to ``path`` (then restored)."""
    file = project / path
    original = file.read_bytes()
    file.write_bytes(original + b"\n# an edit\n")
    try:
        return snakemake_reruns(project), dvc_reruns(project)
    finally:
        file.write_bytes(original)


@pytest.fixture(scope="module")
def edited(completed, tmp_path_factory):
    """A copy of the completed run whose files the drift tests edit and restore."""
    return clone_completed(completed, tmp_path_factory.mktemp("drift") / "p")


@pytest.mark.parametrize("path", DRIFT_FILES)
def test_editing_a_module_reruns_exactly_the_commands_importing_it(edited, path, monkeypatch):
    monkeypatch.chdir(edited)  # code_deps reads the package files there
    expected = importers(edited, path)
    snakemake, dvc = reruns_after_editing(edited, path)
    assert snakemake == expected - PARAMS, "Snakemake"
    assert dvc == expected, "DVC"


def drop_dependency(project: Path, command: str, path: str) -> None:
    """The rules of ``command`` lose the code dependency ``path``, recorded as if they had run
    so (Snakemake's metadata by --touch, DVC's lock by commit)."""
    rules = project / "src" / "selfreflect" / "rule_inputs.py"  # where rules take their deps
    text = rules.read_text()
    assert "        self.command_deps = command_deps\n" in text
    dropped = f"""

def _without(deps, command):
    from dataclasses import replace

    files = tuple(f for f in deps.files if (command, f) != {(command, path)!r})
    return replace(deps, files=files)
"""
    text = text.replace(
        "        self.command_deps = command_deps\n",
        "        self.command_deps = lambda c: _without(command_deps(c), c)\n",
    )
    rules.write_text(text + dropped)
    run(["selfreflect", "dvc-yaml"], project)
    run(["selfreflect", "dvc-sync", "--config", CONFIG], project)  # the copy's dates, for Snakemake
    run(["snakemake", "--configfile", CONFIG, "--cores", "1", "--touch"], project)
    run(["dvc", "commit", "--force", "--quiet"], project)


@pytest.mark.parametrize(
    ("command", "path"), [("report main-table", "src/selfreflect/report/tables.py")]
)
def test_the_drift_test_fails_when_a_rule_loses_a_dependency(
    completed, tmp_path, command, path, monkeypatch
):
    project = clone_completed(completed, tmp_path / "p")
    drop_dependency(project, command, path)
    monkeypatch.chdir(project)
    expected = importers(project, path)
    snakemake, dvc = reruns_after_editing(project, path)
    assert snakemake < expected - PARAMS, "Snakemake"
    assert dvc < expected, "DVC"
