"""The scorer benchmark runs end to end in CI size, and the docs show its latest recorded runs."""

from __future__ import annotations

import copy
import json

from selfreflect.docs import performance as render
from tests.workflow_utils import REPO, run


def test_bench_scorer_records_a_run_that_the_docs_render(tmp_path):
    out = tmp_path / "runs" / "tiny.json"
    command = ["selfreflect", "bench", "scorer", "--preset", "tiny", "--answers", "1"]
    command += ["--reference-tasks", "2", "--count-answers", "1", "--count-answers", "2"]
    result = run([*command, "--json", str(out)], REPO)
    assert "tasks/s" in result.stdout and "speed-up hf/reference" in result.stdout

    record = json.loads(out.read_text())
    case = record["cases"][0]
    assert case["judges"]["reference"]["tasks"] == 2
    assert case["judges"]["hf"]["tasks"] == case["tasks"] > 2
    assert case["agreement"]["hf/reference"] < 1e-5
    tokens = case["tokens_per_task"]
    assert tokens["distinct"] <= tokens["hf"] < tokens["hf_padded_rows"] < tokens["reference"]
    assert [c["answers"] for c in record["token_counts"]] == [1, 2]

    # an older run with a better figure is not the one shown
    older = copy.deepcopy(record)
    older["date"] = "2000-01-01T00:00:00+00:00"
    older["cases"][0]["judges"]["hf"]["tasks_per_s"] *= 1000
    (out.parent / "older.json").write_text(json.dumps(older))
    real_run = json.loads((REPO / render.REAL_RUN).read_text())
    earlier = tuple(json.loads((REPO / path).read_text()) for path in render.EARLIER_RUNS)
    explorer = json.loads((REPO / render.EXPLORER).read_text())
    spans = render.spans(render.latest_runs(out.parent), real_run, earlier, explorer)
    assert f"takes {real_run['seconds'] / 60:.1f} min" in spans["real-model-run"]
    assert f"showed after {explorer['table_seconds']:g} s" in spans["explorer-scale"]
    seconds = [f"{r['seconds']:,.0f}" for r in (*earlier, real_run)]
    assert f"| {' | '.join(seconds)} |" in spans["judge-pass"]
    speedup = case["judges"]["hf"]["tasks_per_s"] / case["judges"]["reference"]["tasks_per_s"]
    assert f"`hf` {speedup:.1f}× `reference`" in spans["readme"]
    assert f"| {case['judges']['hf']['tasks_per_s']:.3g} |" in spans["cpu"]
    assert "No GPU run" in spans["gpu"]
    begin, end = "<!-- rendered: readme -->\n", "<!-- /rendered -->\n"
    text = f"a\n{begin}stale\n{end}b\n"
    assert render.fill(text, spans) == f"a\n{begin}{spans['readme']}{end}b\n"


def test_docs_match_the_recorded_runs():
    result = run(["selfreflect", "docs", "performance", "--check"], REPO)
    assert result.stdout == "up to date\n"
