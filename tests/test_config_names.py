"""Hostile names and numbers: every kind of name that becomes part of a path or a command, in
every shape a careless or hostile config gives it, and every non-finite number. Each is refused
when the config loads, by every command and by Snakemake: a non-zero exit, one stderr line
naming the file, the key and what is wrong, no traceback, nothing written (and nothing run).
The rules quote every value they pass to a command as well, so the name check is not the only
wall."""

from __future__ import annotations

import ast
import copy
import re
import shlex
import string
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake.utils import format as snakemake_format

from selfreflect.cli import main
from selfreflect.config import NAME, SCHEMA_PATH, read_config_file
from tests.workflow_utils import REPO, copy_project, run

BASE = {
    "run": "t",
    "models": {"tiny": {"path": "no-model"}},
    "subjects": ["tiny"],
    "judges": ["tiny"],
    "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
}
PWNED = "PWNED"
HOSTILE = {
    "substitution": f"x$(touch {PWNED})",
    "backticks": f"x`touch {PWNED}`",
    "semicolon": f"x;touch {PWNED}",
    "and": f"x&&touch {PWNED}",
    "single-quote": "x'y",
    "double-quote": 'x"y',
    "space": "x y",
    "newline": "x\ny",
    "trailing-newline": "x\n",  # Python's re.search takes a pattern's $ before a final \n
    "parent": "..",
    "slash": "a/b",
    "leading-dash": "-x",
    "empty": "",
    "long": "x" * 300,
    "non-ascii": "modèle",
}
# each kind of name: the key the message names, and where a name of that kind goes
KINDS = {
    "run": ("run", lambda c, name: c.update(run=name)),
    "model": ("models", lambda c, name: c["models"].update({name: {"path": "m"}})),
    "subject": ("subjects.0", lambda c, name: c.update(subjects=[name])),
    "judge": ("judges.0", lambda c, name: c.update(judges=[name])),
    "summarizer": ("summarizer", lambda c, name: c.update(summarizer=name)),
    "dataset": ("datasets", lambda c, name: c["datasets"].update({name: {"source": "local"}})),
    "summarized-dataset": (
        "summaries.datasets.0",
        lambda c, name: c.update(summaries={"datasets": [name]}),
    ),
    "strategy": (
        "summaries.strategies.0",
        lambda c, name: c.update(summaries={"strategies": [name]}),
    ),
    "plugin": (
        "summaries.plugins",
        lambda c, name: c.update(summaries={"plugins": {name: "examples.plugins:majority_vote"}}),
    ),
    "baseline": ("report.baseline", lambda c, name: c.update(report={"baseline": name})),
    "reference": (
        "report.plan.references.0",
        lambda c, name: c.update(report={"plan": {"references": [name]}}),
    ),
    "versus-strategy": (
        "report.plan.versus.strategy",
        lambda c, name: c.update(
            report={"plan": {"versus": {"strategy": name, "others": ["basic"]}}}
        ),
    ),
    "versus-other": (
        "report.plan.versus.others.0",
        lambda c, name: c.update(
            report={"plan": {"versus": {"strategy": "basic", "others": [name]}}}
        ),
    ),
    "primary-judge": (
        "report.plan.primary_judge",
        lambda c, name: c.update(report={"plan": {"primary_judge": name}}),
    ),
    "pair-type": ("report.pair_types.0", lambda c, name: c.update(report={"pair_types": [name]})),
    "finetune-dataset": ("finetune.dataset", lambda c, name: c.update(finetune={"dataset": name})),
    "teacher": ("finetune.teacher", lambda c, name: c.update(finetune={"teacher": name})),
    "candidate": (
        "finetune.candidates.0",
        lambda c, name: c.update(finetune={"candidates": [name, "greedy"]}),
    ),
    "finetune-judge": ("finetune.judge", lambda c, name: c.update(finetune={"judge": name})),
    "reward-judge": (
        "finetune.grpo.judge",
        lambda c, name: c.update(finetune={"grpo": {"judge": name}}),
    ),
}
NAME_CASES = [(kind, shape) for kind in KINDS for shape in HOSTILE]
# the fields of another pattern than a name's, each with a value it takes
PATTERNED = {
    "models.tiny.sha256": ("0" * 64, lambda c, x: c["models"]["tiny"].update(sha256=x)),
    "models.tiny.api_key_env": ("KEY", lambda c, x: c["models"]["tiny"].update(api_key_env=x)),
    "summaries.plugins.mine": (
        "examples.plugins:majority_vote",
        lambda c, x: c.update(summaries={"plugins": {"mine": x}}),
    ),
}
# numbers that JSON Schema's bounds let through: each key the message must name
NUMBERS = {
    "scoring.temperature": lambda c, x: c.update(scoring={"temperature": x}),
    "max_failed_share": lambda c, x: c.update(max_failed_share=x),
    "answers.top_p": lambda c, x: c.update(answers={"top_p": x}),
    "summaries.cluster.threshold": lambda c, x: c.update(summaries={"cluster": {"threshold": x}}),
    "report.mc_temperatures.1": lambda c, x: c.update(report={"mc_temperatures": [1.0, x]}),
    "models.tiny.gpu_memory_utilization": (
        lambda c, x: c["models"]["tiny"].update(gpu_memory_utilization=x)
    ),
}
NOT_FINITE = {"inf": ".inf", "minus-inf": "-.inf", "nan": ".nan"}
SCHEMA = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))


def refused(tmp_path: Path, monkeypatch, capsys, config: dict) -> str:
    """The one stderr line of ``selfreflect questions`` run in-process on ``config``, after
    checking the exit status and that nothing was written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    (tmp_path / "q.jsonl").write_text('{"question": "Q?"}\n', encoding="utf-8")
    before = sorted(tmp_path.rglob("*"))
    args = ["questions", "--config", "c.yaml", "--dataset", "d", "--out", "o/q.parquet"]
    monkeypatch.setattr(sys, "argv", ["selfreflect", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code not in (0, None)
    stderr = capsys.readouterr().err
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: c.yaml: "), stderr
    assert sorted(tmp_path.rglob("*")) == before, "a refused config left a file behind"
    return lines[0]


def test_the_corpus_covers_every_kind_and_shape():
    assert len(NAME_CASES) == len(KINDS) * len(HOSTILE) >= 150


def schema_nodes(node, path=()):
    """Each (path, node) of the config schema's mappings, the path as its error messages name
    it (a property's name; an item's index 0; a mapping's own keys: the mapping)."""
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            step = {"properties": (), "propertyNames": (), "items": ("0",)}.get(key, (key,))
            yield from schema_nodes(value, (*path, *step))
    elif isinstance(node, list):
        for value in node:
            yield from schema_nodes(value, path)


def test_the_corpus_covers_every_name_field_of_the_schema():
    nodes = schema_nodes(SCHEMA["properties"])
    named = {".".join(path) for path, node in nodes if node.get("$ref") == "#/$defs/name"}
    assert named == {key for kind, (key, _) in KINDS.items() if kind != "pair-type"}


def test_every_pattern_of_the_schema_is_anchored_at_both_ends_of_the_text():
    """``$(?!\\n)``, not ``$``: jsonschema matches a pattern with Python's re.search, whose
    ``$`` also matches before a final line break (``\\Z`` would, but ECMA-262 has no ``\\Z``)."""
    patterns = [node["pattern"] for _, node in schema_nodes(SCHEMA) if "pattern" in node]
    assert len(patterns) == 4
    assert all(p.startswith("^") and p.endswith(r"$(?!\n)") for p in patterns)


@pytest.mark.parametrize("key", PATTERNED)
def test_a_patterned_value_with_a_trailing_line_break_is_refused(
    tmp_path, monkeypatch, capsys, key
):
    value, place = PATTERNED[key]
    config = copy.deepcopy(BASE)
    place(config, value + "\n")
    line = refused(tmp_path, monkeypatch, capsys, config)
    assert line.startswith(f"error: c.yaml: {key}: "), line


def test_a_path_no_hub_id_could_be_is_a_missing_folder(tmp_path, monkeypatch):
    from selfreflect.errors import InputError
    from selfreflect.model_sources import check_model_path

    monkeypatch.chdir(tmp_path)
    check_model_path("org/model")  # a hub id: no folder needed
    check_model_path("Qwen/Qwen2.5-7B-Instruct")
    for local in ("org/model\n", "./qwen", "../qwen", "org/model.", "-org/model"):
        with pytest.raises(InputError, match="model directory not found"):
            check_model_path(local)  # a local path, or no id the hub could hold


@pytest.mark.parametrize(("kind", "shape"), NAME_CASES, ids=[f"{k}-{s}" for k, s in NAME_CASES])
def test_a_hostile_name_is_refused_when_the_config_loads(
    tmp_path, monkeypatch, capsys, kind, shape
):
    key, place = KINDS[kind]
    config = copy.deepcopy(BASE)
    place(config, HOSTILE[shape])
    line = refused(tmp_path, monkeypatch, capsys, config)
    rule = "is not one of" if kind == "pair-type" else f"is not a valid name: {NAME['description']}"
    assert line.startswith(f"error: c.yaml: {key}: {HOSTILE[shape]!r} {rule}"), line


@pytest.mark.parametrize("key", NUMBERS)
@pytest.mark.parametrize("spelling", NOT_FINITE)
def test_a_number_that_is_not_finite_is_refused(tmp_path, monkeypatch, capsys, key, spelling):
    config = copy.deepcopy(BASE)
    NUMBERS[key](config, yaml.safe_load(NOT_FINITE[spelling]))
    line = refused(tmp_path, monkeypatch, capsys, config)
    assert line.startswith(f"error: c.yaml: {key}: ") and "not a finite number" in line, line


def test_the_shipped_configs_names_are_valid():
    """Names with dots, dashes and underscores (qwen2.5-7b-instruct, smoke_mmlu) pass."""
    from selfreflect.config import load_config

    for path in sorted((REPO / "config").glob("*.yaml")):
        load_config(path)


# --- Snakemake: refused before anything runs ---------------------------------------------------


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return copy_project(tmp_path_factory.mktemp("hostile") / "project")


@pytest.mark.workflow
@pytest.mark.parametrize(
    ("key", "place"),
    [
        ("datasets", lambda c: c["datasets"].update({f"x$(touch {PWNED})": {"source": "local"}})),
        ("run", lambda c: c.update(run="..")),
        ("run", lambda c: c.update(run="smoke\n")),
    ],
    ids=["dataset-substitution", "run-parent", "run-trailing-newline"],
)
def test_snakemake_refuses_a_hostile_name_and_runs_nothing(project, key, place):
    config = read_config_file(project / "config" / "smoke.yaml")
    place(config)
    (project / "config" / "hostile.yaml").write_text(yaml.safe_dump(config))
    before = sorted(p for p in project.rglob("*") if ".snakemake" not in p.parts)
    result = run(
        ["snakemake", "--configfile", "config/hostile.yaml", "--cores", "1"], project, False
    )
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith("error: ") and f"config/hostile.yaml: {key}: " in line, line
    (project / "config" / "hostile.yaml").unlink()
    assert sorted(p for p in project.rglob("*") if ".snakemake" not in p.parts) == [
        p for p in before if p.name != "hostile.yaml"
    ]


# --- the rules quote every value they pass to a command ----------------------------------------


RULE_FILES = sorted((REPO / "workflow" / "rules").glob("*.smk"))


RULE = re.compile(r"^ *rule(?: (\w+))?:", re.MULTILINE)  # a rule of its own, or one of a loop


def rule_commands() -> dict[str, str]:
    """Every rule's shell command (its string literals joined), by rule name (a rule a loop
    defines: its ``name:`` expression)."""
    commands = {}
    for path in RULE_FILES:
        parts = RULE.split(path.read_text())
        for named, chunk in zip(parts[1::2], parts[2::2], strict=True):
            name = named or re.search(r"name:\s*(.+)", chunk).group(1)
            shell = re.search(r"^( *)shell:\n((?:\1    \".*\"\n)+)", chunk, re.MULTILINE)
            assert shell, f"rule {name} ({path.name}) has no shell command"
            commands[name] = ast.literal_eval(f"({shell.group(2)})")
    return commands


COMMANDS = rule_commands()
# a file name no shell may split, expand or run: the value of every field of a command
DANGEROUS = f"a b $HOME $(touch {PWNED}) `touch {PWNED}`; 'x\" && touch {PWNED} *"


class Field:
    """Any field of a rule's command (``input.x``, ``params.y``, ``output``, ``log``)."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __getattr__(self, name: str) -> Field:
        return self

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


def test_every_rule_command_is_checked():
    text = "".join(path.read_text() for path in RULE_FILES)
    rules = RULE.findall(text)
    assert len(COMMANDS) == len(rules) == text.count("shell:") > 0


@pytest.mark.parametrize("rule", COMMANDS)
def test_every_value_in_a_rule_command_is_quoted(rule):
    fields = [(name, spec) for _, name, spec, _ in string.Formatter().parse(COMMANDS[rule]) if name]
    assert fields and all(spec == "q" for _, spec in fields), fields


@pytest.mark.parametrize("rule", COMMANDS)
def test_a_rule_command_passes_a_dangerous_path_intact(rule, tmp_path):
    """The command as Snakemake formats it, its program replaced by printf, run by the shell:
    every value arrives as one argument, the log is written under its own name, nothing runs."""
    command = COMMANDS[rule]
    names = ("input", "output", "params", "wildcards", "log", "resources")
    fields = {key: Field("FIELD") for key in names}
    words = shlex.split(snakemake_format(command, **fields))
    assert words[0] == "selfreflect" and words[-2:] == ["2>", "FIELD"], words
    expected = [DANGEROUS if word == "FIELD" else word for word in words[1:-2]]
    fields = {key: Field(DANGEROUS) for key in fields}
    shell = snakemake_format(command, **fields).replace("selfreflect", "printf '%s\\n'", 1)
    result = subprocess.run(["sh", "-c", shell], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected
    assert [p.name for p in tmp_path.iterdir()] == [DANGEROUS], "only the log, nothing run"
