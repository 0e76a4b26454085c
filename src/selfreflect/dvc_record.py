"""Switching engines: Snakemake takes DVC's record, ``dvc.lock``, for the outputs DVC made.

DVC decides by content: ``dvc.lock`` records each stage's deps, params and outs, and a stage
reruns when one differs. Snakemake decides by timestamps and by its own records, which know
nothing of what DVC wrote. So before Snakemake plans a run, :func:`align_with_dvc` reads
``dvc.lock`` for the stages whose outputs are still the ones it recorded:

- made with the settings of Snakemake's config, from the inputs recorded: DVC vouches for
  them, and the run proper puts their timestamps in DAG order (no job reruns for a file ``dvc
  checkout`` restored with unchanged content). Only the inputs Snakemake compares by timestamp
  count, not the package code (its ``ancient`` inputs). A dry run changes nothing: where
  timestamps are out of order it stops, saying so;
- made with other settings than the config, while ``params.yaml`` still holds those (after
  ``dvc exp run``, ``dvc exp apply`` or a checkout of another commit), or while Snakemake keeps
  no record of them (DVC made them, and the config changed since, ``params.yaml`` regenerated
  or not: Snakemake would call them up to date): stale for this config, and the run stops
  naming them and the command that reruns them.

Every other output (one Snakemake made and ``dvc commit`` recorded, one changed since DVC
recorded it, another run's) is for Snakemake's own records to judge.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfreflect.code_deps import SOURCE
from selfreflect.errors import ConfigError
from selfreflect.paths import MODELS
from selfreflect.workflow import PARAMS_FILE, setting_values

LOCK_FILE = "dvc.lock"


@dataclass(frozen=True)
class RecordedStage:
    """A DVC stage whose outputs are the ones ``dvc.lock`` records."""

    rule: str
    outs: list[str]
    temporary: list[str]  # files its commands write that Snakemake deletes, DVC keeps
    benchmarks: list[str]  # Snakemake's benchmark files of its jobs (older outputs to Snakemake)
    deps: list[str]
    differing: dict[str, tuple[Any, Any]]  # params.yaml key: (recorded value, config value)
    params_as_recorded: bool  # params.yaml still holds the recorded values
    deps_as_recorded: bool  # every input file is as recorded


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
            stages.append(
                RecordedStage(
                    rule=stage.name.split("-")[0],
                    outs=outs,
                    temporary=(stage.meta or {}).get("temporary", []),
                    benchmarks=(stage.meta or {}).get("benchmarks", []),
                    deps=[str(dep.def_path) for dep in stage.deps if dep not in params],
                    differing={
                        key: (value, current.get(key))
                        for key, value in recorded.items()
                        if current.get(key) != value
                    },
                    params_as_recorded=not any(dep.workspace_status() for dep in own),
                    deps_as_recorded=not any(
                        dep.workspace_status() for dep in stage.deps if dep not in params
                    ),
                )
            )
    return stages


def align_with_dvc(
    config: dict[str, Any],
    source: str,
    recorded_by_snakemake: Callable[[str], bool],
    forced: Iterable[str] = (),
    dry_run: bool = False,
) -> None:
    """Make Snakemake agree with ``dvc.lock`` (module docstring); a one-line
    :class:`ConfigError` names the outputs DVC made with settings other than ``source``'s
    (those not in ``forced``, Snakemake's ``--forcerun`` rules and files), or, on a
    ``dry_run``, the vouched outputs it leaves dated before their inputs.
    ``recorded_by_snakemake(path)`` tells whether Snakemake keeps a record of making ``path``."""
    if not Path(LOCK_FILE).is_file():
        return
    forced = set(forced)
    stale = []
    dates: dict[str, int] = {}  # vouched output: its newest input's timestamp (ns)
    for stage in recorded_stages(config):
        dvc_made = stage.params_as_recorded or not any(map(recorded_by_snakemake, stage.outs))
        if stage.differing and dvc_made:
            if stage.rule not in forced and forced.isdisjoint(stage.outs):
                stale.append(stage)
        elif not stage.differing and stage.deps_as_recorded:
            kept = [*stage.temporary, *stage.benchmarks, *stage.outs]
            dates.update(_dates_after_inputs(kept, stage.deps, dates))
    if stale:
        keys = ", ".join(sorted({key for stage in stale for key in stage.differing}))
        files = " ".join(stage.outs[0] for stage in stale)
        raise ConfigError(
            f"{source}: DVC made {len(stale)} jobs' outputs with another {keys} ({PARAMS_FILE}, "
            f"{LOCK_FILE}); rerun them: snakemake --configfile {source} --forcerun {files}"
        )
    if dates and dry_run:
        raise ConfigError(
            f"{source}: {len(dates)} outputs DVC vouches for ({LOCK_FILE}) are dated before "
            f"their inputs, as `dvc checkout` leaves them (first: {next(iter(dates))}); a dry "
            "run changes nothing: snakemake without -n dates them before it plans"
        )
    for path, time in dates.items():
        os.utime(_time_carrier(path), ns=(time, time))


def _dates_after_inputs(outs: list[str], deps: list[str], dates: dict[str, int]) -> dict[str, int]:
    """The outputs older than their newest input Snakemake compares by timestamp (not package
    code, an ``ancient`` input), each with that input's timestamp; ``dates``: the timestamps
    already due to the inputs (outputs of the stages before)."""

    def mtime(path: str) -> int:
        return dates[path] if path in dates else _mtime(path)

    compared = [path for path in deps if not Path(path).is_relative_to(SOURCE)]
    newest = max((mtime(path) for path in compared if os.path.exists(path)), default=None)
    if newest is None:
        return {}
    return {path: newest for path in outs if os.path.exists(path) and mtime(path) < newest}


def _time_carrier(path: str) -> str:
    """The file whose modification time Snakemake takes for ``path``: a folder's
    ``.snakemake_timestamp`` where it has one (a folder Snakemake made), else ``path``."""
    stamp = os.path.join(path, ".snakemake_timestamp")
    return stamp if os.path.isdir(path) and os.path.isfile(stamp) else path


def _mtime(path: str) -> int:
    """``path``'s modification time as Snakemake compares it, in nanoseconds (seconds as a
    float lose the last few hundred)."""
    return os.stat(_time_carrier(path)).st_mtime_ns
