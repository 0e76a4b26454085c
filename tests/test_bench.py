"""``selfreflect bench`` and ``selfreflect docs``: one command per benchmark and per page,
outside every workflow command's code, and the one resource sampler the benchmarks share."""

from __future__ import annotations

import sys

import pytest

from selfreflect.bench.resources import sampled_run
from selfreflect.cli import command_deps
from selfreflect.cli.commands import COMMANDS
from selfreflect.cli.tools import BENCH, DOCS, TOOLS
from tests.workflow_utils import REPO, run

OUTSIDE = ("src/selfreflect/bench/", "src/selfreflect/docs/", "src/selfreflect/cli/tools.py")


@pytest.mark.parametrize(("group", "names"), [("bench", BENCH), ("docs", DOCS)])
def test_each_group_lists_its_commands(group, names):
    listed = run(["selfreflect", group, "--help"], REPO).stdout
    assert all(f"  {name} " in listed for name in names)


def test_the_entry_finds_each_bench_and_docs_command_by_its_table():
    from selfreflect.cli import find_command

    assert not set(COMMANDS) & set(TOOLS)
    for words, target in TOOLS.items():
        assert find_command(words).callback.__name__ == target.partition(":")[2]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_workflow_command_reaches_the_bench_or_docs_package(command, monkeypatch):
    """Editing a benchmark, a page or their table (cli/tools.py, which the entry loads by name)
    reruns no job."""
    monkeypatch.chdir(REPO)  # the analysis reads src/selfreflect of the working directory
    assert not [f for f in command_deps(command).files if f.startswith(OUTSIDE)]


@pytest.mark.parametrize("group", ["bench", "docs"])
def test_listing_a_group_imports_no_heavy_library(group):
    code = (
        "import sys; from click.testing import CliRunner; from selfreflect.cli import cli; "
        f"assert CliRunner().invoke(cli, [{group!r}, '--help']).exit_code == 0; "
        "print(sorted({'psutil', 'matplotlib', 'playwright', 'torch'} & set(sys.modules)))"
    )
    result = run([sys.executable, "-c", code], REPO)
    assert result.stdout == "[]\n"


def test_the_sampler_sees_the_memory_of_a_child_of_the_command(tmp_path):
    """Peak RSS covers the command's descendants; its output goes to the log."""
    child = (
        "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(1)"
    )
    parent = (
        f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}]); print('done')"
    )
    log = tmp_path / "run.log"
    usage = sampled_run([sys.executable, "-c", parent], tmp_path, log)
    assert usage["returncode"] == 0 and log.read_text() == "done\n"
    assert usage["peak_rss_mib"] >= 200
    assert usage["seconds"] >= 1 and usage["cpus"] >= 1
    failed = sampled_run([sys.executable, "-c", "raise SystemExit(3)"], tmp_path, log)
    assert failed["returncode"] == 3


def test_a_failed_explorer_benchmark_build_says_error_once(tmp_path):
    """`bench explorer --strategies -1` printed "error: error: …": the build's own error line
    came back whole inside the benchmark's. Now one line, the build's reason without its
    prefix."""
    import click

    from selfreflect.bench.explorer import run_benchmark

    with pytest.raises(click.ClickException) as err:
        run_benchmark(2, 0, 2, tmp_path)
    message = err.value.format_message()
    assert message == "the explorer build failed: explorer: no scores file among the files given"


def test_the_contexts_benchmark_times_both_tokenizations_of_the_same_texts(tiny_model, tmp_path):
    """`bench contexts` on the tiny model's tokenizer: both ways give the same ids for every
    context of the example questions, each timed over the same repeats."""
    import json

    import yaml

    from tests.conftest import MINIMAL_CONFIG

    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump({**MINIMAL_CONFIG, "models": {"m": {"path": str(tiny_model)}}})
    )
    out = tmp_path / "contexts.json"
    args = ["--tokenizer-config", str(config), "--tokenizer-model", "m", "--answers", "3"]
    printed = run(
        ["selfreflect", "bench", "contexts", *args, "--repeats", "2", "--json", str(out)], REPO
    )
    (case,) = json.loads(out.read_text())["cases"]
    assert case["answers"] == 3 and case["identical"] and case["texts"] > case["contexts"] > 0
    for way in ("whole", "shared_head"):
        times = case["cpu_s"][way]
        assert 0 < times["min"] <= times["median"] <= times["max"]
    assert f"N = 3: {case['texts']} texts" in printed.stdout
