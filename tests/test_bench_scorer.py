"""The scorer benchmark runs end to end in CI size, and the docs show its latest recorded runs."""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _renderer():
    spec = importlib.util.spec_from_file_location("render", SCRIPTS / "render_performance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_scorer_records_a_run_that_the_docs_render(tmp_path):
    out = tmp_path / "runs" / "tiny.json"
    command = [sys.executable, str(SCRIPTS / "bench_scorer.py"), "--preset", "tiny"]
    command += ["--answers", "1", "--reference-tasks", "2", "--count-answers", "1", "2"]
    result = subprocess.run(
        [*command, "--json", str(out)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "tasks/s" in result.stdout and "speed-up hf/reference" in result.stdout

    run = json.loads(out.read_text())
    case = run["cases"][0]
    assert case["judges"]["reference"]["tasks"] == 2
    assert case["judges"]["hf"]["tasks"] == case["tasks"] > 2
    assert case["agreement"]["hf/reference"] < 1e-5
    tokens = case["tokens_per_task"]
    assert tokens["distinct"] <= tokens["hf"] < tokens["hf_padded_rows"] < tokens["reference"]
    assert [c["answers"] for c in run["token_counts"]] == [1, 2]

    # an older run with a better figure is not the one shown
    older = copy.deepcopy(run)
    older["date"] = "2000-01-01T00:00:00+00:00"
    older["cases"][0]["judges"]["hf"]["tasks_per_s"] *= 1000
    (out.parent / "older.json").write_text(json.dumps(older))
    render = _renderer()
    real_run = json.loads(render.REAL_RUN.read_text())
    earlier = tuple(json.loads(path.read_text()) for path in render.EARLIER_RUNS)
    spans = render.sections(render.latest_runs(out.parent), real_run, earlier)
    assert f"takes {real_run['seconds'] / 60:.1f} min" in spans["real-model-run"]
    seconds = [f"{run['seconds']:,.0f}" for run in (*earlier, real_run)]
    assert f"| {' | '.join(seconds)} |" in spans["judge-pass"]
    speedup = case["judges"]["hf"]["tasks_per_s"] / case["judges"]["reference"]["tasks_per_s"]
    assert f"`hf` {speedup:.1f}× `reference`" in spans["readme"]
    assert f"| {case['judges']['hf']['tasks_per_s']:.3g} |" in spans["cpu"]
    assert "No GPU run" in spans["gpu"]
    begin, end = "<!-- rendered: readme -->\n", "<!-- /rendered -->\n"
    text = f"a\n{begin}stale\n{end}b\n"
    assert render.render(text, spans) == f"a\n{begin}{spans['readme']}{end}b\n"


def test_docs_match_the_recorded_runs():
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "render_performance.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
