"""transformers judge with prefix sharing.

Each context's shared prefix (system, question, context, start of the masked-word prompt) is
prefilled once; its KV cache is reused for every batch of that context's masked-word suffixes.
Suffixes are right-padded (causal attention never looks at the padding, so no mask is needed),
only the target-predicting positions go through the LM head, and distances stay on the device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from selfreflect.families import PromptFormat
from selfreflect.scoring.judge import Judge
from selfreflect.scoring.tasks import ContextTasks

Layers = list[tuple[torch.Tensor, torch.Tensor]]


@dataclass(frozen=True)
class Prefix:
    """A context's tasks with the key/value states of its shared prefix, each (1, H, P, D)."""

    tasks: ContextTasks
    layers: Layers | None


class HfJudge(Judge):
    def __init__(self, name: str, fmt: PromptFormat, model: Any, batch_size: int) -> None:
        self.name = name
        self.format = fmt
        self.tokenizer = fmt.tokenizer
        self.model = model.eval()
        self.decoder = model.get_decoder()
        self.batch_size = batch_size
        self.max_model_len = model.config.max_position_embeddings
        self.device = model.device

    def prepare(self, tasks: ContextTasks) -> Prefix:
        if tasks.prefix_len == 0:
            return Prefix(tasks, None)
        ids = torch.tensor([tasks.sequences[0][: tasks.prefix_len]], device=self.device)
        cache = self.decoder(input_ids=ids, use_cache=True).past_key_values
        return Prefix(tasks, [(layer.keys, layer.values) for layer in cache.layers])

    def logits(self, state: Prefix, rows: range) -> torch.Tensor:
        tasks, skip = state.tasks, state.tasks.prefix_len
        suffixes = [tasks.sequences[k][skip:] for k in rows]
        ids = torch.zeros(len(rows), max(map(len, suffixes)), dtype=torch.long)
        batch, position = [], []
        for i, (k, suffix) in enumerate(zip(rows, suffixes, strict=True)):
            ids[i, : len(suffix)] = torch.tensor(suffix)
            # target j is predicted at sequence position j - 1, suffix position j - 1 - skip
            first = tasks.starts[k] - 1 - skip
            batch += [i] * (len(suffix) - first - 1)
            position += range(first, len(suffix) - 1)
        hidden = self.decoder(
            input_ids=ids.to(self.device),
            past_key_values=self._cache(state.layers, len(rows)),
            use_cache=state.layers is not None,
        ).last_hidden_state
        return self._lm_head(hidden[batch, position])

    def _cache(self, layers: Layers | None, batch: int) -> Any:
        """A fresh cache holding the prefix ``batch`` times (views; the model copies on append)."""
        if layers is None:
            return None
        from transformers import DynamicCache

        expanded = [(k.expand(batch, -1, -1, -1), v.expand(batch, -1, -1, -1)) for k, v in layers]
        return DynamicCache(ddp_cache_data=expanded, config=self.model.config)

    def _lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits of the final hidden states; (n, H) -> (n, V)."""
        logits = self.model.get_output_embeddings()(hidden)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return torch.tanh(logits / cap) * cap if cap else logits

    def close(self) -> None:
        del self.model, self.decoder
