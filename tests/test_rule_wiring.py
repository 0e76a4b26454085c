"""The rules say what they do: each writes its code inputs, params, log, benchmark and conda
environment as directives (workflow/rules/*.smk), and nothing completes a rule after parsing."""

import re
from pathlib import Path

import pytest

from tests.workflow_utils import REPO, copy_project

# what once completed every rule after parsing (selfreflect.workflow.command_rule): a method or
# attribute of Snakemake's Rule objects, set from outside the Snakefile's directives
RULE_ATTRIBUTES = re.compile(
    r"\.(set_input|set_output|set_params|set_log|set_wildcard_constraints)\(|"
    r"\b\w*rule\w*\.(\w+)\s*=[^=]|\.(benchmark_modifier|conda_env|output_modifier)\b"
)


def test_no_file_sets_an_attribute_of_a_snakemake_rule():
    files = [
        *REPO.glob("src/**/*.py"),
        REPO / "workflow/Snakefile",
        *REPO.glob("workflow/**/*.smk"),
    ]
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if RULE_ATTRIBUTES.search(line)
    ]
    assert not found, found


@pytest.mark.workflow
def test_each_job_logs_and_benchmarks_under_its_rule_and_wildcards(tmp_path, monkeypatch):
    """``logs/<run>/<rule>/<wildcard values>.log`` and ``benchmarks/<run>/…tsv`` (the models'
    under ``logs/models``, ``benchmarks/models``, shared by runs), and the resolved config as
    ``params.config`` exactly where the command takes ``--config``."""
    from selfreflect import paths
    from selfreflect.cli import command_deps
    from selfreflect.cli.commands import command_name
    from selfreflect.snakemake_jobs import workflow_jobs

    project = copy_project(tmp_path / "p")
    monkeypatch.chdir(project)
    jobs = workflow_jobs(Path(paths.SNAKEFILE), Path("config/smoke.yaml"))
    assert {job.rule for job in jobs} >= {"tiny_model", "judge", "report_main_table"}
    for job in [job for job in jobs if job.rule != "all"]:
        model = job.output[0].startswith(f"{paths.MODELS}/")
        logs, benchmarks = (
            ("logs/models", paths.MODEL_BENCHMARKS) if model else ("logs/smoke", "benchmarks/smoke")
        )
        name = "/".join([job.rule, *job.wildcards.values()])
        assert job.log == [f"{logs}/{name}.log"], job.rule
        assert job.benchmark == f"{benchmarks}/{name}.tsv", job.rule
        command = command_name(job.shellcmd.split()[1:])
        takes_config = command_deps(command).takes_config
        assert job.params.get("config") == ("logs/smoke/config.yaml" if takes_config else None)


@pytest.mark.workflow
def test_runs_with_one_model_entry_share_its_model_job(tmp_path, monkeypatch):
    """The laptop and real runs convert SmolLM2's GGUF file in jobs of equal params (what
    Snakemake compares): the model one run made is the other's. A param naming the run's config
    rebuilt it for the other run, and made that run's every job due again."""
    from selfreflect import paths
    from selfreflect.snakemake_jobs import workflow_jobs

    monkeypatch.chdir(copy_project(tmp_path / "p"))

    def conversion(config: str):
        jobs = workflow_jobs(Path(paths.SNAKEFILE), Path(config))
        (job,) = [job for job in jobs if job.output == [f"{paths.MODELS}/smollm2"]]
        return job

    laptop, real = conversion("config/laptop.yaml"), conversion("config/real.yaml")
    assert laptop.rule == real.rule == "convert_model"
    assert dict(laptop.params.items()) == dict(real.params.items())
    assert "--config logs/laptop/config.yaml" in laptop.shellcmd  # the run's own config, read
