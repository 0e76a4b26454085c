"""Offline vLLM engine: one engine per job, all prompts of a job in one ``generate`` call."""

from __future__ import annotations

import os
from typing import Any

from selfreflect.backends import Generation, Generator, Sampling
from selfreflect.families import PromptFormat
from selfreflect.progress import terminal_bars

CPU_KV_CACHE_BYTES = 2**30  # KV cache on a CPU unless kv_cache_memory_bytes says otherwise


def start_engine(spec: dict[str, Any], **overrides: Any) -> Any:
    """A ``vllm.LLM`` for a validated ``models`` entry (:func:`engine_kwargs`, ``overrides``
    over them). On a CPU it runs in this process: vLLM's own engine process would import vLLM
    and torch again (about 50 s an engine) only to share the same cores. vLLM logs to standard
    error, the job's log (its default, standard output, is the terminal of a workflow run), and
    draws its progress bars only on a terminal (:func:`~selfreflect.progress.terminal_bars`)."""
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    from vllm import LLM

    kwargs = engine_kwargs(spec, use_tqdm_on_load=terminal_bars(), **overrides)
    if _on_cpu():
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    return LLM(**kwargs)


def engine_kwargs(spec: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """``vllm.LLM`` keyword arguments for a validated ``models`` entry."""
    kwargs = {
        "model": spec["path"],
        "dtype": checkpoint_dtype(spec),
        "max_model_len": spec["max_model_len"],
        "gpu_memory_utilization": spec["gpu_memory_utilization"],
        "tensor_parallel_size": spec["tensor_parallel_size"],
        "enforce_eager": spec["enforce_eager"],
        "seed": 0,
    }
    if spec.get("adapter"):  # a LoRA adapter (selfreflect.finetune), served by vLLM's LoRA
        kwargs.update(enable_lora=True, max_lora_rank=lora_rank(spec["adapter"]))
    if spec["kv_cache_memory_bytes"] is not None:
        kwargs["kv_cache_memory_bytes"] = spec["kv_cache_memory_bytes"]
    on_cpu = _on_cpu()
    if kwargs["enforce_eager"] is None:
        kwargs["enforce_eager"] = on_cpu
    if on_cpu:
        # on a CPU, gpu_memory_utilization reserves that share of all memory: 0.9 by default
        kwargs.setdefault("kv_cache_memory_bytes", CPU_KV_CACHE_BYTES)
        # vLLM's CPU sampler cannot rewind a seeded request's generator after a chunked
        # prefill ("CPU Generator does not use offset"); whole prefills avoid that.
        kwargs["enable_chunked_prefill"] = False
    return {**kwargs, **overrides}


def lora_rank(adapter: str) -> int:
    """The ``max_lora_rank`` an engine needs for ``adapter``: a power of two, at least 8."""
    from peft import PeftConfig

    return max(8, 1 << (PeftConfig.from_pretrained(adapter).r - 1).bit_length())


def checkpoint_dtype(spec: dict[str, Any]) -> str:
    """``spec["dtype"]``, with ``auto`` read as transformers reads it: the checkpoint's own dtype.

    vLLM's own ``auto`` runs a float32 checkpoint in 16 bits, so the ``vllm`` and ``hf`` backends
    of one config would compute in different precisions.
    """
    if spec["dtype"] != "auto":
        return spec["dtype"]
    from transformers import AutoConfig

    dtype = getattr(AutoConfig.from_pretrained(spec["path"]), "dtype", None)
    return "auto" if dtype is None else str(dtype).removeprefix("torch.")


def _on_cpu() -> bool:
    from vllm.platforms import current_platform

    return current_platform.is_cpu()


def sampling_params(sampling: Sampling):
    from vllm import SamplingParams

    return SamplingParams(
        n=sampling.n,
        temperature=sampling.temperature,
        top_p=sampling.top_p,
        top_k=sampling.top_k if sampling.top_k > 0 else -1,
        max_tokens=sampling.max_tokens,
        stop=list(sampling.stop) or None,
        seed=sampling.seed,
        skip_special_tokens=True,
    )


class VllmGenerator(Generator):
    def __init__(self, spec: dict[str, Any], llm: Any = None) -> None:
        """Start an engine for ``spec``, or wrap an already running ``vllm.LLM``."""
        self.name = spec["name"]
        adapter = spec.get("adapter")  # a LoRA adapter (selfreflect.finetune), served by vLLM
        if adapter:  # checked against the model before the engine starts
            from selfreflect.backends.adapter import check_adapter

            check_adapter(adapter, spec)
        self.llm = llm if llm is not None else start_engine(spec)
        self.tokenizer = self.llm.get_tokenizer()
        self.format = PromptFormat.for_model(self.tokenizer, spec)
        self.max_model_len = self.llm.llm_engine.model_config.max_model_len
        self.lora = None
        if adapter:
            from vllm.lora.request import LoRARequest

            self.lora = LoRARequest("adapter", 1, adapter)

    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        from vllm.inputs import TokensPrompt

        results = [Generation() for _ in prompts]
        runnable, requests, params = [], [], []
        for i, (prompt, spec) in enumerate(zip(prompts, sampling, strict=True)):
            ids, results[i].error = self.prompt_ids(prompt, spec)
            results[i].prompt_tokens = len(ids)
            if results[i].error is None:
                runnable.append(i)
                requests.append(TokensPrompt(prompt_token_ids=ids))
                params.append(sampling_params(spec))
        if requests:
            bars = terminal_bars()
            outputs = self.llm.generate(requests, params, use_tqdm=bars, lora_request=self.lora)
            for i, output in zip(runnable, outputs, strict=True):
                results[i].texts = [completion.text for completion in output.outputs]
                results[i].completion_tokens = sum(len(c.token_ids) for c in output.outputs)
        return results

    def first_token_probs(self, prompts: list[str], top: int) -> list[dict[str, float]]:
        import math

        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        requests = [TokensPrompt(prompt_token_ids=self.format.encode(p)) for p in prompts]
        params = SamplingParams(max_tokens=1, temperature=1.0, logprobs=top, seed=0)
        out = []
        for output in self.llm.generate(requests, params, use_tqdm=False, lora_request=self.lora):
            found: dict[str, float] = {}
            for token, logprob in output.outputs[0].logprobs[0].items():
                if logprob.rank is not None and logprob.rank <= top:
                    text = self.tokenizer.decode([token])
                    found[text] = found.get(text, 0.0) + math.exp(logprob.logprob)
            out.append(found)
        return out

    def close(self) -> None:
        del self.llm
