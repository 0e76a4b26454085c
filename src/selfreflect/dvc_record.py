"""Switching engines: Snakemake takes DVC's record, ``dvc.lock``, for the outputs DVC made.

DVC decides by content: ``dvc.lock`` records each stage's deps, params and outs, and a stage
reruns when one differs. Snakemake decides by timestamps and by its own records, which know
nothing of what DVC wrote. ``selfreflect dvc-sync`` (:func:`dvc_sync`) reads ``dvc.lock`` for
the stages whose outputs are still the ones it recorded and dates them, content untouched, so
that Snakemake reruns what DVC would:

- made with the settings of the config, from the inputs recorded: DVC vouches for them, and an
  output older than its inputs (``dvc pull`` and ``dvc checkout`` write files in any order) is
  dated after them, so no job reruns for a file restored unchanged. Only the inputs Snakemake
  compares by timestamp count, not the package code (its ``ancient`` inputs). A record Snakemake
  kept of a file it had made there with other settings or prompt texts than the job's now
  describes a file DVC has since replaced, and would make Snakemake remake it ("Params have
  changed"): it is removed (:func:`_outdated_records`). A record of other code is kept: without
  it Snakemake could not tell a later code edit, so it remakes that file instead;
- made with other settings than the config (after ``dvc exp run``, ``dvc exp apply``, a checkout
  of another commit, or a config edited since): stale for this config, yet Snakemake, which
  keeps no record of what DVC made, would call them up to date. They are dated before their
  newest input, so Snakemake remakes them (as it does by its own records for what it made),
  and a record Snakemake kept of the file it had made there is removed (``snakemake
  --cleanup-metadata``): it would excuse the newer input, whose checksum it holds;
- made by other package code or prompt texts than the checkout's, changed after they were
  written (an edit, a ``git checkout``): stale too, for the same reason (Snakemake compares
  code by a hash it records only for the jobs it ran), and dated the same way. Outputs newer
  than the change were remade since, by Snakemake, and are left to it.

Every other output (changed since DVC recorded it, another run's) is for Snakemake's own records
to judge. The workflow only reads: :func:`sync_plan` is what ``dvc-sync`` would change, and
``snakemake`` names it in one line (:meth:`SyncPlan.message`) instead of planning on it; a run,
not a dry run, stops there.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from selfreflect.code_deps import SOURCE
from selfreflect.dvc_project import run_project
from selfreflect.errors import ConfigError
from selfreflect.fileio import SNAKEMAKE_STAMP, shown_path
from selfreflect.paths import MODELS, SNAKEFILE
from selfreflect.workflow import PARAMS_FILE, rule_of, setting_values

if TYPE_CHECKING:
    from snakemake.persistence.file import FilePersistence

LOCK_FILE = "dvc.lock"
SYNC_COMMAND = "selfreflect dvc-sync"
EARLIER_NS = 1_000_000_000  # how much before its newest input a stale output is dated
SNAKEMAKE_DIR = Path(".snakemake")  # Snakemake's records, where it runs (the working directory)
# a job's params (workflow.command_params) whose recorded value dvc-sync compares: how the job
# was set up. Not its `code`: a record of other code is left, and Snakemake reruns that job.
TRACKED_PARAMS = ("settings", "prompts")


@dataclass(frozen=True)
class RecordedStage:
    """A DVC stage whose outputs are the ones ``dvc.lock`` records."""

    rule: str
    outs: list[str]
    temporary: list[str]  # files its commands write that Snakemake deletes, DVC keeps
    benchmarks: list[str]  # Snakemake's benchmark files of its jobs (older outputs to Snakemake)
    deps: list[str]
    differing: dict[str, tuple[Any, Any]]  # params.yaml key: (recorded value, config value)
    deps_as_recorded: bool  # every input file is as recorded
    changed_code: tuple[str, ...]  # package files (code, prompt texts) not as recorded


def recorded_stages(config: dict[str, Any], root: Path = Path()) -> list[RecordedStage]:
    """The stages of ``dvc.lock`` whose outputs are as recorded, inputs before their readers,
    that are jobs of ``config``'s workflow: their outputs lie in its run's folders or are
    models, and the config has every setting they recorded (another config's stages name
    other runs, models or datasets)."""
    import networkx as nx
    from dvc.dependency.param import ParamsDependency
    from dvc.repo import Repo

    folders = tuple(f"{top}/{config['run']}/" for top in ("results", "reports"))
    stages = []
    with Repo(str(root)) as repo:
        graph = repo.index.graph  # edges point from a stage to the stages it depends on
        for stage in reversed(list(nx.topological_sort(graph))):
            outs = [str(out.def_path) for out in stage.outs]
            if not outs or not all(out.startswith((*folders, f"{MODELS}/")) for out in outs):
                continue
            if any(out.workspace_status() for out in stage.outs):
                continue
            params = [dep for dep in stage.deps if isinstance(dep, ParamsDependency)]
            own = [dep for dep in params if str(dep.def_path) == PARAMS_FILE]
            recorded = {k: v for dep in own for k, v in (dep.hash_info.value or {}).items()}
            current = setting_values(config, [key.split(".") for key in recorded])
            if current.keys() != recorded.keys():
                continue
            changed = [dep for dep in stage.deps if dep not in own and dep.workspace_status()]
            stages.append(
                RecordedStage(
                    rule=rule_of(stage.name),
                    outs=outs,
                    temporary=(stage.meta or {}).get("temporary", []),
                    benchmarks=(stage.meta or {}).get("benchmarks", []),
                    deps=[str(dep.def_path) for dep in stage.deps if dep not in params],
                    differing={
                        key: (value, current.get(key))
                        for key, value in recorded.items()
                        if current.get(key) != value
                    },
                    deps_as_recorded=not any(dep not in params for dep in changed),
                    changed_code=tuple(
                        str(dep.def_path) for dep in changed if _is_package(str(dep.def_path))
                    ),
                )
            )
    return stages


@dataclass(frozen=True)
class SyncPlan:
    """What :func:`dvc_sync` changes: timestamps (ns) of the files it dates, and the stale stages
    it cannot make Snakemake remake (no input Snakemake compares by timestamp)."""

    after: dict[str, int]  # vouched outputs dated before their inputs: their newest input's time
    before: dict[str, int]  # outputs DVC made with other settings: just before their newest input
    keys: tuple[str, ...]  # the settings those were made with another value of
    undatable: tuple[RecordedStage, ...] = ()
    forget: tuple[str, ...] = ()  # those outputs that Snakemake keeps records of (made earlier)
    vouched: tuple[str, ...] = ()  # every output DVC vouches for, dated or not

    def __bool__(self) -> bool:
        return bool(self.after or self.before or self.undatable or self.forget)

    def unforced(self, forced: Iterable[str]) -> SyncPlan:
        """The plan less the stale stages a run reruns anyway: ``forced`` names their rule or
        an output (Snakemake's ``--forcerun``)."""
        forced = set(forced)
        undatable = [
            s for s in self.undatable if s.rule not in forced and forced.isdisjoint(s.outs)
        ]
        return replace(self, undatable=tuple(undatable))

    def message(self, source: str, overrides: Sequence[str] = ()) -> str:
        """One line: what DVC left out of step with Snakemake, and the command that fixes it
        (``source``: the config files, shown relative to the working directory; ``overrides``:
        the run's ``--config`` ``KEY=VALUE`` arguments, which the command repeats)."""
        source = ", ".join(shown_path(path) for path in source.split(", "))
        quoted = [shlex.quote(argument) for argument in overrides]
        sets = "".join(f" --set {argument}" for argument in quoted)
        configs = f" --config {' '.join(quoted)}" if quoted else ""
        clauses = []
        if self.after:
            clauses.append(
                f"{len(self.after)} outputs DVC vouches for are dated before their inputs"
            )
        stale = [*self.before, *(path for path in self.forget if path not in self.before)]
        if stale:
            clauses.append(
                f"{len(stale)} outputs DVC made with another {', '.join(self.keys)} look up to date"
            )
        first = next(iter([*self.after, *stale]), None)
        line = f"{source}: " + " and ".join(clauses)
        if clauses:
            command = f"{SYNC_COMMAND} --config {source}{sets}"
            line += f" ({LOCK_FILE}; first: {first}): `{command}` re-dates them, so that "
            line += "Snakemake reruns only what the config changed"
        if self.undatable:
            files = " ".join(stage.outs[0] for stage in self.undatable)
            line += "; " if clauses else ""
            line += (
                f"DVC made {len(self.undatable)} jobs' outputs with another {', '.join(self.keys)} "
                f"({PARAMS_FILE}, {LOCK_FILE}); rerun them: snakemake --configfile {source}"
                f"{configs} --forcerun {files}"
            )
        return line


def sync_plan(config: dict[str, Any]) -> SyncPlan:
    """What :func:`dvc_sync` would date for ``config`` (module docstring), from the lock of its
    run's DVC project (:func:`selfreflect.dvc_project.run_project`, whose stages spell the
    root's paths); reads, changes nothing. Without a lock, DVC is not imported: Snakemake
    starts without it."""
    project = run_project(config["run"])
    if not (project / LOCK_FILE).is_file():
        return SyncPlan({}, {}, ())
    from dvc.scm import SCMError

    try:
        stages = recorded_stages(config, project)
    except SCMError:  # a copy without git (a release archive): DVC cannot open its project
        return SyncPlan({}, {}, ())
    after: dict[str, int] = {}  # vouched output: its newest input's timestamp (ns)
    before: dict[str, int] = {}
    keys: set[str] = set()
    undatable = []
    stale: list[str] = []
    vouched: list[str] = []
    for stage in stages:
        dates = {**after, **before}
        changed = _changed_since(stage, dates)
        if stage.differing or changed:
            keys |= {*stage.differing, *changed}
            written = [*stage.outs, *stage.temporary]
            stale += written
            early = _dates_before_inputs(written, stage.deps, dates)
            if early is None:
                undatable.append(stage)
            before.update(early or {})
        elif stage.deps_as_recorded:
            vouched += stage.outs
            kept = [*stage.outs, *stage.benchmarks]
            after.update(_dates_after_inputs(kept, stage.deps, dates))
            oldest = min(_times(kept, {**dates, **after}).values(), default=None)
            after.update(_dates_after_inputs(stage.temporary, stage.deps, dates, not_after=oldest))
    forget = tuple(_recorded_by_snakemake(stale))
    return SyncPlan(after, before, tuple(sorted(keys)), tuple(undatable), forget, tuple(vouched))


def dvc_sync(config: dict[str, Any], source: str, overrides: Sequence[str] = ()) -> SyncPlan:
    """Date the outputs ``dvc.lock`` records for ``config`` (module docstring) and remove
    Snakemake's records that no longer describe them; a one-line :class:`ConfigError` names
    the stale outputs no date makes Snakemake remake, and the command that does (with the
    ``--config`` ``overrides`` the config was given), after the others are dated."""
    plan = sync_plan(config)
    for path, time in {**plan.after, **plan.before}.items():
        os.utime(_time_carrier(path), ns=(time, time))
    forget = [*plan.forget, *_outdated_records(plan.vouched, source, overrides)]
    if forget:
        from snakemake.io import IOFile

        records = _snakemake_records()
        for path in forget:
            records.cleanup_metadata(IOFile(path))
    if plan.undatable:
        stale = SyncPlan({}, {}, plan.keys, plan.undatable)
        raise ConfigError(stale.message(source, overrides))
    return plan


def _outdated_records(paths: Iterable[str], source: str, overrides: Sequence[str]) -> list[str]:
    """Those of ``paths`` whose record Snakemake keeps holds other params than its job has for
    the config ``source`` with the ``--config`` ``overrides`` (:data:`TRACKED_PARAMS`, compared
    as Snakemake stores them: as text). The jobs are listed only where there is a record."""
    recorded = _recorded_by_snakemake(paths)
    if not recorded:
        return []
    from snakemake.cli import parse_config
    from snakemake.io import IOFile

    from selfreflect.snakemake_jobs import workflow_jobs

    jobs = workflow_jobs(Path(SNAKEFILE), Path(source), parse_config(list(overrides)))
    params = {path: job.params for job in jobs for path in job.output}
    records = _snakemake_records()
    return [
        path
        for path in recorded
        if path in params
        and not {repr(params[path][key]) for key in TRACKED_PARAMS if key in params[path]}
        <= set(records.params(IOFile(path)) or ())
    ]


def _recorded_by_snakemake(paths: Iterable[str]) -> list[str]:
    """Those of ``paths`` that Snakemake keeps a record of (a job it ran made a file there)."""
    if not (SNAKEMAKE_DIR / "metadata").is_dir():
        return []
    from snakemake.io import IOFile

    records = _snakemake_records()
    return [path for path in paths if records.metadata(IOFile(path)) is not None]


def _snakemake_records() -> FilePersistence:
    """Snakemake's records of the jobs it ran here (its ``.snakemake`` folder), as
    ``snakemake --cleanup-metadata`` reads and removes them."""
    from snakemake.persistence.file import FilePersistence

    return FilePersistence(nolock=True, path=SNAKEMAKE_DIR)


def _changed_since(stage: RecordedStage, dates: dict[str, int]) -> list[str]:
    """The package files of ``stage`` that differ from DVC's record and are newer than one of
    its outputs: changed since DVC made them, which Snakemake cannot tell (its ``ancient`` code
    inputs are compared by a hash it records only for what it ran). Outputs newer than every
    such file were remade since (by Snakemake, maybe to the recorded bytes)."""
    oldest = min(_times(stage.outs, dates).values(), default=None)
    if oldest is None:
        return []
    return [path for path in stage.changed_code if _mtime(path) > oldest]


def _dates_before_inputs(
    outs: list[str], deps: list[str], dates: dict[str, int]
) -> dict[str, int] | None:
    """The outputs not older than the newest input Snakemake compares by timestamp, each with a
    time a second before it (Snakemake compares seconds as floats); None where there is no such
    input."""
    newest = _newest_input(deps, dates)
    if newest is None:
        return None
    early = newest - EARLIER_NS
    return {path: early for path, time in _times(outs, dates).items() if time > early}


def _newest_input(deps: list[str], dates: dict[str, int]) -> int | None:
    """The newest timestamp of the inputs Snakemake compares by timestamp (not package code, an
    ``ancient`` input); ``dates``: the timestamps already due to the inputs."""
    compared = [path for path in deps if not _is_package(path)]
    return max(_times(compared, dates).values(), default=None)


def _is_package(path: str) -> bool:
    """Whether ``path`` is a file of the package (code, prompt texts): an ``ancient`` input."""
    return Path(path).is_relative_to(SOURCE)


def _times(paths: list[str], dates: dict[str, int]) -> dict[str, int]:
    """The timestamps of ``paths`` that exist, those in ``dates`` (due to them) before their
    own."""
    return {
        path: dates[path] if path in dates else _mtime(path)
        for path in paths
        if os.path.exists(path)
    }


def _dates_after_inputs(
    outs: list[str], deps: list[str], dates: dict[str, int], not_after: int | None = None
) -> dict[str, int]:
    """The outputs older than their newest input Snakemake compares by timestamp, each with that
    input's timestamp; ``dates``: the timestamps already due to the inputs (outputs of the
    stages before). ``not_after``: for the files a stage writes on the way to its outputs (its
    shards, inputs of its last job to Snakemake), also those newer than it, the oldest output
    or benchmark file the stage leaves (maybe one of an earlier Snakemake run)."""
    newest = _newest_input(deps, dates)
    if newest is None:
        return {}
    return {
        path: newest
        for path, time in _times(outs, dates).items()
        if time < newest or (not_after is not None and time > not_after)
    }


def _time_carrier(path: str) -> str:
    """The file whose modification time Snakemake takes for ``path``: a folder's
    :data:`~selfreflect.fileio.SNAKEMAKE_STAMP` where it has one (a folder Snakemake made),
    else ``path``."""
    stamp = os.path.join(path, SNAKEMAKE_STAMP)
    return stamp if os.path.isdir(path) and os.path.isfile(stamp) else path


def _mtime(path: str) -> int:
    """``path``'s modification time as Snakemake compares it, in nanoseconds (seconds as a
    float lose the last few hundred)."""
    return os.stat(_time_carrier(path)).st_mtime_ns
