"""The conda environment files install this project with extras it defines. Conda runs their
pip section in the file's own folder, so an editable path is relative to that folder."""

import re
import tomllib

import pytest
import yaml

from tests.workflow_utils import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
ENVIRONMENTS = ["environment.yml", "workflow/envs/gpu.yaml", "workflow/envs/cpu.yaml"]


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_environment_installs_this_project_with_its_extras(name):
    path = REPO / name
    env = yaml.safe_load(path.read_text())
    python = next(dep for dep in env["dependencies"] if str(dep).startswith("python="))
    assert PYPROJECT["project"]["requires-python"].endswith(python.removeprefix("python="))
    (pip,) = [dep["pip"] for dep in env["dependencies"] if isinstance(dep, dict)]
    (editable,) = [req for req in pip if req.startswith("-e ")]
    target, extras = re.fullmatch(r"-e (.+)\[(.+)\]", editable).groups()
    assert (path.parent / target).resolve() == REPO
    assert set(extras.split(",")) <= set(PYPROJECT["project"]["optional-dependencies"])
