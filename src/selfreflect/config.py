"""Load and validate the experiment configuration.

The schema (``data/config.schema.yaml``, also at ``workflow/schemas/``) is the single
description of every parameter and its default. A config file is read, its ``include:`` files
merged under it, by :func:`read_config_file` alone: every CLI command through
:func:`load_config`, the workflow through :func:`selfreflect.rule_inputs.checked_config`.
"""

from __future__ import annotations

import copy
import math
import os
import re
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from selfreflect.errors import ConfigError, InputError, SelfReflectError
from selfreflect.fileio import read_yaml

SCHEMA_PATH = Path(str(resources.files("selfreflect") / "data" / "config.schema.yaml"))
# every name that becomes part of a path or a command (the schema's ``$defs.name``)
NAME = read_yaml(SCHEMA_PATH)["$defs"]["name"]
INCLUDE = "include"  # the key naming the files a config file is merged over


def load_config(path: str | os.PathLike) -> dict[str, Any]:
    """Read a YAML config file, validate it and fill in defaults."""
    return validate_config(read_config_file(path), source=str(path))


def read_config_file(path: str | os.PathLike) -> dict[str, Any]:
    """The mapping in a YAML config file, its ``include:`` files merged under it.

    ``include`` names a file or a list of files, relative to the including one (where it is a
    link, to the file linked to); each later one, and last the including file itself, overrides
    the earlier ones (:func:`merge_config`). A missing or malformed file, or a cycle, is one
    :class:`ConfigError` naming the file and key.
    """
    return _read_included(Path(path), ())


def _read_included(path: Path, including: tuple[Path, ...]) -> dict[str, Any]:
    """The config file ``path`` with its includes resolved; ``including``: the files on the way
    to it, outermost first (a cycle comes back to one of them). An error in an included file
    also names the file that included it."""
    by = f" (included by {including[-1]})" if including else ""
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        data = read_yaml(path)
    except InputError as err:
        raise ConfigError(f"{err}{by}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of config keys at the top level{by}")
    names = data.pop(INCLUDE, [])
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise ConfigError(f"{path}: {INCLUDE}: expected a file name or a list of file names{by}")
    chain = (*including, path)
    merged: dict[str, Any] = {}
    for name in names:  # shown in the form the including file is: absolute, or relative
        included = path.resolve().parent / name
        included = included if path.is_absolute() else Path(os.path.relpath(included))
        if included.resolve() in {p.resolve() for p in chain}:
            cycle = " -> ".join(map(str, (*chain, included)))
            raise ConfigError(f"{path}: {INCLUDE}: {name}: a cycle ({cycle})")
        if not included.is_file():
            raise ConfigError(f"{path}: {INCLUDE}: {name}: config file not found ({included}){by}")
        merged = merge_config(merged, _read_included(included, chain))
    return merge_config(merged, data)


def merge_config(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``: mappings merged key by key, any other value (a list too)
    replaced; new keys come after ``base``'s, in ``override``'s order."""
    merged = dict(base)
    for key, value in override.items():
        below = merged.get(key)
        both = isinstance(below, dict) and isinstance(value, dict)
        merged[key] = merge_config(below, value) if both else value
    return merged


def validate_config(
    config: Any, source: str = "config", check_names: Callable[[dict, str], None] | None = None
) -> dict[str, Any]:
    """Validate ``config`` against the schema (filling defaults) and check cross-references;
    ``check_names`` (the workflow's strategy check, which lies above this module) checks the
    names before the references to them (a misspelt strategy, not the baseline it leaves out).

    Raises a one-line :class:`ConfigError` naming ``source`` and the offending key.
    """
    from jsonschema import ValidationError
    from snakemake.exceptions import WorkflowError
    from snakemake.utils import validate

    if not isinstance(config, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    _check_finite(config, source)
    config = copy.deepcopy(config)
    try:
        validate(config, str(SCHEMA_PATH), set_default=True)
    except WorkflowError as err:
        cause = err.__context__  # snakemake raises inside its `except ValidationError`
        if not isinstance(cause, ValidationError):
            raise ConfigError(f"{source}: {err}".replace("\n", " ")) from None
        where = ".".join(str(p) for p in cause.absolute_path) or "(top level)"
        raise ConfigError(f"{source}: {where}: {_shorten(_message(cause))}") from None
    if check_names is not None:
        check_names(config, source)
    _check_model_references(config, source)
    _check_baseline(config, source)
    _check_endpoints(config, source)
    _fill_converted_paths(config, source)
    return _canonical(config)


def _check_finite(value: Any, source: str, path: tuple[str | int, ...] = ()) -> None:
    """Every number is finite (JSON Schema's bounds let NaN and infinity through) and every
    integer fits the 64 bits the artifacts store (YAML reads `0xfff…` of any length)."""
    where = ".".join(map(str, path))
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{source}: {where}: {value} is not a finite number")
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        bits = value.bit_length()
        raise ConfigError(f"{source}: {where}: an integer of {bits} bits (at most 63)")
    if isinstance(value, dict | list):
        for key, item in value.items() if isinstance(value, dict) else enumerate(value):
            _check_finite(item, source, (*path, key))


def _check_endpoints(config: dict[str, Any], source: str) -> None:
    """Every openai model names its endpoint (none would mean the public OpenAI API), and
    neither judges (a judge reads the model's own next-token distributions) nor gives the
    multiple-choice truth by ``logprobs`` (the letters' probabilities)."""
    hosted = {name for name, spec in config["models"].items() if spec["backend"] == "openai"}
    for name in sorted(hosted):
        if config["models"][name]["base_url"] is None:
            raise ConfigError(f"{source}: models.{name}.base_url: required by backend openai")
    finetune = config["finetune"]
    judges = [("judges", name) for name in config["judges"]]
    judges += [
        ("finetune.judge", finetune["judge"]),
        ("finetune.grpo.judge", finetune["grpo"]["judge"]),
    ]
    for key, name in judges:
        if name in hosted:
            raise ConfigError(
                f"{source}: {key}: '{name}' is served by backend openai, which samples and"
                " summarises only; a judge needs the model's weights (backend hf or vllm)"
            )
    subjects = sorted(hosted & set(config["subjects"]))
    choices = [d for d in evaluated_datasets(config) if config["datasets"][d]["source"] == "mmlu"]
    if subjects and choices and config["answers"]["choice_truth"] == "logprobs":
        raise ConfigError(
            f"{source}: answers.choice_truth: logprobs reads the subject's own letter"
            f" probabilities, which subject '{subjects[0]}' (backend openai) does not give on"
            f" multiple-choice dataset '{choices[0]}'; set choice_truth: samples"
        )


def schema_enum(*keys: str) -> list[str]:
    """The schema's ``enum`` at ``properties`` path ``keys`` (e.g. ``scoring``, ``dtype``)."""
    node = read_yaml(SCHEMA_PATH)
    for key in keys:
        node = node["properties"][key]
    return list(node["enum"])


SECRET_KEYS = {"api_key_env"}  # a user may paste the key itself here: never echo the value


MESSAGE_LIMIT = 1000  # characters of a schema message (it quotes the value, which may be huge)


def _shorten(message: str) -> str:
    if len(message) <= MESSAGE_LIMIT:
        return message
    return f"{message[:MESSAGE_LIMIT]}... ({len(message)} characters in all)"


# a number YAML 1.1 (PyYAML, Snakemake) reads as text: an exponent with no dot in the mantissa
_EXPONENT_TEXT = re.compile(r"([+-]?[0-9]+)([eE][+-]?[0-9]+)")


def _message(error: Any) -> str:
    """The schema error's message, without the offending value where it may be a secret; a
    number that YAML read as text (``2e-4``) is told how to write it."""
    message = _schema_message(error)
    number = isinstance(error.instance, str) and _EXPONENT_TEXT.fullmatch(error.instance)
    if not number:
        return message
    types = _accepted_types(error)
    if "number" in types:
        return f"{message} (YAML reads {number[0]} as text: write {number[1]}.0{number[2]})"
    if "integer" in types and float(number[0]).is_integer():
        return f"{message} (YAML reads {number[0]} as text: write {int(float(number[0]))})"
    return message


def _accepted_types(error: Any) -> set[str]:
    """The JSON types the schema node that ``error`` failed takes (its own, or its options')."""
    if error.validator == "type":
        kinds = error.validator_value
        return set(kinds) if isinstance(kinds, list) else {kinds}
    if error.validator in ("anyOf", "oneOf"):
        return {option.get("type") for option in error.validator_value} - {None}
    return set()


def _schema_message(error: Any) -> str:
    if error.absolute_path and error.absolute_path[-1] in SECRET_KEYS:
        return "must name an environment variable, not hold the key (value not shown)"
    if error.validator == "pattern" and error.validator_value == NAME["pattern"]:
        return f"{error.instance!r} is not a valid name: {NAME['description']}"
    if error.validator == "pattern" and "description" in error.schema:
        return f"{error.instance!r} is not {error.schema['description']}"
    if error.validator in ("anyOf", "oneOf"):
        kinds = [_kind(option) for option in error.validator_value]
        if all(kinds):
            return f"{error.instance!r} is none of: {', '.join(kinds)}"
    return error.message


TYPE_NAMES = {
    "null": "null",
    "string": "a string",
    "array": "a list",
    "object": "a mapping",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
}


def _kind(schema: dict[str, Any]) -> str | None:
    """What values ``schema`` takes, in words (``an integer >= 1``), for an ``anyOf`` error;
    None where it says more than a type, a lower bound or a list of values."""
    if set(schema) == {"enum"}:
        return " or ".join(map(repr, schema["enum"]))
    if set(schema) - {"type", "minimum", "minLength", "minItems", "items"}:
        return None
    name = TYPE_NAMES.get(str(schema.get("type")))
    if name is None:
        return None
    if "minimum" in schema:
        name += f" >= {schema['minimum']}"
    if "minLength" in schema or "minItems" in schema:
        name += " (not empty)"
    return name


def check_dataset_paths(config: dict[str, Any], source: str) -> None:
    """One-line :class:`ConfigError` for a local dataset whose file or folder does not exist,
    before any job runs (a run whose questions were made would otherwise go on with them)."""
    for name, dataset in config["datasets"].items():
        if dataset["source"] == "local" and not os.path.exists(dataset["path"]):
            raise ConfigError(f"{source}: datasets.{name}.path: {dataset['path']}: not found")


def check_model_paths(
    config: dict[str, Any],
    source: str,
    built: str | None = None,
    names: Iterable[str] | None = None,
) -> None:
    """One-line :class:`ConfigError` for a local model that does not exist, before any job runs
    (or before a job loads its models ``names``; default: every model).

    Models under the folder ``built`` are made by the workflow's own jobs; hub ids pass.
    """
    from selfreflect.model_sources import check_model_path

    for name in config["models"] if names is None else names:
        spec = config["models"][name]
        path = os.path.normpath(spec["path"])
        if spec["backend"] == "openai" or (built and path.startswith(f"{built}/")):
            continue
        try:
            check_model_path(spec["path"])
        except SelfReflectError as err:
            raise ConfigError(f"{source}: models.{name}.path: {err}") from None


def check_gguf_sources(config: dict[str, Any], source: str) -> None:
    """One-line :class:`ConfigError` for a GGUF model of the run whose file is not where its
    entry says (a package not installed, a file name not in it), before any job runs: its
    conversion would fail only after Snakemake removed the converted folder every run shares.
    Models the run does not name are not checked (a config may list more than it uses)."""
    from selfreflect.model_sources import gguf_source

    for name in dict.fromkeys(name for _, name in model_references(config)):
        spec = config["models"][name]
        if not spec["gguf"]:
            continue
        try:
            gguf_source(spec)
        except SelfReflectError as err:
            raise ConfigError(f"{source}: models.{name}.gguf: {err}") from None


def _canonical(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` with every section's keys sorted, so that reordering keys in a YAML file
    changes no rule's parameters (Snakemake compares them as text). The order of named
    models and datasets is kept: it orders tables and figures."""

    def sort(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: sort(value[key]) for key in sorted(value)}
        return value

    named = {"models", "datasets"}
    return {
        key: {name: sort(spec) for name, spec in value.items()} if key in named else sort(value)
        for key, value in sorted(config.items())
    }


def model_references(config: dict[str, Any]) -> list[tuple[str, str]]:
    """``(key, model name)`` of every model the config's settings name: the run's models."""
    finetune = config["finetune"]
    references = [("subjects", name) for name in config["subjects"]]
    references += [("judges", name) for name in config["judges"]]
    named = [("summarizer", config["summarizer"]), ("finetune.judge", finetune["judge"])]
    for key, name in [*named, ("finetune.grpo.judge", finetune["grpo"]["judge"])]:
        if name is not None:  # set, even where nothing runs it: a name of nothing is a typo
            references.append((key, name))
    return references


def _check_model_references(config: dict[str, Any], source: str) -> None:
    models, finetune = config["models"], config["finetune"]
    datasets = [("summaries.datasets", name) for name in config["summaries"]["datasets"] or []]
    if finetune["dataset"] is not None:
        datasets.append(("finetune.dataset", finetune["dataset"]))
    for key, name in datasets:
        if name not in config["datasets"]:
            known = ", ".join(sorted(config["datasets"]))
            raise ConfigError(f"{source}: {key}: unknown dataset '{name}' ({known})")
    for key, name in model_references(config):
        if name not in models:
            known = ", ".join(sorted(models))
            raise ConfigError(f"{source}: {key}: unknown model '{name}' (models: {known})")


def _check_baseline(config: dict[str, Any], source: str) -> None:
    """The main table's baseline is a strategy of this run (else its comparison column would
    silently stay empty). The finetuned strategies' teacher is checked with them
    (:func:`selfreflect.finetune.check_finetune`)."""
    baseline, strategies = config["report"]["baseline"], config["summaries"]["strategies"]
    if baseline not in strategies:
        raise ConfigError(
            f"{source}: report.baseline: '{baseline}' is not a strategy of this run"
            f" (summaries.strategies: {', '.join(strategies)})"
        )
    if baseline in config["report"]["plan"]["references"]:
        raise ConfigError(f"{source}: report.plan.references: '{baseline}' is the baseline")
    primary = config["report"]["plan"].get("primary_judge")
    if primary is not None and primary not in config["judges"]:
        raise ConfigError(
            f"{source}: report.plan.primary_judge: '{primary}' is not one of the judges"
            f" ({', '.join(config['judges'])})"
        )
    versus = config["report"]["plan"].get("versus")
    if versus and versus["strategy"] in versus["others"]:
        raise ConfigError(
            f"{source}: report.plan.versus.others: '{versus['strategy']}' is the strategy they"
            " are compared with"
        )


def _fill_converted_paths(config: dict[str, Any], source: str) -> None:
    """Give every GGUF model the folder it is converted into as its ``path``."""
    from selfreflect.paths import CONVERTED_MODEL

    for name, spec in config["models"].items():
        if spec["package"] and not spec["gguf"]:
            raise ConfigError(f"{source}: models.{name}.package: needs `gguf`, the file name")
        if not spec["gguf"]:
            continue
        converted = CONVERTED_MODEL.format(model=name)
        if spec.setdefault("path", converted) != converted:
            raise ConfigError(
                f"{source}: models.{name}.path: a gguf model is converted into {converted}"
                " (leave `path` out)"
            )


def converted_models(config: dict[str, Any]) -> list[str]:
    """Models the workflow converts from GGUF before any job loads them."""
    return [name for name, spec in config["models"].items() if spec["gguf"]]


MODEL_SOURCE = ("path", "gguf", "package", "sha256", "family")  # the weights, how prompted
_VLLM_ENGINE = (
    "dtype",
    "max_model_len",
    "gpu_memory_utilization",
    "kv_cache_memory_bytes",
    "enforce_eager",
    "tensor_parallel_size",
)
# What else of a models entry each engine reads: a generation backend (``backend``) and a judge
# backend (``scoring.backend``) of the same name are different engines, except vLLM's.
GENERATOR_KEYS = {
    "vllm": _VLLM_ENGINE,
    "hf": ("dtype", "max_model_len", "batch_size"),
    "openai": (
        "max_model_len",
        "base_url",
        "api_key_env",
        "max_concurrency",
        "timeout",
        "max_retries",
    ),
}
JUDGE_KEYS = {
    "hf": ("dtype", "max_model_len"),
    "vllm": _VLLM_ENGINE,
    "reference": ("dtype", "max_model_len"),
}
TRAINING_KEYS = ("dtype",)


def model_keys(name: str, reads: Iterable[str]) -> list[tuple[str, ...]]:
    """The config key paths a job running model ``name`` tracks, where it reads ``reads`` of
    the entry (its engine's settings): the run's ``fidelity`` and the entry's weights and family
    too. ``gpus`` is the workflow's resource alone, read by no job."""
    keys = dict.fromkeys((*MODEL_SOURCE, *reads))
    return [("fidelity",), *(("models", name, key) for key in keys)]


def generator_keys(config: dict[str, Any], name: str) -> list[tuple[str, ...]]:
    """What a job generating with model ``name`` tracks: its backend's settings."""
    return model_keys(name, ("backend", *GENERATOR_KEYS[config["models"][name]["backend"]]))


def judge_keys(
    config: dict[str, Any], name: str, backends: Iterable[str] = ()
) -> list[tuple[str, ...]]:
    """What a job judging with model ``name`` tracks: the settings of ``scoring.backend`` and
    of the further judge ``backends`` it runs."""
    names = dict.fromkeys([config["scoring"]["backend"], *backends])
    return model_keys(name, [key for backend in names for key in JUDGE_KEYS[backend]])


def model_spec(config: dict[str, Any], name: str, source: str = "config") -> dict[str, Any]:
    """The specification of model ``name``, with its ``name`` and the run's ``fidelity``."""
    if name not in config["models"]:
        raise ConfigError(f"{source}: models: unknown model '{name}'")
    return {"name": name, "fidelity": config["fidelity"], **config["models"][name]}


def evaluated_datasets(config: dict[str, Any]) -> list[str]:
    """Datasets that are sampled and studied: all but the finetuning questions."""
    return [name for name in config["datasets"] if name != config["finetune"]["dataset"]]


def summarized_datasets(config: dict[str, Any]) -> list[str]:
    """Datasets whose answers are summarised and scored (``summaries.datasets``, or every
    evaluated one)."""
    return config["summaries"]["datasets"] or evaluated_datasets(config)


def model_gpus(config: dict[str, Any], *names: str) -> int:
    """GPUs a job holding the distinct models ``names`` takes from Snakemake's ``gpu`` resource:
    each model's ``gpus``; unset, its ``tensor_parallel_size``, or none for an openai endpoint
    (the model runs where it is served)."""
    total = 0
    for name in set(names):
        spec = config["models"][name]
        if spec["gpus"] is not None:
            total += spec["gpus"]
        elif spec["backend"] != "openai":
            total += spec["tensor_parallel_size"]
    return total


def dataset_spec(config: dict[str, Any], name: str, source: str = "config") -> dict[str, Any]:
    """The specification of dataset ``name``."""
    if name not in config["datasets"]:
        raise ConfigError(f"{source}: datasets: unknown dataset '{name}'")
    return config["datasets"][name]


def question_count(config: dict[str, Any], dataset: str) -> int:
    """How many questions of ``dataset`` are kept: its own ``num_questions``, else the run's."""
    return dataset_spec(config, dataset)["num_questions"] or config["questions"]["num_questions"]


def answer_settings(config: dict[str, Any], dataset: str | None) -> dict[str, Any]:
    """The ``answers`` settings of ``dataset``: the run's, updated with the dataset's own."""
    own = dataset_spec(config, dataset)["answers"] if dataset in config["datasets"] else None
    return {**config["answers"], **(own or {})}


# the header of Snakemake's resolved config (params_source reads it back)
RESOLVED_HEADER = "# Resolved from {config} by Snakemake for run {run}; every command reads it.\n"
# the first line of that header and of params.yaml's (selfreflect.workflow.PARAMS_HEADER)
_RESOLVED_FROM = re.compile(r"^# Resolved from (.+?) by ")


def params_source(params_file: Path) -> str | None:
    """The config a resolved config (``params.yaml``, Snakemake's ``logs/<run>/config.yaml``)
    was resolved from (its header), if it is one we wrote."""
    if not params_file.is_file():
        return None
    with params_file.open(encoding="utf-8") as file:
        match = _RESOLVED_FROM.match(file.readline())
    return match.group(1) if match else None


def config_source(config_file: str) -> str:
    """The config file a command's config errors name: the user's, where ``config_file`` was
    resolved from it."""
    return params_source(Path(config_file)) or config_file


def write_resolved_config(config: dict[str, Any], path: str | os.PathLike, source: str) -> Path:
    """Write the validated config (defaults filled) to ``path`` unless it is already there,
    and hold it for as long as this process (Snakemake's, from ``onstart``) runs.

    Snakemake passes this file to every command, so commands see exactly Snakemake's
    ``config``, including ``--config`` overrides; its header names ``source``, the user's
    config files (:func:`config_source`). Unchanged content is not rewritten. A run with other
    settings, while another run in the folder holds the file, is refused (``ConfigError``):
    rewriting it would change the settings of that run's jobs.
    """
    from selfreflect.fileio import write_text_held

    path = Path(path)
    header = RESOLVED_HEADER.format(config=source, run=config["run"])
    settings = yaml.safe_dump(config, sort_keys=True)

    def same_settings(held: str) -> bool:  # from another config file, or the same one named
        return held.partition("\n")[2] == settings  # otherwise: the header (one line) aside

    if not write_text_held(path, header + settings, same_settings):
        raise ConfigError(
            f"{path}: another Snakemake run in this folder runs run '{config['run']}' with "
            "other settings, which this file holds for its jobs; wait until it ends, or give "
            "this run another `run:` name (its own results/ and logs/)"
        )
    return path


# Finetuned strategies (selfreflect.finetune): ``finetuned_<method>`` runs the adapter trained
# with finetune.training.seed, ``finetuned_<method>-seed<k>`` the one trained with seed k (one
# adapter per method and seed). Here, not in the finetune package, so the main table reads them
# without depending on the training code.
SEED_MAX = 2**32 - 1  # the largest seed every seeded library takes (numpy, torch)
_FINETUNED = re.compile(r"finetuned_(sft|dpo|grpo)(?:-seed(0|[1-9][0-9]{0,9}))?")


def finetuned(strategy: str) -> tuple[str, int | None] | None:
    """A finetuned strategy's training method and seed (None: finetune.training.seed); None
    for any other strategy."""
    if match := _FINETUNED.fullmatch(strategy):
        return match[1], None if match[2] is None else int(match[2])
    return None


def registered_strategy(strategy: str) -> str:
    """The registered strategy a name runs: ``finetuned_<method>`` for a seeded one."""
    made = finetuned(strategy)
    return f"finetuned_{made[0]}" if made else strategy


def adapter_of(config: dict[str, Any], strategy: str) -> tuple[str, int] | None:
    """The training method and seed of the adapter a finetuned strategy runs (None for the
    others)."""
    made = finetuned(strategy)
    if made is None:
        return None
    method, seed = made
    return method, config["finetune"]["training"]["seed"] if seed is None else seed


def teachers(config: dict[str, Any]) -> dict[str, str]:
    """Each listed SFT or DPO strategy -> the teacher strategy it is compared with (GRPO learns
    from no teacher: it is compared with the other methods' adapters, :func:`rival_arms`)."""
    strategies = config["summaries"]["strategies"]
    return {
        s: config["finetune"]["teacher"]
        for s in strategies
        if (adapter := adapter_of(config, s)) and adapter[0] != "grpo"
    }


def rival_arms(config: dict[str, Any]) -> dict[str, dict[str, str]]:
    """For each other method (``sft``, ``dpo``): each listed GRPO strategy -> the listed
    strategy running that method's adapter of the same seed (those listed only)."""
    listed = {adapter_of(config, s): s for s in config["summaries"]["strategies"]}
    arms: dict[str, dict[str, str]] = {"sft": {}, "dpo": {}}
    for (method, seed), strategy in [(a, s) for a, s in listed.items() if a]:
        if method == "grpo":
            for rival, compared in arms.items():
                if (rival, seed) in listed:
                    compared[strategy] = listed[(rival, seed)]
    return {method: compared for method, compared in arms.items() if compared}
