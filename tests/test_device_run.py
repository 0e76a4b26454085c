"""`selfreflect bench device-run`, the script a lent GPU runs, on this CPU (where no GPU is lent,
this is where it is tested): the scorer at the paper config's batch size, with the token budget
auto derives (as the judge runs it, compiled, through FlexAttention), with eager attention and at
another batch size, then the smoke DAG on the hf backend, cut to one strategy's main table, as on
a machine without the sentence embedder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from selfreflect.bench.device_run import missing, paper_batch_size
from selfreflect.bench.real_run import copy_tracked
from selfreflect.config import load_config
from tests.conftest import REPO

pytestmark = pytest.mark.workflow

MAIN = "reports/smoke/tables/main.csv"


def test_what_the_machine_lacks_is_named():
    assert missing(["selfreflect", "no_such_module_xyz"], ["no-such-command-xyz"]) == [
        "no_such_module_xyz",
        "no-such-command-xyz (command)",
    ]


def test_the_carry_fits_a_lent_machine(tmp_path):
    """`scripts/device.sh prepare`: a wheel of each package the DAG needs beside the heavy ones a
    lent machine has, for its Python, and wordfreq's English lists, within the 64 MiB a lent
    machine takes with the repository's files."""
    command = ["bash", "scripts/device.sh", "prepare", str(tmp_path)]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    wheels = {path.name.split("-")[0].lower(): path for path in (tmp_path / ".whl").glob("*.whl")}
    assert {"snakemake", "jsonschema", "datasets", "matplotlib", "selfreflect_workflow"} <= set(
        wheels
    )
    assert not {"torch", "transformers", "numpy", "pandas", "pyarrow", "wordfreq"} & set(wheels)
    tags = {path.name.split("-")[-3] for path in wheels.values()}
    assert tags <= {"py2.py3", "py3", "py312", "cp312", "cp36", "cp38"}, tags
    described = ["git", "describe", "--always", "--dirty", "--abbrev=7"]
    here = subprocess.run(described, cwd=REPO, capture_output=True, text=True, check=True)
    assert (tmp_path / ".device" / "commit").read_text() == here.stdout
    data = tmp_path / ".device" / "site" / "wordfreq" / "data"
    assert {path.name for path in data.iterdir()} == {"large_en.msgpack.gz", "small_en.msgpack.gz"}
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    files = [REPO / name for name in listed.stdout.decode().split("\0") if name]
    carried = sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file())
    assert carried + sum(path.stat().st_size for path in files if path.exists()) < 64 * 2**20


def test_the_device_script_runs_on_the_cpu(tmp_path, monkeypatch):
    """`scripts/device.sh run` in a copy of the repository without git (as a lent machine may
    have it): nothing to install here, a git listing made for the DAG, then device-run."""
    project, out = tmp_path / "project", tmp_path / "device.json"
    monkeypatch.chdir(REPO)
    copy_tracked(project)
    (project / ".device").mkdir()
    (project / ".device" / "commit").write_text("0123abc\n")  # as `prepare` wrote it
    command = ["bash", "scripts/device.sh", "run", "--device", "cpu", "--preset", "tiny",
               "--conditioning", "2", "--answers", "2", "--batch-size", "64",
               "--dag-preset", "tiny", "--strategy", "greedy", "--target", MAIN, "--no-embedder",
               "--json", str(out)]  # fmt: skip
    result = subprocess.run(command, cwd=project, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "installing the wheels of what this machine lacks: none" in result.stdout
    assert (project / ".git").is_dir()
    record = json.loads(out.read_text())
    # the records name the commit the carried files were prepared from
    assert {run["commit"] for run in record["scorer"]} == {"0123abc"}
    smoke = load_config(REPO / "config" / "smoke.yaml")
    assert record["missing"] == [] and record["device"] == "cpu" and record["embedder"] is False
    settings = [run["settings"] for run in record["scorer"]]
    assert record["failed"] == []
    assert [s["batch_size"] for s in settings] == [paper_batch_size()] * 5 + [64]
    attention = ["sdpa", "sdpa", "sdpa", "flex_attention", "eager", "sdpa"]
    assert [s["attention"] for s in settings] == attention
    assert [s["compiled"] for s in settings] == [False, False, True, False, False, False]
    # the second to fourth: forwards cut by the budget auto derives from this machine's free
    # memory (each when its model is built), the third's through torch.compile, the fourth's
    # through FlexAttention
    budgets = [s["token_budget"] for s in settings]
    assert budgets[0] is budgets[4] is budgets[5] is None
    assert all(isinstance(budget, int) and budget >= 1 for budget in budgets[1:4])
    assert {s["token_budget_from"] for s in settings[1:4]} == {"auto"}
    for run in record["scorer"]:
        [case] = run["cases"]
        hf = case["judges"]["hf"]
        assert hf["tasks_per_s"] > 0 and len(hf["timings"]) == 3 and hf["warmup_seconds"] > 0
        assert case["agreement"]["hf/reference"] < 1e-5  # the same scores however cut or run
        assert "host_syncs" not in case["judges"]["hf"]  # counted on a GPU only
    # the rate of the DAG's judge: its shape, forwards cut as the smoke config cuts them, its N
    rate = record["dag_rate"]["settings"]
    n, scoring = smoke["answers"]["num_answers"], smoke["scoring"]
    assert (rate["preset"], rate["conditioning"], rate["answers"]) == ("tiny", [n], n)
    assert (rate["batch_size"], rate["token_budget"]) == (scoring["batch_size"], None)
    assert record["dag_rate"]["device_name"].endswith(", 1 threads")  # as the judge job's
    dag = record["dag"]
    assert dag["returncode"] == 0, dag["error_tail"]
    assert dag["preset"] == "tiny"
    model = dag["overrides"]["models"]["tiny"].pop("path")
    assert dag["overrides"]["models"]["tiny"] == {"backend": "hf", "gpus": 0}
    assert dag["overrides"]["models"]["tiny-hf"] == {"path": model}
    # beside the judge rule, its forward tokens at the scorer's measured rate
    [predicted] = dag["predicted"]
    judged = next(row for row in dag["judge_tokens"] if row["kind"] == "judgements")
    judge = next(row for row in dag["per_rule"] if row["rule"] == "judge")
    assert (
        predicted["rule"] == "judge"
        and predicted["forward_tokens"] == judged["judge_forward_tokens"]
    )
    [case] = record["dag_rate"]["cases"]
    assert predicted["tokens_per_s"] == case["judges"]["hf"]["forward_tokens_per_s"] > 0
    assert predicted["compute_s"] == predicted["forward_tokens"] / predicted["tokens_per_s"]
    assert predicted["wall_s"] == judge["wall_s"] > predicted["compute_s"]
    # without the embedder: answers clustered by string, the alternative metrics left out
    assert dag["overrides"]["summaries"]["cluster"] == {"embedder": "string"}
    assert dag["omitted"] == ["report_alt_metrics"] and "--omit-from" in dag["command"]
    assert "| greedy " in dag["main_table"] and "| basic " not in dag["main_table"]
    rules = {row["rule"] for row in dag["per_rule"]}
    assert {"answers", "summarize", "judge", "strategy_scores", "report_main_table"} <= rules


def test_a_setting_the_machine_cannot_run_is_recorded_and_the_others_still_run(tmp_path):
    """Without a working C++ compiler torch.compile fails (as on a lent machine without one):
    the compiled and FlexAttention settings (transformers compiles flex_attention) are recorded
    with their errors, every other setting is measured, and without Snakemake on the PATH the
    record names it and runs no DAG."""
    out = tmp_path / "device.json"
    command = [shutil.which("selfreflect"), "bench", "device-run", "--device", "cpu",
               "--preset", "tiny", "--conditioning", "2", "--answers", "2", "--batch-size", "64",
               "--json", str(out)]  # fmt: skip
    env = os.environ | {"CXX": str(tmp_path / "no-compiler"), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(out.read_text())
    compiled, flex = record["failed"]
    assert compiled["settings"]["compiled"] and flex["settings"]["attention"] == "flex_attention"
    for failed in (compiled, flex):
        assert failed["error"] == "InductorError" and "C++ compiler" in failed["message"]
    assert "setting failed" in result.stderr
    ran = [run["settings"] for run in record["scorer"]]
    expected = [(False, "sdpa"), (False, "sdpa"), (False, "eager"), (False, "sdpa")]
    assert [(s["compiled"], s["attention"]) for s in ran] == expected
    assert "snakemake (command)" in record["missing"] and record["dag"] is None
    assert "no DAG: missing" in result.stdout
