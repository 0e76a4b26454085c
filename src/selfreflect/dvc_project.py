"""Where a config's DVC project lives: the paper's (``config/config.yaml``) at the repository
root, with the committed ``dvc.yaml`` and ``params.yaml``; any other config's in a DVC project
of its own, ``dvc/<run>/`` (:data:`selfreflect.paths.DVC_PROJECT`).

DVC 3 takes every ``dvc.yaml`` below a project's root as one pipeline, and refuses outputs
outside it, so a second config's stages can share neither the root's project (its status, metrics
and ``repro`` would mix the two runs) nor live in a subproject that reaches up to the root's
``results/``. ``dvc/<run>/`` is therefore a DVC project of its own (``dvc init --subdir``, which
the root's project skips) whose links to the root's folders (:data:`DVC_PROJECT_LINKS`) make
``results/<run>/…`` there the root's files: its ``dvc.yaml`` is the very text the root's would
be, and ``cd dvc/<run>`` makes the plain DVC commands that run's. Its ``.gitignore`` keeps
what lies through the links out of git (:func:`link_ignores`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from selfreflect.errors import ConfigError
from selfreflect.paths import DEFAULT_CONFIG, DVC_PROJECT, DVC_PROJECT_LINKS

ROOT = Path()
DVC_CONFIG = Path(".dvc/config")  # the root's remotes, which every project shares
DVC_IGNORE = Path(".dvcignore")  # what DVC leaves out of a folder's hash, in every project
GIT_IGNORE = Path(".gitignore")


def project_folder(config_file: str | os.PathLike, run: str) -> Path:
    """Where ``selfreflect dvc-yaml --config config_file`` writes its project: the root for the
    paper's config, ``dvc/<run>/`` for any other."""
    return ROOT if Path(config_file) == Path(DEFAULT_CONFIG) else Path(DVC_PROJECT.format(run=run))


def run_project(run: str) -> Path:
    """The DVC project that records ``run``: ``dvc/<run>/`` where ``selfreflect dvc-yaml`` made
    one, else the root (where a test or a user wrote another config's project)."""
    folder = Path(DVC_PROJECT.format(run=run))
    return folder if (folder / "dvc.yaml").is_file() else ROOT


def project_links(paths: Iterable[str] = ()) -> list[str]:
    """The root's folders and files a config's project links: :data:`DVC_PROJECT_LINKS`, and
    the top folder or file of each of ``paths`` (a plug-in's files, such as ``examples/``, and
    the :func:`config_files`)."""
    return sorted({*DVC_PROJECT_LINKS, *(Path(name).parts[0] for name in paths)})


def config_files(config: dict[str, Any], source: str) -> list[str]:
    """The relative paths of files and folders in the repository that ``config`` names (local
    questions, model folders and GGUF files, human ratings): a project's stages, run from
    ``dvc/<run>/``, reach them through links. A relative path out of the repository cannot be
    reached so: refused, naming ``source`` and the key."""
    named = {f"datasets.{name}.path": spec.get("path") for name, spec in config["datasets"].items()}
    for name, spec in config["models"].items():
        named[f"models.{name}.path"] = spec.get("path")
        if spec["package"] is None:
            named[f"models.{name}.gguf"] = spec["gguf"]
    named["report.human_ratings"] = config["report"]["human_ratings"]
    files = []
    for key, path in named.items():
        if not path or os.path.isabs(path) or not os.path.exists(path):
            continue
        if Path(path).parts[0] == os.pardir:
            raise ConfigError(
                f"{source}: {key}: {path} is outside the repository, where DVC's project runs"
                " cannot reach it by a relative path; give it as an absolute path"
            )
        files.append(path)
    return files


def missing_links(folder: Path, links: Iterable[str]) -> list[str]:
    """The ``links`` that project ``folder`` lacks (none at the root, which links nothing)."""
    return [] if folder == ROOT else [name for name in links if not (folder / name).is_symlink()]


def link_ignores(links: Iterable[str]) -> list[str]:
    """The ``.gitignore`` lines of a project with ``links``: every path through a link. Each
    experiment (``dvc exp run``) commits the git-tracked files its stages read; through a link
    (``src/…``) that commit held a copy of the folder in the link's place, so ``dvc exp apply``
    replaced the link by the copy and DVC no longer saw the root's files change. Ignored, they
    stay out of the commit, and DVC reads them through the link as before."""
    return [f"/{name}/**" for name in sorted(links)]


def missing_ignores(folder: Path, links: Iterable[str]) -> list[str]:
    """The lines of :func:`link_ignores` that project ``folder``'s ``.gitignore`` lacks (none
    at the root)."""
    if folder == ROOT:
        return []
    path = folder / GIT_IGNORE
    present = set(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else set()
    return [line for line in link_ignores(links) if line not in present]


def make_project(folder: Path, links: Iterable[str] = DVC_PROJECT_LINKS) -> None:
    """Make ``folder`` a DVC project of its own, if it is not one (``dvc init --subdir``), with
    the root's remotes and ``.dvcignore``, and add each link of ``links`` it lacks to the
    root's folder or file of that name (:func:`project_links`; a folder a fresh clone lacks is
    made: DVC writes through the links), and to its ``.gitignore`` each line of
    :func:`link_ignores` it lacks."""
    from dvc.repo import Repo

    if folder == ROOT:
        return
    if not (folder / ".dvc").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        Repo.init(str(folder), subdir=True).close()
        shutil.copyfile(DVC_CONFIG, folder / DVC_CONFIG)  # relative remotes resolve via `data`
        shutil.copyfile(DVC_IGNORE, folder / DVC_IGNORE)
    links = list(links)
    for name in missing_links(folder, links):
        if (folder / name).exists():
            raise ConfigError(
                f"{folder / name}: a copy where the link to the root's {name} should be (left by"
                f" `dvc exp apply` before the project had its {GIT_IGNORE}?); remove it and rerun"
            )
        if name in DVC_PROJECT_LINKS:
            Path(name).mkdir(exist_ok=True)
        (folder / name).symlink_to(Path(os.path.relpath(name, folder)))
    if missing := missing_ignores(folder, links):
        with (folder / GIT_IGNORE).open("a", encoding="utf-8") as ignore:
            ignore.writelines(f"{line}\n" for line in missing)
