"""dvc.yaml is generated from the Snakemake rules: DVC runs the commands Snakemake runs, on the
same inputs, parameters and outputs, for the smoke and the paper configs."""

import csv
import io
import re
from pathlib import Path

import pytest
import yaml

from selfreflect import paths
from tests.workflow_utils import REPO, copy_project, job_name, run

pytestmark = pytest.mark.workflow

PROMPTS = "src/selfreflect/data/prompts.yaml"
CONFIGS = ["config/smoke.yaml", "config/config.yaml"]


def dvc_view(project: Path) -> dict[str, dict]:
    """Each stage as DVC itself reads dvc.yaml (``foreach`` stages expanded), by the name of its
    job (:func:`job_name`): commands, deps, params (file, key), outs and meta."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    stages = {}
    with Repo(str(project)) as repo:
        for stage in repo.index.stages:
            params = [dep for dep in stage.deps if isinstance(dep, ParamsDependency)]
            stages[job_name(stage.name)] = {
                "cmd": stage.cmd if isinstance(stage.cmd, list) else [stage.cmd],
                "deps": {str(dep.def_path) for dep in stage.deps if dep not in params},
                "params": {(str(dep.def_path), key) for dep in params for key in dep.params},
                "outs": {str(out.def_path) for out in stage.outs},
                "meta": stage.meta,
            }
    return stages


def snakemake_commands(project: Path, config: str, run_name: str) -> list[str]:
    """Every job's shell command from a forced dry run, as DVC runs it (params.yaml, no log)."""
    args = ["snakemake", "--configfile", config, "-n", "-p", "--forceall"]
    out = run(args, project).stdout
    commands = re.findall(r"^Shell command: (selfreflect .*)$", out, flags=re.MULTILINE)
    resolved = f"logs/{run_name}/config.yaml"
    commands = [" ".join(c.split()) for c in commands]  # an empty file list leaves two spaces
    return sorted(re.sub(r" 2> \S+$", "", c).replace(resolved, "params.yaml") for c in commands)


def snakemake_outputs(project: Path, config: str) -> set[str]:
    """Every output Snakemake keeps (temporary shard files aside), from its summary."""
    summary = run(["snakemake", "--configfile", config, "--summary"], project).stdout
    rows = csv.DictReader(io.StringIO(summary[summary.index("output_file") :]), delimiter="\t")
    return {
        row["output_file"] for row in rows if not paths.matches(row["output_file"], paths.SHARDS)
    }


@pytest.fixture(scope="module", params=CONFIGS)
def generated(request, tmp_path_factory):
    """(config, project copy with dvc.yaml generated for it, DVC's view of its stages)."""
    project = copy_project(tmp_path_factory.mktemp("consistency") / "p", config=request.param)
    return request.param, project, dvc_view(project)


def job_stages(stages: dict[str, dict]) -> dict[str, dict]:
    """The stages that are Snakemake jobs: all but the one checking params.yaml (DVC's own)."""
    from selfreflect.workflow import PARAMS_STAGE

    assert stages[PARAMS_STAGE]["cmd"] == ["selfreflect dvc-yaml --check-params"]
    return {name: stage for name, stage in stages.items() if name != PARAMS_STAGE}


def test_dvc_expands_each_template_to_the_stage_of_each_of_its_jobs(
    generated, tmp_path, monkeypatch
):
    """dvc.yaml writes the jobs of a rule that differ only in their wildcard values once, as a
    ``foreach`` stage; DVC reads back from it exactly the stages the jobs have one by one (names,
    commands, deps, params, outs, meta): dvc.yaml's stages and those of a project holding each
    job's own stage, as DVC reads each."""
    from selfreflect import workflow
    from selfreflect.config import load_config
    from selfreflect.snakemake_jobs import workflow_jobs

    config, project, stages = generated
    monkeypatch.chdir(project)
    loaded = load_config(Path(config))
    jobs = workflow_jobs(Path(paths.SNAKEFILE), Path(config))
    resolved = paths.RESOLVED_CONFIG.format(run=loaded["run"])
    own = workflow.job_stages(jobs, resolved, "params.yaml", loaded)
    alone_stages = {workflow.stage_name(job): stage for job, stage in own}
    alone = tmp_path / "alone"
    alone.mkdir()
    run(["dvc", "init", "--no-scm", "--quiet"], alone)
    (alone / "dvc.yaml").write_text(yaml.safe_dump({"stages": alone_stages}))
    written = yaml.safe_load((project / "dvc.yaml").read_text())["stages"].values()
    assert any("foreach" in stage for stage in written), "jobs are grouped"
    assert job_stages(stages) == dvc_view(alone)


def test_the_paper_configs_dvc_yaml_is_at_most_half_as_long_as_one_stage_per_job():
    """2,009 lines when each job was a stage of its own (issue 47)."""
    assert len((REPO / "dvc.yaml").read_text().splitlines()) <= 1004


def test_dvc_runs_the_commands_snakemake_runs(generated):
    config, project, stages = generated
    run_name = "smoke" if "smoke" in config else "paper"
    dvc = sorted(command for stage in job_stages(stages).values() for command in stage["cmd"])
    assert dvc == snakemake_commands(project, config, run_name)


@pytest.mark.parametrize("generated", ["config/smoke.yaml"], indirect=True)
def test_params_yaml_is_checked_whole_and_against_the_dag(generated):
    """The params stage tracks every key of params.yaml and DVC runs it first; its check
    passes on the file DVC wrote and stops with one line on a key typed in by hand or a
    DAG-shaping `-S` edit (before any other stage: DVC stops at a failed stage)."""
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    from selfreflect.workflow import PARAMS_STAGE

    _, project, _ = generated
    with Repo(str(project)) as repo:
        (stage,) = [stage for stage in repo.index.stages if stage.name == PARAMS_STAGE]
        tracked = [
            (str(d.def_path), d.params) for d in stage.deps if isinstance(d, ParamsDependency)
        ]
    assert tracked == [("params.yaml", [])]  # no key listed: the whole file
    # a dry run stops ([Errno 2]) at the first stage reading what an earlier one would write
    planned = run(["dvc", "repro", "--dry"], project, check=False).stdout
    assert re.findall(r"Running stage '([^']+)'", planned)[0] == PARAMS_STAGE
    check = ["selfreflect", "dvc-yaml", "--check-params"]
    run(check, project)
    params = project / "params.yaml"
    original = params.read_text()
    edits = {
        "nosuch: 1\n": "error: params.yaml: (top level): Additional properties are not allowed"
        " ('nosuch' was unexpected)",
        "": "error: params.yaml: dvc.yaml is not its DAG (models, datasets, strategies and shards"
        " are set in config/smoke.yaml: change them there and run `selfreflect dvc-yaml`)",
    }
    for added, error in edits.items():
        dropped = original.replace("  - cluster_and_verbalize\n", "")  # in no other list
        text = original + added if added else dropped
        params.write_text(text)
        failed = run(check, project, check=False)
        assert (failed.returncode, failed.stderr.strip()) == (1, error)
    params.write_text(original)


def test_dvc_keeps_the_outputs_snakemake_keeps(generated):
    config, project, stages = generated
    dvc = [out for stage in stages.values() for out in stage["outs"]]
    assert len(dvc) == len(set(dvc)), "an output belongs to one stage"
    assert set(dvc) == snakemake_outputs(project, config)


# config/real.yaml: every built-in strategy but the finetuned ones, so each one's prompts
@pytest.mark.parametrize("generated", [*CONFIGS, "config/real.yaml"], indirect=True)
def test_dvc_deps_and_params_are_the_jobs_inputs_settings_and_prompts(generated, monkeypatch):
    from selfreflect import paths
    from selfreflect.snakemake_jobs import workflow_jobs
    from selfreflect.workflow import dvc_param, stage_name

    config, project, stages = generated
    monkeypatch.chdir(project)
    jobs = workflow_jobs(Path(paths.SNAKEFILE), Path(config))
    resolved = yaml.safe_load((project / "params.yaml").read_text())
    temporary = {path for job in jobs for path in job.output if paths.matches(path, paths.SHARDS)}
    expected: dict[str, dict] = {}
    for job in jobs:
        if not job.output or job.output[0] in temporary:
            continue
        folded = [j for j in jobs if set(j.output) & set(job.input) & temporary]
        settings = {k for j in [*folded, job] for k in j.params.get("settings", {})}
        prompts = {k for j in [*folded, job] for k in j.params.get("prompts", {})}
        inputs = {p for j in [*folded, job] for p in j.input} - temporary
        expected[stage_name(job)] = {
            "deps": inputs,
            "params": {("params.yaml", dvc_param(k, resolved) or k) for k in settings}
            | {(PROMPTS, k) for k in prompts},
        }
    assert set(job_stages(stages)) == set(expected)
    for name, stage in job_stages(stages).items():
        assert stage["deps"] == expected[name]["deps"], name
        assert stage["params"] == expected[name]["params"], name


def test_listing_the_jobs_leaves_no_snakefile_names_in_the_process(generated, monkeypatch):
    """Snakemake runs the Snakefile in ``snakemake.workflow``'s namespace: its storage registry
    left there made a later in-process vLLM engine fail (its kernel registration reads the
    ``vars()`` of every module-level value)."""
    import snakemake.api  # first: snakemake.workflow alone is a circular import
    import snakemake.workflow

    from selfreflect import paths
    from selfreflect.snakemake_jobs import workflow_jobs

    config, project, _ = generated
    monkeypatch.chdir(project)
    before = dict(vars(snakemake.workflow))
    assert workflow_jobs(Path(paths.SNAKEFILE), Path(config))
    assert dict(vars(snakemake.workflow)) == before


def test_each_job_runs_exactly_the_package_files_its_command_imports(generated, monkeypatch):
    """Every package file is a code input of exactly the jobs whose command imports it (and,
    for a plug-in strategy's jobs, the plug-in's modules), its content in the job's code hash:
    so an edit of any file reruns exactly those jobs (tests/test_incremental.py edits a few
    files in finished runs of both engines)."""
    from selfreflect import paths
    from selfreflect.cli import command_deps
    from selfreflect.cli.commands import command_name
    from selfreflect.code_deps import SOURCE, code_digest, plugin_files
    from selfreflect.snakemake_jobs import workflow_jobs

    config, project, _ = generated
    monkeypatch.chdir(project)
    plugins = yaml.safe_load((project / "params.yaml").read_text())["summaries"]["plugins"]
    for job in workflow_jobs(Path(paths.SNAKEFILE), Path(config)):
        if not job.shellcmd.lstrip().startswith("selfreflect "):
            continue
        command = command_name(job.shellcmd.split()[1:])
        plugin = plugins.get(job.wildcards.get("strategy")) if command == "summarize" else None
        expected = {*command_deps(command).job_files, *(plugin_files(plugin) if plugin else ())}
        code = {path for path in job.input if path.startswith(f"{SOURCE}/") or path in expected}
        assert code == expected, job.rule
        assert job.params["code"] == code_digest(sorted(expected)), job.rule


@pytest.mark.parametrize("generated", ["config/smoke.yaml"], indirect=True)
def test_the_drifts_of_the_hand_written_dvc_yaml_are_gone(generated, monkeypatch):
    """The smoke config has local questions, ratings and a plug-in the old dvc.yaml missed."""
    from selfreflect.snakemake_jobs import workflow_jobs

    _, project, stages = generated
    assert "data/questions/smoke.jsonl" in stages["questions-smoke"]["deps"]
    assert "data/questions/smoke_mmlu" in stages["questions-smoke_mmlu"]["deps"]
    assert "data/human_ratings_example.csv" in stages["report_human_agreement"]["deps"]
    plugin = ("params.yaml", "summaries.plugins.majority_vote")
    assert plugin in stages["summarize-smoke-tiny-majority_vote"]["params"]
    assert plugin not in stages["summarize-smoke-tiny-basic"]["params"]
    assert (PROMPTS, "system") in stages["merge_answers-smoke-tiny"]["params"]
    assert (PROMPTS, "basic") in stages["summarize-smoke-tiny-basic"]["params"]
    assert (PROMPTS, "basic") not in stages["summarize-smoke-tiny-greedy"]["params"]
    assert {"reports/smoke/tables/validation.csv"} <= stages["report_validation"]["outs"]
    tracked = {key for stage in stages.values() for file, key in stage["params"] if file == PROMPTS}
    # the strategies the smoke config leaves out render theirs in config/real.yaml's jobs (whose
    # stages track what the jobs render: test_dvc_deps_and_params_are_the_jobs_inputs_...)
    monkeypatch.chdir(project)
    jobs = workflow_jobs(Path(paths.SNAKEFILE), Path("config/real.yaml"))
    tracked |= {key for job in jobs for key in job.params.get("prompts", {})}
    assert tracked == set(yaml.safe_load((REPO / PROMPTS).read_text())), "every prompt is a param"
    deps = set().union(*(stage["deps"] for stage in stages.values()))
    assert "results/smoke" not in deps, "report stages depend on the files they read"


def test_the_paper_config_does_not_build_the_tiny_model(generated):
    config, _, stages = generated
    uses_tiny = {name for name, stage in stages.items() if "results/models/tiny" in stage["deps"]}
    if "smoke" in config:
        assert "tiny_model" in stages and uses_tiny
    else:
        assert "tiny_model" not in stages and not uses_tiny


def test_committed_dvc_yaml_is_up_to_date(tmp_path):
    """CI fails when a rule or config/config.yaml changed without `selfreflect dvc-yaml`."""
    project = copy_project(tmp_path / "p", config="config/config.yaml")
    (project / "dvc.yaml").write_text((REPO / "dvc.yaml").read_text())
    (project / "params.yaml").write_text((REPO / "params.yaml").read_text())
    run(["selfreflect", "dvc-yaml", "--check"], project)
    for name in ("dvc.yaml", "params.yaml"):
        (project / name).write_text((REPO / name).read_text() + "# edited\n")
        result = run(["selfreflect", "dvc-yaml", "--check"], project, check=False)
        assert result.returncode == 1
        assert result.stderr.strip() == (
            f"error: {name}: not up to date with the rules and config/config.yaml;"
            " run selfreflect dvc-yaml"
        )
        (project / name).write_text((REPO / name).read_text())


@pytest.fixture
def explorer_reading_more(monkeypatch):
    """`selfreflect explorer` declaring one setting more than it does (report.confidence)."""
    from selfreflect import cli

    command = cli.find_command("explorer")
    settings, prompts, plugin = getattr(command, "reads", ((), False, False))
    reads = ((*settings, "report.confidence"), prompts, plugin)
    monkeypatch.setattr(command, "reads", reads, raising=False)
    monkeypatch.chdir(REPO)
    cli._command_deps.cache_clear()
    yield
    cli._command_deps.cache_clear()


def test_a_setting_added_to_a_command_declaration_is_tracked_by_its_rule_and_stage(
    explorer_reading_more,
):
    """A command's declaration is the one place its settings are named: no rule edit."""
    from selfreflect.cli import command_deps
    from selfreflect.config import load_config
    from selfreflect.snakemake_jobs import workflow_jobs
    from selfreflect.workflow import dvc_yaml

    snakefile, config = Path("workflow/Snakefile"), Path("config/smoke.yaml")
    (job,) = [job for job in workflow_jobs(snakefile, config) if job.rule == "explorer"]
    confidence = load_config(config)["report"]["confidence"]
    assert list(job.params["settings"]) == ["report.confidence"]
    assert job.params["settings"]["report.confidence"] == confidence
    code = command_deps("dvc-yaml").files
    stage = yaml.safe_load(dvc_yaml(snakefile, config, code))["stages"]["explorer"]
    assert stage["params"] == ["report.confidence"]
