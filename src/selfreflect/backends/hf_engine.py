"""transformers ``generate`` backend: same sampling semantics as vLLM, no engine needed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
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
    """Prompts that share their sampling settings (seed aside) are generated together, longest
    first, up to ``batch_size`` sequences (prompts x ``n``) per ``generate`` call. Each prompt
    samples from its own seeded random generator, so its completions do not depend on which
    prompts share its batch."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name = spec["name"]
        adapter = spec.get("adapter")  # a LoRA adapter (selfreflect.finetune), run through PEFT
        if adapter:  # checked against the model before any weights load
            from selfreflect.backends.adapter import check_adapter

            check_adapter(adapter, spec)
        self.tokenizer, self.model = load_hf_model(spec)
        if adapter:
            from peft import PeftModel

            self.model = PeftModel.from_pretrained(self.model, adapter).eval()
        self.format = PromptFormat.for_model(self.tokenizer, spec)
        self.max_model_len = spec["max_model_len"] or self.model.config.max_position_embeddings
        self.batch_size = spec["batch_size"]

    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        ids: list[list[int]] = []
        results: dict[int, Generation] = {}
        groups: dict[tuple[Sampling, int], list[int]] = defaultdict(list)
        for i, (prompt, spec) in enumerate(zip(prompts, sampling, strict=True)):
            tokens, error = self.prompt_ids(prompt, spec)
            ids.append(tokens)
            if error is not None:
                results[i] = Generation(prompt_tokens=len(tokens), error=error)
                continue
            max_new = min(spec.max_tokens, self.max_model_len - len(tokens))
            groups[replace(spec, seed=None), max_new].append(i)
        with tqdm(total=len(prompts), desc="Generating") as progress:
            for (spec, max_new), members in groups.items():
                members.sort(key=lambda i: -len(ids[i]))
                size = max(1, self.batch_size // spec.n)
                for start in range(0, len(members), size):
                    chunk = members[start : start + size]
                    seeds = [sampling[i].seed for i in chunk]
                    batch = self._batch([ids[i] for i in chunk], seeds, spec, max_new)
                    for i, generation in zip(chunk, batch, strict=True):
                        results[i] = generation
                    progress.update(len(chunk))
        return [results[i] for i in range(len(prompts))]

    def first_token_probs(self, prompts: list[str], top: int) -> list[dict[str, float]]:
        import torch

        out = []
        for prompt in prompts:  # one forward pass each: the prompts of a question set are few
            ids = self.format.encode(prompt)[-self.max_model_len :]
            with torch.no_grad():
                logits = self.model(torch.tensor([ids], device=self.model.device)).logits
            probs, tokens = torch.softmax(logits[0, -1].float(), dim=-1).topk(top)
            found: dict[str, float] = {}
            for token, p in zip(tokens.tolist(), probs.tolist(), strict=True):
                text = self.tokenizer.decode([token])
                found[text] = found.get(text, 0.0) + p
            out.append(found)
        return out

    def _batch(
        self, ids: list[list[int]], seeds: list[int | None], sampling: Sampling, max_new: int
    ) -> list[Generation]:
        """Complete left-padded prompts in one ``generate`` call, ``sampling.n`` times each."""
        import torch

        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        width = max(map(len, ids))
        rows = [row for row in ids for _ in range(sampling.n)]
        input_ids = torch.tensor([[pad] * (width - len(row)) + row for row in rows])
        mask = torch.tensor([[0] * (width - len(row)) + [1] * len(row) for row in rows])
        processors = []
        if sampling.temperature > 0:  # sampled by the processor; generate keeps its choice
            processors.append(_SeededSampler(sampling, seeds))
        with torch.no_grad():
            output = self.model.generate(
                input_ids.to(self.model.device),
                attention_mask=mask.to(self.model.device),
                max_new_tokens=max_new,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                logits_processor=processors,
                stop_strings=list(sampling.stop) or None,
                pad_token_id=pad,
                tokenizer=self.tokenizer,
            )
        eos = self.model.generation_config.eos_token_id
        completions = output[:, width:].reshape(len(ids), sampling.n, -1).tolist()
        generations = []
        for row, samples in zip(ids, completions, strict=True):
            tokens = [_strip_after_eos(sample, eos) for sample in samples]
            texts = [self.tokenizer.decode(t, skip_special_tokens=True) for t in tokens]
            generations.append(
                Generation(
                    texts=[_cut_at_stop(text, sampling.stop) for text in texts],
                    prompt_tokens=len(row),
                    completion_tokens=sum(map(len, tokens)),
                )
            )
        return generations


class _SeededSampler:
    """A logits processor that samples each row's next token (temperature, top-k, top-p) from
    its prompt's own seeded generator and leaves only that token possible, so greedy decoding
    keeps it. Rows come ``n`` per prompt, in prompt order."""

    def __init__(self, sampling: Sampling, seeds: list[int | None]) -> None:
        import torch
        from transformers.generation.logits_process import (
            TemperatureLogitsWarper,
            TopKLogitsWarper,
            TopPLogitsWarper,
        )

        self.n = sampling.n
        self.warpers = [TemperatureLogitsWarper(sampling.temperature)]
        if sampling.top_k:
            self.warpers.append(TopKLogitsWarper(sampling.top_k))
        if sampling.top_p < 1:
            self.warpers.append(TopPLogitsWarper(sampling.top_p))
        self.generators = []
        for seed in seeds:
            generator = torch.Generator()
            if seed is None:
                generator.seed()
            else:
                generator.manual_seed(seed)
            self.generators.append(generator)

    def __call__(self, input_ids, scores):
        import torch

        for warper in self.warpers:
            scores = warper(input_ids, scores)
        probs = torch.softmax(scores.float(), dim=-1).cpu()
        chosen = torch.cat(
            [
                torch.multinomial(probs[i * self.n : (i + 1) * self.n], 1, generator=generator)
                for i, generator in enumerate(self.generators)
            ]
        ).to(scores.device)
        only = torch.full_like(scores, float("-inf"))
        return only.scatter_(1, chosen, 0.0)


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
