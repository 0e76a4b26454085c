"""A config's DVC project of its own (`dvc/<run>/`) shares the root's settings and reaches
every file its stages read."""

import json
import os
import shutil
from pathlib import Path

import pytest
from dvc.repo import Repo

from selfreflect.config import validate_config
from selfreflect.dvc_project import (
    DVC_CONFIG,
    DVC_IGNORE,
    ROOT,
    config_files,
    make_project,
    missing_ignores,
    missing_links,
    project_links,
)
from selfreflect.errors import ConfigError
from selfreflect.fileio import SNAKEMAKE_STAMP
from selfreflect.paths import DVC_PROJECT_LINKS
from tests.workflow_utils import REPO, clone_completed, commit_all, copy_project, run

DVC_YAML = ["selfreflect", "dvc-yaml"]


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
    assert (project / DVC_CONFIG).read_text() == (REPO / DVC_CONFIG).read_text()  # its remotes
    folder = project / "results" / "folder"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("a")
    with Repo(str(project)) as repo:
        before = repo.dvcignore.ls(repo.fs, str(folder))
        (folder / SNAKEMAKE_STAMP).touch()
        assert repo.dvcignore.ls(repo.fs, str(folder)) == before


def test_an_applied_experiment_keeps_the_projects_links(tmp_path, monkeypatch):
    """`dvc exp run` commits the git-tracked files its stages read: through the `src` link,
    that commit held a copy of the root's folder in the link's place, and `dvc exp apply`
    left the copy there, so `dvc status` no longer saw the root's code change. The project's
    .gitignore keeps what lies through its links out of the commit."""
    (tmp_path / DVC_CONFIG).parent.mkdir()
    shutil.copyfile(REPO / DVC_CONFIG, tmp_path / DVC_CONFIG)
    shutil.copyfile(REPO / DVC_IGNORE, tmp_path / DVC_IGNORE)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "code.py").write_text("a\n")
    run(["git", "init", "-q"], tmp_path)
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "dvc" / "r"
    make_project(project)
    assert "/src/**" in (project / ".gitignore").read_text().splitlines()
    (project / "params.yaml").write_text("x: 1\n")
    stage = {"cmd": "cat src/code.py params.yaml > out.txt", "deps": ["src/code.py"]}
    stage |= {"params": ["x"], "outs": ["out.txt"]}
    (project / "dvc.yaml").write_text(json.dumps({"stages": {"s": stage}}))
    run(["dvc", "repro", "-q"], project)
    commit_all(tmp_path, "project")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    run(["dvc", "exp", "run", "--temp", "-n", "x2", "-S", "x=2"], project, env=env)
    run(["dvc", "exp", "apply", "x2"], project)
    assert (project / "out.txt").read_text() == "a\nx: 2\n"
    assert all((project / name).is_symlink() for name in DVC_PROJECT_LINKS)
    (tmp_path / "src" / "code.py").write_text("b\n")
    assert "modified:           src/code.py" in run(["dvc", "status"], project).stdout
    (project / "src").unlink()
    shutil.copytree(tmp_path / "src", project / "src")  # what an older project's apply left
    with pytest.raises(ConfigError, match=r"dvc/r/src: a copy where the link .* remove it"):
        make_project(Path("dvc/r"))


@pytest.fixture(scope="module")
def smoke_project(tmp_path_factory) -> Path:
    """The smoke config's project, `dvc/smoke/`, as `selfreflect dvc-yaml --config` makes it
    in a copy of the repository, committed."""
    project = copy_project(tmp_path_factory.mktemp("dvc-project") / "p")
    run([*DVC_YAML, "--config", "config/smoke.yaml"], project)
    commit_all(project, "smoke project")
    return project


def test_a_config_project_holds_every_file_its_stages_read(smoke_project, tmp_path):
    """The project links to the root's folders and to the folder of each plug-in (the smoke
    config's `examples/`), so every file a stage reads and no stage writes is there;
    `--check` names a link that is missing."""
    folder = smoke_project / "dvc" / "smoke"
    assert os.readlink(folder / "examples") == os.path.join("..", "..", "examples")
    with Repo(str(folder)) as repo:
        stages = list(repo.index.stages)
    written = {out.fs_path for stage in stages for out in stage.outs}
    read = {dep.fs_path for stage in stages for dep in stage.deps} - written
    assert any(path.endswith("examples/plugins.py") for path in read)
    assert [path for path in read if not os.path.exists(path)] == []
    project = clone_completed(smoke_project, tmp_path / "p")
    (project / "dvc" / "smoke" / "examples").unlink()
    checked = run([*DVC_YAML, "--config", "config/smoke.yaml", "--check"], project, check=False)
    assert checked.returncode == 1
    assert checked.stderr.splitlines()[-1] == (
        "error: dvc/smoke: no link to examples; run selfreflect dvc-yaml"
    )


def test_params_at_a_revision_are_the_settings_alone(smoke_project):
    """At a git revision DVC does not follow the project's committed `src` link, so it finds
    none of the prompts there (DVC 3's limit, docs/dvc.md): `dvc params diff HEAD` lists each
    as absent at HEAD; with `--targets params.yaml`, as the page writes it, an unchanged
    workspace shows no difference."""
    folder = smoke_project / "dvc" / "smoke"
    diff = ["dvc", "params", "diff", "HEAD", "--json"]
    prompts = json.loads(run(diff, folder).stdout)["src/selfreflect/data/prompts.yaml"]
    assert prompts["basic"]["old"] is None and prompts["basic"]["new"], prompts["basic"]
    assert json.loads(run([*diff, "--targets", "params.yaml"], folder).stdout) == {}


def test_every_folder_a_config_project_links_to_is_in_a_clone():
    """`dvc exp run --queue` runs in a git clone of the last commit, where a folder holding no
    tracked file is absent and a project's link to it dangles: each holds one (a .gitkeep)."""
    tracked = run(["git", "ls-files", *DVC_PROJECT_LINKS], REPO).stdout.split()
    assert sorted({Path(path).parts[0] for path in tracked}) == sorted(DVC_PROJECT_LINKS)


def test_a_config_project_links_the_files_its_config_names(tmp_path):
    """A question file kept outside `data/` (the probe's `mydata/`): the project links its top
    folder, so the questions stage finds it, and `--check` names the link when it is missing. A
    relative path out of the repository, which no project folder reaches, is refused."""
    project = copy_project(tmp_path / "p")
    (project / "mydata").mkdir()
    shutil.move(project / "data/questions/smoke.jsonl", project / "mydata/smoke.jsonl")
    base = project / "config/base/smoke.yaml"
    base.write_text(base.read_text().replace("data/questions/smoke.jsonl", "mydata/smoke.jsonl"))
    run([*DVC_YAML, "--config", "config/smoke.yaml"], project)
    folder = project / "dvc" / "smoke"
    assert os.readlink(folder / "mydata") == os.path.join("..", "..", "mydata")
    with Repo(str(folder)) as repo:
        deps = {dep.fs_path for stage in repo.index.stages for dep in stage.deps}
    [dep] = [path for path in deps if path.endswith("smoke.jsonl")]
    assert os.path.isfile(dep)
    (folder / "mydata").unlink()
    checked = run([*DVC_YAML, "--config", "config/smoke.yaml", "--check"], project, check=False)
    assert checked.stderr.splitlines()[-1] == (
        "error: dvc/smoke: no link to mydata; run selfreflect dvc-yaml"
    )
    shutil.move(project / "mydata", tmp_path / "outside")
    base.write_text(base.read_text().replace("mydata/smoke.jsonl", "../outside/smoke.jsonl"))
    refused = run([*DVC_YAML, "--config", "config/smoke.yaml"], project, check=False)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "error: config/smoke.yaml: datasets.smoke.path: ../outside/smoke.jsonl is outside the"
        " repository, where DVC's project runs cannot reach it by a relative path; give it as an"
        " absolute path"
    )


def test_a_second_make_project_adds_only_the_ignore_lines_the_project_lacks(tmp_path, monkeypatch):
    """A rerun of `selfreflect dvc-yaml` with one link more (a plug-in's `examples/`) appends
    that link's line alone: the lines DVC wrote there (its outputs) stay, none comes twice."""
    (tmp_path / DVC_CONFIG).parent.mkdir()
    shutil.copyfile(REPO / DVC_CONFIG, tmp_path / DVC_CONFIG)
    shutil.copyfile(REPO / DVC_IGNORE, tmp_path / DVC_IGNORE)
    (tmp_path / "examples").mkdir()
    run(["git", "init", "-q"], tmp_path)
    monkeypatch.chdir(tmp_path)
    project = Path("dvc/r")
    make_project(project)
    with (project / ".gitignore").open("a") as ignore:
        ignore.write("/out.txt\n")  # as `dvc repro` adds an output
    make_project(project, [*DVC_PROJECT_LINKS, "examples"])
    lines = (project / ".gitignore").read_text().splitlines()
    assert sorted(lines) == sorted(
        ["/out.txt", "/examples/**", *(f"/{name}/**" for name in DVC_PROJECT_LINKS)]
    )
    assert os.readlink(project / "examples") == os.path.join("..", "..", "examples")


def test_the_root_project_lacks_no_link_and_no_ignore_line(monkeypatch):
    """The paper's config's project is the root, which links nothing: `selfreflect dvc-yaml
    --check` there asks for no link and no .gitignore line."""
    monkeypatch.chdir(REPO)
    assert missing_links(ROOT, DVC_PROJECT_LINKS) == []
    assert missing_ignores(ROOT, DVC_PROJECT_LINKS) == []


def test_the_files_a_config_names_are_its_existing_relative_paths(tmp_path, monkeypatch):
    """Local questions, a GGUF file without a package and the human ratings, where they exist;
    not a Hub name (no such file), an absolute path (reached as it is) or a missing file."""
    for name in ("data/q.jsonl", "models/m.gguf", "ratings/h.csv", "abs/q.jsonl"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    datasets = {
        "d": {"source": "local", "path": "data/q.jsonl"},
        "a": {"source": "local", "path": str(tmp_path / "abs/q.jsonl")},
        "gone": {"source": "local", "path": "data/gone.jsonl"},
    }
    config = validate_config(
        {
            "models": {"hub": {"path": "Qwen/Qwen2.5-7B"}, "g": {"gguf": "models/m.gguf"}},
            "subjects": ["hub"],
            "judges": ["g"],
            "datasets": datasets,
            "report": {"human_ratings": "ratings/h.csv"},
        }
    )
    assert config_files(config, "c.yaml") == ["data/q.jsonl", "models/m.gguf", "ratings/h.csv"]


def test_a_project_links_the_roots_folders_and_the_top_of_each_file_it_names():
    """Each named file's top folder is linked beside the root's folders, each once."""
    assert project_links() == sorted(DVC_PROJECT_LINKS)
    named = project_links(["examples/plugins.py", "mydata/q/smoke.jsonl", "data/x.csv"])
    assert named == sorted({*DVC_PROJECT_LINKS, "examples", "mydata"})
