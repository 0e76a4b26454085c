"""Every job of the Snakemake workflow for a config, read through Snakemake's public plug-in
interfaces (so an upgrade that breaks them fails loudly, not silently).

A forced dry run with this module as its executor plug-in: Snakemake logs each job's
``JOB_INFO`` event (``snakemake-interface-logger-plugins``: rule, wildcards, inputs, outputs,
logs, shell command) and hands the job to :class:`Executor`
(``snakemake-interface-executor-plugins``), whose ``properties()`` give its params.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snakemake_interface_executor_plugins.executors.base import AbstractExecutor, SubmittedJobInfo
from snakemake_interface_executor_plugins.jobs import JobExecutorInterface
from snakemake_interface_executor_plugins.settings import CommonSettings
from snakemake_interface_logger_plugins.common import LogEvent

from selfreflect.errors import ConfigError

PLUGIN = "selfreflect-jobs"
common_settings = CommonSettings(  # a dry run: jobs are listed, none is run
    non_local_exec=False,
    dryrun_exec=True,
    implies_no_shared_fs=False,
    job_deploy_sources=False,
    pass_envvar_declarations_to_cmd=False,
    auto_deploy_default_storage_provider=False,
)
_params: dict[int, dict[str, Any]] = {}
_listing = False  # workflow_jobs is building the DAG (the Snakefile skips what only a run needs)


def listing_jobs() -> bool:
    """Whether the Snakefile is being read by :func:`workflow_jobs` (this process lists jobs; it
    runs none, so DVC's record, :mod:`selfreflect.dvc_record`, is nothing to it)."""
    return _listing


@dataclass(frozen=True)
class Job:
    """One job as the workflow runs it."""

    rule: str
    wildcards: dict[str, str]
    input: list[str]
    output: list[str]
    log: list[str]
    benchmark: str | None
    params: dict[str, Any]
    shellcmd: str


class Executor(AbstractExecutor):
    """Records each job's params and reports it done at once."""

    def run_job(self, job: JobExecutorInterface) -> None:
        properties = json.loads(job.properties())
        if "params" not in properties:  # Snakemake leaves them out when they are not JSON
            raise ConfigError(f"workflow: the params of rule {properties['rule']} are not JSON")
        _params[job.jobid] = properties["params"]
        submitted = SubmittedJobInfo(job=job)
        self.report_job_submission(submitted)
        self.report_job_success(submitted)

    def shutdown(self) -> None:
        pass

    def cancel(self) -> None:
        pass

    def handle_job_success(self, job: JobExecutorInterface) -> None:
        pass

    def handle_job_error(self, job: JobExecutorInterface) -> None:
        pass


class _JobInfo(logging.Handler):
    """The ``JOB_INFO`` events of the dry run, by job id."""

    def __init__(self) -> None:
        super().__init__()
        self.records: dict[int, logging.LogRecord] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "event", None) == LogEvent.JOB_INFO:
            self.records[record.jobid] = record  # type: ignore[attr-defined]


@contextmanager
def _snakefile_namespace_kept() -> Iterator[None]:
    """Snakemake runs a Snakefile in the namespace of its module ``snakemake.workflow``; what
    the Snakefile leaves there (its config, Snakemake's storage registry, whose every attribute
    is a proxy) would otherwise outlive the call and break code that scans the loaded modules
    (vLLM's CPU kernel registration does)."""
    import snakemake.workflow

    namespace = vars(snakemake.workflow)
    kept = dict(namespace)
    try:
        yield
    finally:
        namespace.clear()
        namespace.update(kept)


def job_stats(output: str) -> dict[str, int]:
    """Jobs per rule from the 'Job stats' table Snakemake prints before a run or dry run (none
    where it has nothing to do)."""
    if "Nothing to be done" in output:
        return {}
    table = output.split("Job stats:")[1].split("\n\n")[0].splitlines()[3:]
    counts = {line.split()[0]: int(line.split()[1]) for line in table}
    return {rule: n for rule, n in counts.items() if rule not in ("all", "total")}


def workflow_jobs(
    snakefile: Path, configfile: Path, overrides: Mapping[str, Any] | None = None
) -> list[Job]:
    """Every job of the workflow for ``configfile`` and ``--config`` ``overrides`` (as
    ``snakemake.cli.parse_config`` reads them), as if nothing had run."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.enums import Quietness
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        ExecutionSettings,
        OutputSettings,
        ResourceSettings,
    )
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    ExecutorPluginRegistry().register_plugin(PLUGIN, sys.modules[__name__])
    # as `snakemake -n`, but neither a running run's lock nor a killed run's records stop it
    settings = ExecutionSettings(lock=False, ignore_incomplete=True)
    info = _JobInfo()
    logger = logging.getLogger("snakemake")
    propagate, logger.propagate = logger.propagate, False  # nothing reaches the caller's log
    _params.clear()
    global _listing
    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api, _snakefile_namespace_kept():
        logger.addHandler(info)
        _listing = True
        try:
            workflow = api.workflow(
                resource_settings=ResourceSettings(),
                config_settings=ConfigSettings(configfiles=[configfile], config=overrides or {}),
                snakefile=snakefile,
            )
            dag = workflow.dag(DAGSettings(forceall=True))
            dag.execute_workflow(executor=PLUGIN, execution_settings=settings)
        finally:
            _listing = False
            logger.removeHandler(info)
            logger.propagate = propagate
    if not _params or set(info.records) != set(_params):  # an interface changed: say so
        raise ConfigError("workflow: Snakemake's job events do not match the jobs it ran")
    return [_job(record, _params[jobid]) for jobid, record in info.records.items()]


def _job(info: Any, params: dict[str, Any]) -> Job:
    return Job(
        rule=info.rule_name,
        wildcards=dict(info.wildcards),
        input=list(info.input),
        output=list(info.output),
        log=list(info.log),
        benchmark=info.benchmark or None,
        params=params,
        shellcmd=info.shellcmd or "",
    )
