"""Backends, judge engines and dataset kinds are registries; config and CLI choices follow them."""

import subprocess

import pytest

from selfreflect.backends import Generation, Generator, Sampling, open_generator
from selfreflect.config import validate_config
from selfreflect.errors import ConfigError, InputError
from selfreflect.questions import Preset, load_questions
from selfreflect.registry import BACKENDS, DATASET_KINDS, JUDGES
from selfreflect.scoring.forwards import Judge

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


def test_registered_backend_is_valid_in_the_config_and_opens(monkeypatch):
    config = {**CONFIG, "models": {"m": {"path": "somewhere", "backend": "echo"}}}
    with pytest.raises(ConfigError, match=r"models\.m\.backend: 'echo' is not one of \['vllm'"):
        validate_config(config, "c.yaml")
    monkeypatch.setitem(BACKENDS._targets, "echo", "tests.test_registry:EchoGenerator")
    spec = {"name": "m", **validate_config(config)["models"]["m"]}
    with open_generator(spec) as generator:
        assert isinstance(generator, EchoGenerator)
        assert generator.generate(["hi"], [Sampling(n=2)])[0].texts == ["hi", "hi"]


def test_every_registered_name_loads_its_kind():
    assert all(issubclass(BACKENDS.load(name), Generator) for name in BACKENDS.names())
    assert all(issubclass(JUDGES.load(name), Judge) for name in JUDGES.names())
    assert all(isinstance(DATASET_KINDS.load(n), Preset) for n in DATASET_KINDS.names())
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
