"""Finetuned summarisers: a LoRA adapter on the subject, trained on the workflow's own signal.

SFT learns the teacher strategy's summaries of the training questions; DPO learns from pairs of
candidate summaries ranked by their SelfReflect scores (``finetune.judge``'s); GRPO learns from
its own sampled summaries, rewarded with minus their SelfReflect scores by a reward judge
(``finetune.grpo.judge``, :mod:`selfreflect.finetune.reward`). The finetuned strategies
(``finetuned_sft``, ``finetuned_dpo``, ``finetuned_grpo``; ``finetuned_sft-seed1``: the adapter
trained with seed 1) then summarise in one greedy pass of the ``basic`` prompt with the adapter.
Training questions are a dataset of their own, never evaluated.
"""

from __future__ import annotations

import os
from typing import Any

from selfreflect.config import SEED_MAX, adapter_of, finetuned
from selfreflect.errors import ConfigError


def trained_adapters(config: dict[str, Any]) -> list[tuple[str, int]]:
    """The (method, seed) of each adapter the listed strategies run, in their order."""
    made = (adapter_of(config, s) for s in config["summaries"]["strategies"])
    return list(dict.fromkeys(adapter for adapter in made if adapter))


def finetuned_methods(config: dict[str, Any]) -> list[str]:
    """The training methods the listed strategies need (``sft``, ``dpo``, ``grpo``)."""
    return list(dict.fromkeys(method for method, _ in trained_adapters(config)))


def judge_name(config: dict[str, Any]) -> str:
    """The judge that scores the DPO candidates: ``finetune.judge``, else the first of
    ``judges`` (a judge of its own keeps the preferences apart from the evaluation)."""
    return config["finetune"]["judge"] or config["judges"][0]


def check_finetune(config: dict[str, Any], source: str = "config") -> None:
    """One-line :class:`ConfigError` for a ``finetune`` block the listed strategies cannot use:
    no training dataset, one that is also evaluated, an unknown teacher or candidate, or a
    summariser with other weights than the subjects' (it runs their adapters), a GRPO reward
    judge that is missing or evaluates, a positive control without its teacher or adapters."""
    from selfreflect.strategies.registry import builtin_names, unknown_message

    settings = config["finetune"]
    _check_control(config, source)
    if not finetuned_methods(config):
        return
    dataset = settings["dataset"]
    if dataset is None:
        raise ConfigError(f"{source}: finetune.dataset: the finetuned strategies need one")
    if dataset in (config["summaries"]["datasets"] or []):
        raise ConfigError(
            f"{source}: finetune.dataset: '{dataset}' is trained on, so it cannot be evaluated"
            " (summaries.datasets)"
        )
    plugins = config["summaries"]["plugins"]
    named = [("finetune.teacher", settings["teacher"])]
    named += [("finetune.candidates", name) for name in settings["candidates"]]
    for key, name in named:
        if finetuned(name) or name not in [*builtin_names(), *plugins]:
            raise ConfigError(f"{source}: {key}: {unknown_message(name, plugins, trained=False)}")
    if "grpo" in finetuned_methods(config):
        _check_reward_judge(config, source)
    summarizer = config["summarizer"]
    models = config["models"]
    if summarizer and any(
        models[s]["path"] != models[summarizer]["path"] for s in config["subjects"]
    ):
        raise ConfigError(
            f"{source}: summarizer: the finetuned strategies run each subject's adapter on the"
            f" summariser, so '{summarizer}' must have the subjects' weights (models.*.path)"
        )
    runs: dict[tuple[str, int], str] = {}
    for strategy in config["summaries"]["strategies"]:
        adapter = adapter_of(config, strategy)
        if adapter and adapter[1] > SEED_MAX:
            raise ConfigError(
                f"{source}: summaries.strategies: '{strategy}': seed above {SEED_MAX}"
            )
        if adapter and (other := runs.setdefault(adapter, strategy)) != strategy:
            raise ConfigError(
                f"{source}: summaries.strategies: '{other}' and '{strategy}' run the same"
                f" adapter ({adapter[0]}, seed {adapter[1]}); list it once"
            )


def _check_reward_judge(config: dict[str, Any], source: str) -> None:
    """GRPO's reward judge is set and is none of the evaluation judges, under its name or
    another (an entry of the same weights: :func:`same_weights`)."""
    judge = config["finetune"]["grpo"]["judge"]
    if judge is None:
        raise ConfigError(f"{source}: finetune.grpo.judge: finetuned_grpo needs a reward judge")
    for evaluating in config["judges"]:
        if same_weights(config["models"], judge, evaluating):
            named = "" if judge == evaluating else f" (the weights of '{evaluating}')"
            raise ConfigError(
                f"{source}: finetune.grpo.judge: '{judge}' is an evaluation judge{named}"
                " (judges); the adapter would be scored by the judge it was trained to please"
            )


def same_weights(models: dict[str, Any], first: str, second: str) -> bool:
    """Whether the model entries ``first`` and ``second`` load the same weights: one name, one
    folder or hub id (``path``), or one GGUF file of one package."""
    a, b = models[first], models[second]
    if first == second or (a["gguf"] and (a["package"], a["gguf"]) == (b["package"], b["gguf"])):
        return True
    paths = [spec.get("path") for spec in (a, b)]
    return None not in paths and len({os.path.normpath(path) for path in paths}) == 1


def _check_control(config: dict[str, Any], source: str) -> None:
    """A positive control (``report.plan.control_min_adapters``) scores its teacher and at
    least as many adapters that learn from it as its rule needs."""
    from selfreflect.config import teachers

    needed = config["report"]["plan"].get("control_min_adapters")
    if needed is None:
        return
    key = f"{source}: report.plan.control_min_adapters"
    teacher = config["finetune"]["teacher"]
    if teacher not in config["summaries"]["strategies"]:
        raise ConfigError(
            f"{key}: the control's teacher '{teacher}' is not listed in summaries.strategies"
        )
    taught = len(teachers(config))
    if needed > taught:
        raise ConfigError(f"{key}: {needed} adapters needed, but {taught} learn from '{teacher}'")
