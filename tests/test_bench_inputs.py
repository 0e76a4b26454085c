"""Bad input to the ``selfreflect bench`` and ``selfreflect docs`` commands: each case exits
non-zero with one stderr line naming the option, file or field, and writes nothing (no command
here gets as far as a model, a browser or Snakemake)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from tests.conftest import REPO
from tests.test_cli_errors import run_main

Content = str | Callable[[], str]


def truncated(name: str) -> Callable[[], str]:
    """The first half of the committed ``docs/<name>``: a write cut short."""
    return lambda: (text := (REPO / "docs" / name).read_text(encoding="utf-8"))[: len(text) // 2]


def growth_of(config: str) -> Callable[[], str]:
    """docs/growth.json as if its sizes were measured on ``config``."""
    return lambda: json.dumps(
        {**json.loads((REPO / "docs" / "growth.json").read_text()), "config": config}
    )


@dataclass
class Case:
    name: str
    args: list[str]
    expect: list[str]
    files: dict[str, Content] = field(default_factory=dict)  # written in the folder first


GROWTH = [
    *("bench", "growth", "--config", f"{REPO}/config/smoke.yaml"),
    *("--tokenizer-config", f"{REPO}/config/science.yaml"),
]
CONTEXTS = ["bench", "contexts", "--tokenizer-config", f"{REPO}/config/science.yaml"]
CASES = [
    Case(
        "contexts unknown tokenizer model",
        [*CONTEXTS, "--tokenizer-model", "nope", "--json", "c.json"],
        ["--tokenizer-model: ", f"'nope' is not a model of {REPO}/config/science.yaml"],
    ),
    Case("explorer questions 0", ["bench", "explorer", "--questions", "0"], ["'--questions'"]),
    Case("explorer questions -3", ["bench", "explorer", "--questions", "-3"], ["'--questions'"]),
    Case("explorer answers 0", ["bench", "explorer", "--answers", "0"], ["'--answers'"]),
    Case("scale outside a checkout", ["bench", "scale"], ["not a git checkout"]),
    Case(
        "growth dataset without =",
        [*GROWTH, "--dataset", "smoke", "--json", "g.json"],
        ["--dataset: ", "'smoke' is not NAME=PATH"],
    ),
    Case(
        "growth unknown dataset",
        [*GROWTH, "--dataset", "nope=q.jsonl", "--json", "g.json"],
        ["--dataset: ", "'nope' is not a dataset of"],
    ),
    Case(
        "growth json holding a list",
        [*GROWTH, "--json", "g.json"],
        ["g.json: expected a JSON object"],
        {"g.json": "[1, 2]"},
    ),
    Case(
        "growth resuming another configs json",
        [*GROWTH, "--json", "g.json"],
        ["g.json: config_digest: its sizes were measured on another config (config/matrix.yaml"],
        {"g.json": growth_of("config/matrix.yaml")},
    ),
    Case(
        "growth resuming a json without a digest",
        [*GROWTH, "--json", "g.json"],
        ["g.json: config_digest:", "digest none"],
        {"g.json": growth_of(f"{REPO}/config/smoke.yaml")},
    ),
    Case(
        "docs scale truncated json",
        ["docs", "scale"],
        ["docs/scale.json: malformed JSON"],
        {"docs/scale.json": truncated("scale.json")},
    ),
    Case(
        "docs performance truncated json",
        ["docs", "performance"],
        ["docs/real_model_before_judge_pass.json: malformed JSON"],
        {"docs/real_model_before_judge_pass.json": truncated("real_model_before_judge_pass.json")},
    ),
    Case(
        "finetuning --no-run truncated json",
        ["bench", "finetuning", "--no-run", "--config", f"{REPO}/config/finetune.yaml"],
        ["docs/finetuning/finetune.json: malformed JSON"],
        {"docs/finetuning/finetune.json": truncated("finetuning/finetune.json")},
    ),
    Case(
        "docs finetuning truncated json",
        ["docs", "finetuning"],
        ["docs/finetuning/finetune.json: malformed JSON"],
        {"docs/finetuning/finetune.json": truncated("finetuning/finetune.json")},
    ),
    Case(
        "docs finetuning without records",
        ["docs", "finetuning"],
        ["docs/finetuning: no finetuning record; run selfreflect bench finetuning"],
        {},
    ),
    Case(
        "docs real-model truncated json",
        ["docs", "real-model", "--json", "r.json", "--out", "r.md"],
        ["r.json: malformed JSON"],
        {"r.json": truncated("real_model.json")},
    ),
    Case(
        "docs real-model page over its json",
        ["docs", "real-model", "--json", "r.json", "--out", "./r.json"],
        ["./r.json: is an input of this command (r.json)"],
        {"r.json": lambda: (REPO / "docs" / "real_model.json").read_text()},
    ),
    Case("power trials 0", ["bench", "power", "--trials", "0"], ["'--trials'"]),
    Case(
        "docs power without its json",
        ["docs", "power", "--json", "p.json", "--out", "p.md", "--figure", "p.png"],
        ["p.json"],
    ),
    Case(
        "docs power figure over its json",
        ["docs", "power", "--json", "p.json", "--out", "p.md", "--figure", "./p.json"],
        ["./p.json: is an input of this command (p.json)"],
        {"p.json": "{}"},
    ),
    Case(
        "explorer-screenshots of an empty folder",
        ["bench", "explorer-screenshots", "empty", "shots"],
        ["empty: no index.html"],
        {"empty/.keep": ""},
    ),
]


def test_the_bench_corpus_is_named_uniquely():
    assert len({case.name for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_bad_bench_input_fails_with_one_line(case, tmp_path, monkeypatch, capsys):
    for name, content in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content() if callable(content) else content)
    monkeypatch.chdir(tmp_path)
    before = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    code, stderr = run_main(case.args, monkeypatch, capsys)
    assert code not in (0, None)
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert "error: error:" not in lines[0]
    for fragment in case.expect:
        assert fragment in lines[0], (fragment, lines[0])
    after = {path: path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()}
    assert after == before, "a failed command wrote a file"
