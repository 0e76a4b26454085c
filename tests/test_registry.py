"""Backends, judge engines and strategies are registries, dataset kinds a table; the config's
enums and the CLI's choices are their names, and each registry lies above what it names."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from selfreflect import code_deps
from selfreflect.backends import Generation, Generator, Sampling
from selfreflect.backends.registry import BACKENDS, open_generator
from selfreflect.code_deps import SOURCE
from selfreflect.config import SCHEMA_PATH, schema_enum, validate_config
from selfreflect.errors import ConfigError, InputError
from selfreflect.fileio import read_yaml
from selfreflect.questions import DATASET_KINDS, Preset, load_questions
from selfreflect.scoring.forwards import Judge
from selfreflect.scoring.registry import JUDGES
from selfreflect.strategies.registry import STRATEGIES
from tests.test_code_deps import IMPORTS

REPO = Path(__file__).resolve().parents[1]

CONFIG = {
    "models": {"m": {"path": "somewhere"}},
    "subjects": ["m"],
    "judges": ["m"],
    "datasets": {"d": {"source": "local", "path": "q.jsonl"}},
}


class EchoGenerator(Generator):
    """A backend that answers every prompt with the prompt itself."""

    local = False

    def __init__(self, spec):
        self.name, self.tokenizer, self.max_model_len = spec["name"], None, 64

    def generate(self, prompts, sampling):
        return [Generation(texts=[p] * s.n) for p, s in zip(prompts, sampling, strict=True)]


def test_the_config_names_what_the_tables_hold():
    """The schema's enums are the tables' names, so the config's checks read no table (the
    tables lie above the config, beside what they load)."""
    schema = read_yaml(SCHEMA_PATH)["properties"]
    models, datasets = (schema[key]["additionalProperties"] for key in ("models", "datasets"))
    assert models["properties"]["backend"]["enum"] == BACKENDS.names()
    assert datasets["properties"]["source"]["enum"] == list(DATASET_KINDS)
    assert schema_enum("scoring", "backend") == JUDGES.names()
    agreement = schema["report"]["properties"]["agreement_backends"]["items"]
    assert agreement["enum"] == JUDGES.names()
    config = {**CONFIG, "models": {"m": {"path": "somewhere", "backend": "echo"}}}
    with pytest.raises(ConfigError, match=r"models\.m\.backend: 'echo' is not one of \['vllm'"):
        validate_config(config, "c.yaml")


def test_a_registered_backend_opens(monkeypatch):
    monkeypatch.setitem(BACKENDS._targets, "echo", "tests.test_registry:EchoGenerator")
    spec = {"name": "m", **validate_config(CONFIG)["models"]["m"], "backend": "echo"}
    with open_generator(spec) as generator:
        assert isinstance(generator, EchoGenerator)
        assert generator.generate(["hi"], [Sampling(n=2)])[0].texts == ["hi", "hi"]
    with pytest.raises(InputError, match=r"^model 'm': unknown generation backend 'x' \(known:"):
        open_generator({**spec, "backend": "x"})


def test_every_registered_name_loads_its_kind():
    assert all(issubclass(BACKENDS.load(name), Generator) for name in BACKENDS.names())
    assert all(issubclass(JUDGES.load(name), Judge) for name in JUDGES.names())
    assert all(callable(STRATEGIES.load(name)) for name in STRATEGIES.names())
    assert all(isinstance(preset, Preset) for preset in DATASET_KINDS.values())
    with pytest.raises(InputError, match=r"^unknown judge backend .x. \(known: hf, vllm, refer"):
        JUDGES.load("x")


def test_unknown_dataset_kind_names_the_dataset():
    with pytest.raises(InputError, match=r"^dataset 'd': unknown dataset kind 'nq' \(known: "):
        load_questions("d", {"source": "nq"}, 1, 0)
    with pytest.raises(ConfigError, match=r"datasets\.d\.source: 'nq' is not one of"):
        validate_config({**CONFIG, "datasets": {"d": {"source": "nq"}}})


def test_score_command_choices_come_from_the_registry_and_schema():
    help_text = subprocess.run(
        ["selfreflect", "score", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "[hf|vllm|reference]" in help_text
    assert "[auto|float32|bfloat16|float16]" in help_text


def registries() -> dict[str, set[str]]:
    """``{module building a registry: the modules its targets are in}``, found as the code
    dependencies' analysis finds them (wherever a table is built)."""
    homes: dict[str, set[str]] = {}
    for path in sorted((REPO / SOURCE).rglob("*.py")):
        module = ".".join(path.relative_to(REPO / "src").with_suffix("").parts)
        module = module.removesuffix(".__init__")
        for name, statement in code_deps._bindings(module).items():
            if not isinstance(statement, ast.ImportFrom):
                targets = code_deps._registry_targets(module, statement, name)
                homes.setdefault(module, set()).update(target for target, _ in targets)
    return {home: targets for home, targets in homes.items() if targets}


def test_each_registry_lies_above_what_it_names():
    """Importing a registry's target (its package's ``__init__`` first, as Python does) never
    imports the registry's module: a table names its implementations by import strings from
    above them, and no string hides an import back up."""
    homes = registries()
    assert homes.keys() == {
        f"selfreflect.{p}.registry" for p in ("backends", "scoring", "strategies")
    }
    targets = sorted(set().union(*homes.values()))
    assert {"selfreflect.backends.vllm_engine", "selfreflect.strategies.paper"} <= set(targets)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    args = [sys.executable, "-c", IMPORTS, *targets]
    loaded = json.loads(subprocess.run(args, capture_output=True, check=True, env=env).stdout)
    back = {(t, h) for h, ts in homes.items() for t in ts if h in loaded[t]}
    assert back == set()
