"""What a job tracks of a model entry: the weights, their family and the run's fidelity always,
then the settings of the engine it runs the model on, and nothing another engine alone reads."""

import re
from pathlib import Path

import pytest

from selfreflect.backends.registry import BACKENDS
from selfreflect.cli import command_deps
from selfreflect.config import (
    GENERATOR_KEYS,
    JUDGE_KEYS,
    MODEL_SOURCE,
    SCHEMA_PATH,
    TRAINING_KEYS,
    load_config,
)
from selfreflect.fileio import read_yaml
from selfreflect.scoring.registry import JUDGES
from selfreflect.strategies.registry import strategy_settings

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "selfreflect"
READ = re.compile(r"""spec(?:\[|\.get\()\s*["']([a-z_]+)["']""")
# keys model_spec or a command adds to an entry, not config settings
ADDED = {"name", "fidelity", "adapter"}
ENGINE_MODULES = {  # the modules of each engine that read its model's spec, and what it declares
    "vllm generator": (["backends/vllm_engine.py"], GENERATOR_KEYS["vllm"]),
    "hf generator": (["backends/hf_engine.py"], GENERATOR_KEYS["hf"]),
    "openai generator": (["backends/openai_engine.py"], GENERATOR_KEYS["openai"]),
    "vllm judge": (["scoring/vllm_judge.py", "backends/vllm_engine.py"], JUDGE_KEYS["vllm"]),
    "hf judge": (["scoring/hf_judge.py"], JUDGE_KEYS["hf"]),
    "reference judge": (["scoring/reference_judge.py"], JUDGE_KEYS["reference"]),
    "training": (["finetune/train.py", "backends/adapter.py"], TRAINING_KEYS),
}


def test_every_engine_has_its_keys():
    assert set(GENERATOR_KEYS) == set(BACKENDS.names())
    assert set(JUDGE_KEYS) == set(JUDGES.names())


def test_every_model_setting_is_tracked_by_what_reads_it_or_read_by_no_job():
    entry = read_yaml(SCHEMA_PATH)["properties"]["models"]["additionalProperties"]["properties"]
    read = {*MODEL_SOURCE, "backend", "thinking"}
    read |= {
        key for table in (GENERATOR_KEYS, JUDGE_KEYS) for keys in table.values() for key in keys
    }
    assert set(entry) - read == {"gpus"}  # the workflow's resource, passed as --gpus
    assert read <= set(entry)


@pytest.mark.parametrize("engine", list(ENGINE_MODULES))
def test_an_engine_reads_only_the_keys_it_declares(engine):
    modules, declared = ENGINE_MODULES[engine]
    text = "".join((PACKAGE / module).read_text() for module in modules)
    read = set(READ.findall(text))
    assert read, "the pattern finds the spec's reads"
    assert read - ADDED <= {*MODEL_SOURCE, *declared}


def tracked(command: str, job: dict, config: dict) -> set[str]:
    return {".".join(key) for key in command_deps(command).setting_keys(job, config)}


@pytest.fixture(scope="module")
def config():
    """The smoke config, with an openai summariser beside the vLLM subject and judge."""
    config = load_config(Path(__file__).resolve().parents[1] / "config" / "smoke.yaml")
    config["models"]["hosted"] = {
        **config["models"]["tiny-hf"],
        "backend": "openai",
        "base_url": "http://127.0.0.1:1/v1",
    }
    config["summarizer"] = "hosted"
    return config


def test_a_sampling_job_tracks_its_backends_settings_alone(config):
    keys = tracked("answers", {"dataset": "smoke", "subject": "tiny"}, config)
    assert {"fidelity", "models.tiny.path", "models.tiny.kv_cache_memory_bytes"} <= keys
    assert not keys & {"models.tiny.timeout", "models.tiny.batch_size", "models.tiny.gpus"}


def test_a_summary_job_tracks_the_subject_and_the_summarisers_own_backends(config):
    job = {"dataset": "smoke", "subject": "tiny", "strategy": "sample_and_summarize"}
    keys = tracked("summarize", job, config)
    assert {"models.tiny.enforce_eager", "models.hosted.timeout", "models.hosted.thinking"} <= keys
    assert not keys & {"models.tiny.timeout", "models.hosted.enforce_eager", "models.tiny.thinking"}


def with_scoring(config: dict, backend: str, *compared: str) -> dict:
    report = {**config["report"], "agreement_backends": list(compared)}
    return {**config, "scoring": {**config["scoring"], "backend": backend}, "report": report}


def test_a_judge_tracks_the_settings_of_its_judge_backends(config):
    job = {"dataset": "smoke", "subject": "tiny", "judge": "tiny"}
    vllm = {"fidelity", "models.tiny.gpu_memory_utilization", "models.tiny.max_model_len"}
    assert vllm <= tracked("judge", job, with_scoring(config, "vllm"))
    assert vllm <= tracked("report alt-metrics", job, with_scoring(config, "vllm"))
    hf = tracked("judge", job, with_scoring(config, "hf"))
    assert {"fidelity", "models.tiny.dtype"} <= hf
    assert "models.tiny.gpu_memory_utilization" not in hf
    assert vllm <= tracked("report agreement-scores", job, with_scoring(config, "hf", "vllm"))


def test_training_tracks_the_weights_and_dtype_it_loads(config):
    keys = tracked("finetune-train", {"subject": "tiny", "method": "sft"}, config)
    assert {"fidelity", "models.tiny.path", "models.tiny.dtype"} <= keys
    assert not {key for key in keys if key.startswith("models.tiny.") and "max_model" in key}


def test_a_summary_job_tracks_its_own_plugin_and_no_list_of_jobs(config):
    """A strategy's job tracks its own plug-in entry, not another strategy's, nor which
    strategies or datasets the run lists; a seeded finetuned strategy renders its method's
    prompts."""
    plugins = {**config["summaries"]["plugins"], "other": "examples.plugins:majority_vote"}
    mine = {**config, "summaries": {**config["summaries"], "plugins": plugins}}
    job = {"dataset": "smoke", "subject": "tiny", "strategy": "majority_vote"}
    keys = {key for key in tracked("summarize", job, mine) if key.startswith("summaries.")}
    assert {"summaries.plugins.majority_vote", "summaries.num_fresh_answers"} <= keys
    assert not keys & {
        "summaries.plugins",
        "summaries.plugins.other",
        "summaries.strategies",
        "summaries.datasets",
    }
    greedy = tracked("summarize", {**job, "strategy": "greedy"}, mine)
    assert not {key for key in greedy if key.startswith("summaries.plugins")}
    seeded = command_deps("summarize").prompts({**job, "strategy": "finetuned_sft-seed2"})
    assert {"system", "basic"} <= set(seeded)


def test_a_summary_jobs_checkpoints_are_keyed_by_its_own_settings_alone(config):
    """The settings keying a summaries job's checkpoints hold its own plug-in entry, not
    another strategy's nor the lists of strategies and datasets: a strategy or dataset added
    to the run resumes the others' jobs."""
    plugins = {**config["summaries"]["plugins"], "other": "examples.plugins:majority_vote"}
    summaries = {**config["summaries"], "plugins": plugins}
    settings = strategy_settings(summaries, "majority_vote")
    assert settings["plugins"] == {"majority_vote": "examples.plugins:majority_vote"}
    assert "strategies" not in settings
    assert not {"strategies", "datasets"} & set(settings)
    more = {**summaries, "strategies": [*summaries["strategies"], "cot"], "datasets": ["other"]}
    assert strategy_settings(more, "greedy") == strategy_settings(summaries, "greedy")


def test_a_table_job_tracks_its_figures_size_and_the_cost_table_each_models_thinking(config):
    """A table drawn as a figure tracks the figure's width and resolution, one without a
    figure does not; the cost table tracks every model's thinking mode."""
    figure = {"report.figure_width", "report.figure_dpi"}
    assert figure <= tracked("report main-table", {}, config)
    cost = tracked("report cost-table", {}, config)
    assert not figure & cost
    assert {f"models.{name}.thinking" for name in config["models"]} <= cost
