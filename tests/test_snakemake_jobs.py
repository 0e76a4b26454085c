"""Snakemake's jobs, listed in process (selfreflect.snakemake_jobs), on a Snakefile of two rules:
each job as the workflow runs it, for the config and its ``--config`` overrides, as if nothing
had run; and the 'Job stats' table Snakemake prints before a (dry) run."""

import logging
from pathlib import Path

import pytest

from selfreflect.errors import ConfigError
from selfreflect.snakemake_jobs import job_stats, listing_jobs, workflow_jobs

SNAKEFILE = """\
from selfreflect.snakemake_jobs import listing_jobs

rule all:
    input: expand("out/{name}.txt", name=config["names"])

rule make:
    output: "out/{name}.txt"
    log: "logs/{name}.log"
    benchmark: "benchmarks/{name}.tsv"
    params: listing=listing_jobs(), greeting=config.get("greeting", "hi")
    shell: "echo {params.greeting} > {output} 2> {log}"
"""
# as `snakemake -n` printed it for that Snakefile (snakemake 9.27)
STATS = """\
Building DAG of jobs...
Job stats:
job      count
-----  -------
make         2
all          1
total        3


[Mon Dec  7 16:19:53 2026]
rule make:
"""


@pytest.fixture
def workflow(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("Snakefile").write_text(SNAKEFILE)
    Path("c.yaml").write_text("names: [a, b]\n")
    return tmp_path


def test_every_job_is_listed_with_its_params_even_when_its_output_exists(workflow):
    """A job whose output is there is listed too (a forced dry run); the Snakefile reads that
    it is being listed; the overrides are applied; the caller's logging and Snakemake's module
    namespace are left as they were."""
    import snakemake.api  # first: snakemake.workflow alone is a circular import
    import snakemake.workflow

    Path("out").mkdir()
    Path("out/a.txt").write_text("made\n")
    namespace = dict(vars(snakemake.workflow))
    handlers = list(logging.getLogger("snakemake").handlers)
    jobs = workflow_jobs(Path("Snakefile"), Path("c.yaml"), {"greeting": "yo"})
    make = {job.wildcards["name"]: job for job in jobs if job.rule == "make"}
    (everything,) = [job for job in jobs if job.rule == "all"]
    assert sorted(make) == ["a", "b"]
    assert make["a"].output == ["out/a.txt"] and make["a"].log == ["logs/a.log"]
    assert make["a"].benchmark == "benchmarks/a.tsv"
    assert make["a"].params == {"listing": True, "greeting": "yo"}
    assert make["a"].shellcmd == "echo yo > out/a.txt 2> logs/a.log"
    assert everything.input == ["out/a.txt", "out/b.txt"]
    assert (everything.output, everything.benchmark, everything.shellcmd) == ([], None, "")
    assert not listing_jobs()
    assert dict(vars(snakemake.workflow)) == namespace
    assert logging.getLogger("snakemake").propagate
    assert logging.getLogger("snakemake").handlers == handlers
    # a second listing, of another config, holds only its own jobs
    Path("c.yaml").write_text("names: [c]\n")
    jobs = workflow_jobs(Path("Snakefile"), Path("c.yaml"))
    assert sorted(job.rule for job in jobs) == ["all", "make"]
    (make_c,) = [job for job in jobs if job.rule == "make"]
    assert make_c.params["greeting"] == "hi"


def test_params_snakemake_cannot_write_as_json_stop_with_one_line(workflow):
    Path("Snakefile").write_text(
        'rule odd:\n    output: "odd.txt"\n    params: thing={1, 2}\n    shell: "touch {output}"\n'
    )
    with pytest.raises(ConfigError, match=r"^workflow: the params of rule odd are not JSON$"):
        workflow_jobs(Path("Snakefile"), Path("c.yaml"))


def test_job_stats_counts_the_jobs_of_each_rule_but_all():
    assert job_stats(STATS) == {"make": 2}
    nothing = "Building DAG of jobs...\nNothing to be done (all requested files are present)."
    assert job_stats(nothing) == {}
