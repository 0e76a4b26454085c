"""vLLM judge: one ``max_tokens=1`` request per target token with full-vocabulary logprobs.

The requests of one context share its prefix, so vLLM's prefix cache computes that prefix once.
vLLM returns log-softmax of the raw logits, which gives the same ``softmax(x / T)`` as the logits
themselves (a per-row shift).
"""

from __future__ import annotations

from typing import Any

import torch

from selfreflect.families import PromptFormat
from selfreflect.scoring.contexts import ContextTasks
from selfreflect.scoring.forwards import Judge


class VllmJudge(Judge):
    def __init__(self, spec: dict[str, Any], batch_size: int, llm: Any = None) -> None:
        """Start an engine for ``spec`` (full logprobs, prefix caching) or wrap a running one."""
        from vllm import SamplingParams

        from selfreflect.backends.vllm_engine import start_engine

        self.name = spec["name"]
        if llm is None:
            llm = start_engine(spec, max_logprobs=-1, enable_prefix_caching=True)
        self.llm = llm
        self.tokenizer = llm.get_tokenizer()
        self.format = PromptFormat.for_model(self.tokenizer, spec)
        model_config = llm.llm_engine.model_config
        self.max_model_len = model_config.max_model_len
        self.vocab_size = model_config.get_vocab_size()
        self.batch_size = batch_size
        self.params = SamplingParams(
            max_tokens=1, temperature=0.0, logprobs=-1, flat_logprobs=True, detokenize=False
        )

    @classmethod
    def open(cls, spec: dict[str, Any], settings: dict[str, Any], llm: Any = None) -> VllmJudge:
        return cls(spec, settings["batch_size"], llm=llm)

    def logits(self, tasks: ContextTasks, rows: range) -> torch.Tensor:
        from vllm.inputs import TokensPrompt

        prompts = [
            TokensPrompt(prompt_token_ids=tasks.sequences[k][:j])
            for k in rows
            for j in range(tasks.starts[k], len(tasks.sequences[k]))
        ]
        outputs = self.llm.generate(prompts, self.params, use_tqdm=False)
        out = torch.full((len(prompts), self.vocab_size), float("-inf"))
        for i, output in enumerate(outputs):
            cached = getattr(output, "num_cached_tokens", None) or 0  # the prefix cache's
            self.forward_tokens += len(output.prompt_token_ids) - cached
            flat = output.outputs[0].logprobs
            out[i, torch.tensor(flat.token_ids)] = torch.tensor(flat.logprobs)
        return out

    def close(self) -> None:
        del self.llm
