"""Provably incremental: a change reruns exactly what it invalidates, in Snakemake and in DVC.

One completed smoke run (Snakemake, then recorded for DVC with `dvc commit`) is copied per case;
each case makes one change (regenerating dvc.yaml, as after any change) and compares, stage by
stage, what a Snakemake dry run schedules and what `dvc repro` may rerun (the stages `dvc status`
reports and everything downstream of them) with the exact set the change invalidates.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from tests.workflow_utils import clone_completed, run

pytestmark = pytest.mark.workflow

CONFIG = "config/smoke.yaml"
STRATEGIES = yaml.safe_load(Path(__file__).parents[1].joinpath(CONFIG).read_text())["summaries"][
    "strategies"
]
FIGURES = {"main_table", "validation", "mc_study", "convergence"}
TABLES = FIGURES | {"cost_table", "human_agreement"}
STUDIES = {
    "controlled_scores-smoke-tiny-tiny",
    "mc_scores-smoke-tiny-tiny",
    "convergence_scores-smoke-tiny-tiny",
}
MMLU_STUDIES = {"controlled_scores-smoke_mmlu-tiny-tiny", "mc_scores-smoke_mmlu-tiny-tiny"}
# what reads every summary of the summarised dataset, besides that summary's score
SUMMARY_READERS = {"convergence_scores-smoke-tiny-tiny", "cost_table", "main_table"}
SUMMARY_READERS |= {"human_agreement", "convergence", "explorer"}


def summaries_and_scores(*strategies: str) -> set[str]:
    return {f"summaries-smoke-tiny-{s}" for s in strategies} | scores(*strategies)


def scores(*strategies: str) -> set[str]:
    return {f"score-smoke-tiny-tiny-{s}" for s in strategies}


def edit_config(edit):
    def apply(project: Path) -> None:
        path = project / CONFIG
        config = yaml.safe_load(path.read_text())
        edit(config)
        path.write_text(yaml.safe_dump(config, sort_keys=False))

    return apply


def edit_file(name: str, change):
    def apply(project: Path) -> None:
        path = project / name
        path.write_text(change(path.read_text()))

    return apply


def dvc_outs(project: Path) -> dict[str, str]:
    """Stage of each output DVC tracks."""
    from dvc.repo import Repo

    with Repo(str(project)) as repo:
        return {str(out.def_path): stage.name for stage in repo.index.stages for out in stage.outs}


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
    import networkx as nx
    from dvc.repo import Repo

    changed = set(json.loads(run(["dvc", "status", "--json"], project).stdout or "{}"))
    with Repo(str(project)) as repo:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        stages = {stage.name: stage for stage in graph}
        downstream = {s.name for name in changed for s in nx.ancestors(graph, stages[name])}
    return changed | downstream


@pytest.fixture(scope="module")
def completed(smoke_run, tmp_path_factory):
    project = clone_completed(smoke_run, tmp_path_factory.mktemp("incremental") / "base")
    run(["selfreflect", "dvc-yaml"], project)
    run(["dvc", "commit", "--force", "--quiet"], project)
    assert "up to date" in run(["dvc", "status"], project).stdout
    return project


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
    "strategy_plugin": (move_plugin, summaries_and_scores("majority_vote") | SUMMARY_READERS),
    "new_strategy": (add_strategy, summaries_and_scores("vote_again") | SUMMARY_READERS),
    "scoring_param": (
        edit_config(lambda c: c["scoring"].update(temperature=1.0)),
        scores(*STRATEGIES) | STUDIES | MMLU_STUDIES | FIGURES | {"human_agreement", "explorer"},
    ),
    "figure_param": (edit_config(lambda c: c["report"].update(figure_dpi=150)), FIGURES),
    "questions_file": (
        edit_file("data/questions/smoke.jsonl", lambda t: t.replace("Australia", "Austria")),
        {"questions-smoke", "answers-smoke-tiny"}
        | summaries_and_scores(*STRATEGIES)
        | STUDIES
        | TABLES
        | {"explorer"},
    ),
    "ratings_file": (
        edit_file("data/human_ratings_example.csv", lambda t: re.sub(r",5\n", ",4\n", t, count=1)),
        {"human_agreement"},
    ),
    "model": (
        edit_config(lambda c: c["models"]["tiny"].update(max_model_len=1024)),
        {"answers-smoke-tiny", "answers-smoke_mmlu-tiny"}
        | summaries_and_scores(*STRATEGIES)
        | STUDIES
        | MMLU_STUDIES
        | TABLES
        | {"explorer"},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_change_reruns_exactly_what_it_invalidates(changed, case):
    change, expected = CASES[case]
    project = changed(change)
    assert snakemake_reruns(project) == expected, "Snakemake"
    assert dvc_reruns(project) == expected, "DVC"


@pytest.mark.parametrize("case", ["figure_param", "ratings_file"])
def test_dvc_repro_reruns_exactly_those_stages(changed, case):
    change, expected = CASES[case]
    project = changed(change)
    out = run(["dvc", "repro"], project).stdout
    assert set(re.findall(r"Running stage '([^']+)'", out)) == expected
