"""transformers ``generate`` backend: same sampling semantics as vLLM, no engine needed."""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

from selfreflect.backends import Generation, Generator, Sampling
from selfreflect.families import PromptFormat


def load_hf_model(spec: dict[str, Any]):
    """Tokenizer and causal LM (eval mode, on GPU when one is available) for a model spec.

    The checkpoint's ``generation_config`` keeps only its special tokens: its sampling
    defaults (e.g. a repetition penalty) would apply on top of the protocol's settings, which
    neither vLLM (given explicit sampling parameters) nor the authors' tool does.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    device = "cuda" if torch.cuda.is_available() else "cpu"
    tokenizer = AutoTokenizer.from_pretrained(spec["path"])
    model = AutoModelForCausalLM.from_pretrained(spec["path"], dtype=spec["dtype"])
    tokens = ("bos_token_id", "eos_token_id", "pad_token_id")
    model.generation_config = GenerationConfig(
        **{name: getattr(model.generation_config, name) for name in tokens}
    )
    return tokenizer, model.to(device).eval()


class HfGenerator(Generator):
    def __init__(self, spec: dict[str, Any]) -> None:
        self.name = spec["name"]
        self.tokenizer, self.model = load_hf_model(spec)
        self.format = PromptFormat.for_model(self.tokenizer, spec)
        self.max_model_len = spec["max_model_len"] or self.model.config.max_position_embeddings

    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        pairs = list(zip(prompts, sampling, strict=True))
        return [self._one(prompt, spec) for prompt, spec in tqdm(pairs, desc="Generating")]

    def _one(self, prompt: str, sampling: Sampling) -> Generation:
        import torch

        ids, error = self.prompt_ids(prompt, sampling)
        if error is not None:
            return Generation(prompt_tokens=len(ids), error=error)
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        input_ids = torch.tensor([ids], device=self.model.device)
        max_new = min(sampling.max_tokens, self.max_model_len - len(ids))
        with torch.no_grad():
            output = self.model.generate(
                input_ids,
                attention_mask=torch.ones_like(input_ids),
                max_new_tokens=max_new,
                num_return_sequences=sampling.n,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
                tokenizer=self.tokenizer,
                **_decoding_kwargs(sampling),
            )
        completions = output[:, len(ids) :]
        texts, generated = [], 0
        for row in completions:
            tokens = _strip_after_eos(row.tolist(), self.model.generation_config.eos_token_id)
            generated += len(tokens)
            texts.append(
                _cut_at_stop(self.tokenizer.decode(tokens, skip_special_tokens=True), sampling.stop)
            )
        return Generation(texts=texts, prompt_tokens=len(ids), completion_tokens=generated)


def _decoding_kwargs(sampling: Sampling) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"stop_strings": list(sampling.stop) or None}
    if sampling.temperature == 0:
        return {**kwargs, "do_sample": False, "temperature": None, "top_p": None, "top_k": None}
    return {
        **kwargs,
        "do_sample": True,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "top_k": sampling.top_k or None,
    }


def _strip_after_eos(tokens: list[int], eos: int | list[int] | None) -> list[int]:
    """Generated tokens up to (and including) the first end-of-sequence token."""
    stops = {eos} if isinstance(eos, int) else set(eos or [])
    for i, token in enumerate(tokens):
        if token in stops:
            return tokens[: i + 1]
    return tokens


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    """Text before the first stop string, as vLLM returns it."""
    cuts = [text.find(s) for s in stop if s in text]
    return text[: min(cuts)] if cuts else text
