"""The CLI as users call it: one clear error line, non-zero exit, no partial artifact."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from selfreflect.artifacts import read_table
from selfreflect.config import read_config_file
from tests.conftest import REFERENCE

REPO = Path(__file__).resolve().parents[1]


def run(*args, cwd=None):
    return subprocess.run(["selfreflect", *args], capture_output=True, text=True, cwd=cwd)


def assert_one_line_error(result, *fragments):
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def smoke_config(tmp_path):
    """The smoke config, with its questions file copied beside it."""
    shutil.copy(REPO / "data" / "questions" / "smoke.jsonl", tmp_path / "questions.jsonl")
    config = read_config_file(REPO / "config" / "smoke.yaml")
    config["datasets"]["smoke"]["path"] = str(tmp_path / "questions.jsonl")
    config["models"]["tiny"]["path"] = str(tmp_path / "no-such-model")

    def write(change=lambda c: None):
        change(config)
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    return write


def test_questions_command_writes_table(smoke_config, tmp_path):
    out = tmp_path / "q.parquet"
    result = run(
        "questions", "--config", str(smoke_config()), "--dataset", "smoke", "--out", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert len(read_table("questions", out)) == 20


def test_missing_questions_file(smoke_config, tmp_path):
    config = smoke_config(
        lambda c: c["datasets"]["smoke"].update(path=str(tmp_path / "gone.jsonl"))
    )
    out = tmp_path / "q.parquet"
    result = run("questions", "--config", str(config), "--dataset", "smoke", "--out", str(out))
    assert_one_line_error(result, "gone.jsonl")
    assert not out.exists()


def test_empty_question(smoke_config, tmp_path):
    (tmp_path / "questions.jsonl").write_text('{"question": "Who?"}\n{"question": "  "}\n')
    out = tmp_path / "q.parquet"
    result = run(
        "questions", "--config", str(smoke_config()), "--dataset", "smoke", "--out", str(out)
    )
    assert_one_line_error(result, "questions.jsonl", "question")
    assert not out.exists()


def test_unknown_dataset(smoke_config, tmp_path):
    out = tmp_path / "q.parquet"
    result = run(
        "questions", "--config", str(smoke_config()), "--dataset", "nope", "--out", str(out)
    )
    assert_one_line_error(result, "unknown dataset 'nope'")
    assert not out.exists()


def test_invalid_config_value(smoke_config, tmp_path):
    config = smoke_config(lambda c: c["answers"].update(max_tokens=-5))
    out = tmp_path / "q.parquet"
    result = run("questions", "--config", str(config), "--dataset", "smoke", "--out", str(out))
    assert_one_line_error(result, str(config), "answers.max_tokens")
    assert not out.exists()


def test_missing_model_directory(smoke_config, tmp_path):
    config = smoke_config()
    questions = tmp_path / "q.parquet"
    run("questions", "--config", str(config), "--dataset", "smoke", "--out", str(questions))
    out = tmp_path / "a.parquet"
    result = run(
        "answers",
        "--config",
        str(config),
        "--subject",
        "tiny",
        "--questions",
        str(questions),
        "--out",
        str(out),
    )
    assert_one_line_error(result, "no-such-model", "model directory not found")
    assert not out.exists()


def test_malformed_reference_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "Q?", "masked_out_task_answers": [}')
    out = tmp_path / "a.parquet"
    assert_one_line_error(run("import-answers", str(bad), str(out)), "bad.json", "malformed JSON")
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--dataset", "--subject"])
def test_an_imported_answers_label_is_a_name_as_the_config_takes_it(tmp_path, flag):
    """The labels go into the table's metadata, which paths and wildcards are made of."""
    source, out = REFERENCE / "example_test_answers.json", tmp_path / "a.parquet"
    result = run("import-answers", flag, "../nq", str(source), str(out))
    assert_one_line_error(result, flag, "'../nq' is not a valid name")
    assert not out.exists()


def test_reference_answers_round_trip(tmp_path):
    """Each way says what it wrote, as every command does."""
    table, back = tmp_path / "a.parquet", tmp_path / "back.json"
    imported = run("import-answers", str(REFERENCE / "example_test_answers.json"), str(table))
    assert imported.returncode == 0
    assert imported.stdout == f"2 questions' answers imported to {table}\n"
    exported = run("export-answers", str(table), str(back))
    assert exported.returncode == 0
    assert exported.stdout == f"2 questions' answers written to {back} (the reference format)\n"
    original = json.loads((REFERENCE / "example_test_answers.json").read_text())
    assert json.loads(back.read_text()) == original


def test_version_is_the_package_version_and_in_the_changelog():
    from selfreflect import __version__

    result = run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["selfreflect,", "version", __version__]
    module = [sys.executable, "-m", "selfreflect", "--version"]  # where no entry point is
    assert subprocess.run(module, capture_output=True, text=True).stdout == result.stdout
    changelog = (REPO / "CHANGELOG.md").read_text().splitlines()
    versions = [line.split()[1] for line in changelog if line.startswith("## ")]
    assert next(v for v in versions if v != "Unreleased") == __version__, versions


def test_the_docs_deploy_the_current_release():
    """README.md and docs/deploy.md name the tag of the package's version (`v<version>`): the
    release a deployment by their steps gets."""
    from selfreflect import __version__

    for page in ("README.md", "docs/deploy.md"):
        tags = set(re.findall(r"\bv\d+\.\d+\.\d+\b", (REPO / page).read_text()))
        assert tags == {f"v{__version__}"}, (page, tags)


def test_the_hubs_log_lines_are_printed_once():
    """huggingface_hub prints its logs through a handler of its own; passed on to the command
    line's handler as well, each line (a retry of the hub, say) was printed twice."""
    code = (
        "import logging\n"
        "from selfreflect.cli import cli\n"
        "cli.main(['config-docs', '--check'], standalone_mode=False)\n"
        "from huggingface_hub.utils import _http  # its logger's handler comes with it\n"
        "logging.getLogger('huggingface_hub.utils._http').warning('the hub line')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stderr.count("the hub line") == 1, result.stderr
