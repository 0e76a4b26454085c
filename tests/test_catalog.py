"""The Snakemake workflow catalog's conventions: the catalog file, the generated config
reference, the test config, rules formatted with snakefmt and clean under `snakemake --lint`."""

import subprocess

import pytest
import yaml

from selfreflect.config import load_config
from selfreflect.config_docs import config_readme
from tests.conftest import REPO

pytestmark = pytest.mark.workflow


def test_config_readme_is_generated_from_the_schema():
    readme = (REPO / "config" / "README.md").read_text(encoding="utf-8")
    assert readme == config_readme(), "config/README.md is stale: run selfreflect config-docs"
    assert "| `scoring.keep_tasks` | boolean | `true` | Keep every task" in readme


def test_catalog_file_and_test_config():
    catalog = yaml.safe_load((REPO / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["software-stack-deployment"]["conda"] is True
    assert catalog["usage"]["report"] is True
    test_config = REPO / ".test" / "config" / "config.yaml"
    load_config(test_config)


def test_rules_are_snakefmt_formatted_and_lint_clean():
    files = ["workflow/Snakefile", "workflow/rules"]
    fmt = subprocess.run(["snakefmt", "--check", *files], cwd=REPO, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stderr
    lint = subprocess.run(
        ["snakemake", "--lint", "--configfile", ".test/config/config.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert lint.returncode == 0 and "Congratulations" in lint.stdout + lint.stderr, lint.stdout
