"""A config's DVC project of its own (`dvc/<run>/`) shares the root's settings."""

import shutil

from dvc.repo import Repo

from selfreflect.dvc_project import DVC_CONFIG, DVC_IGNORE, make_project
from selfreflect.fileio import SNAKEMAKE_STAMP
from tests.workflow_utils import REPO, run


def test_a_folder_hashes_alike_whether_snakemake_or_dvc_made_it(tmp_path, monkeypatch):
    """Snakemake leaves its timestamp file in a folder output, `dvc repro` does not: the new
    project ignores it, as the root's does, so the shipped lock's folders match either run."""
    (tmp_path / DVC_CONFIG).parent.mkdir()
    shutil.copyfile(REPO / DVC_CONFIG, tmp_path / DVC_CONFIG)
    shutil.copyfile(REPO / DVC_IGNORE, tmp_path / DVC_IGNORE)
    run(["git", "init", "-q"], tmp_path)
    monkeypatch.chdir(tmp_path)
    make_project(tmp_path / "dvc" / "r")
    project = tmp_path / "dvc" / "r"
    assert (project / DVC_IGNORE).read_text() == (REPO / DVC_IGNORE).read_text()
    folder = project / "results" / "folder"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("a")
    with Repo(str(project)) as repo:
        before = repo.dvcignore.ls(repo.fs, str(folder))
        (folder / SNAKEMAKE_STAMP).touch()
        assert repo.dvcignore.ls(repo.fs, str(folder)) == before
