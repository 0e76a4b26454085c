"""transformers judge: each distinct token of a context computed once.

Each context's shared prefix (system, question, context, start of the masked-word prompt) is
prefilled once; its KV cache is reused for every batch of that context's masked words. A batch's
suffixes are merged into a prefix tree (:func:`~selfreflect.scoring.contexts.token_tree`: the words
of one held-out answer share the answer's tokens before their masks, identical answers share
everything) and packed into one row in which each node attends to the prefix and to its own
ancestors, at its position in its sequences. Nothing is padded, only the target-predicting nodes
go through the LM head, and distances stay on the device. The mask takes the form of the model's
attention kernel: additive for ``sdpa`` and ``eager``, a block mask for ``flex_attention``, whose
kernel skips the blocks of queries and keys that see nothing of each other (the answers of a
forward do not see each other's tokens). ``compiled`` runs the decoder through ``torch.compile``
(dynamic shapes: every tree and prefix differs in length). The benchmarks measure both against
the default (docs/performance.md); no config asks for either.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import torch

from selfreflect.families import PromptFormat
from selfreflect.scoring.contexts import ContextTasks, packed_spans, token_tree
from selfreflect.scoring.forwards import Judge

log = logging.getLogger(__name__)
Layers = list[tuple[torch.Tensor, torch.Tensor]]
LAYER_TYPES = ("full_attention", "sliding_attention")
FLEX = "flex_attention"  # transformers' name of the FlexAttention kernel
BLOCK = 128  # FlexAttention's block of queries and keys


@dataclass(frozen=True)
class Prefix:
    """A context's tasks with the key/value states of its shared prefix, each (1, H, P, D).

    A sliding-window layer keeps only the prefix's last keys (fewer than P).
    """

    tasks: ContextTasks
    layers: Layers | None


def load_judge_model(spec: dict[str, Any]) -> tuple[PromptFormat, Any]:
    """The prompt format and transformers model of a judge's ``models`` entry."""
    from selfreflect.backends.hf_engine import load_hf_model

    tokenizer, model = load_hf_model(spec)
    return PromptFormat.for_model(tokenizer, spec), model


def ancestor_mask(parents: torch.Tensor, depth: int) -> torch.Tensor:
    """(n, n) booleans of a token tree of ``depth`` levels at most, on ``parents``' device:
    node ``i`` sees node ``j`` when ``j`` is ``i`` or one of its ancestors (``parents[i]``:
    its parent, -1 at the top). One step up the tree per level, each a scatter of n values,
    with no copy from the host and no sync."""
    n = len(parents)
    seen = torch.zeros(n, n + 1, dtype=torch.bool, device=parents.device)  # last: "no node"
    up = torch.where(parents >= 0, parents, n)  # -1 as the "no node" column
    above = torch.cat([up, torch.full((1,), n, dtype=up.dtype, device=parents.device)])
    node = torch.arange(n, device=parents.device)
    for _ in range(depth + 1):  # the node itself, then each ancestor
        seen.scatter_(1, node[:, None], True)  # a scatter, not index_put_ (which syncs)
        node = above[node]
    return seen[:, :n]


def block_mask(allowed: torch.Tensor) -> Any:
    """FlexAttention's block mask of booleans ``allowed`` (queries, keys): a block of queries
    and keys none of which sees another is skipped. The mask is padded to whole blocks, so the
    kernel reads it in bounds wherever a block runs past the last query or key."""
    from torch.nn.attention.flex_attention import create_block_mask

    queries, keys = allowed.shape
    padded = torch.nn.functional.pad(allowed, (0, -keys % BLOCK, 0, -queries % BLOCK))

    def sees(batch: torch.Tensor, head: torch.Tensor, query: torch.Tensor, key: torch.Tensor):
        return padded[query, key]

    return create_block_mask(sees, None, None, queries, keys, device=allowed.device)


def free_memory(device: torch.device) -> int:
    """Bytes free on ``device``: the GPU's, else the machine's available memory."""
    if device.type == "cuda":
        return torch.cuda.mem_get_info(device)[0]
    import psutil

    return psutil.virtual_memory().available


def auto_budget(model: Any, max_model_len: int) -> int:
    """``scoring.token_budget: auto`` for a loaded ``model``: the most tokens per forward
    after a prefix of ``max_model_len`` tokens that fit half its device's free memory."""
    from selfreflect.scoring.budget import Shape, token_budget

    shape = Shape.of(model.config, model.dtype.itemsize)
    free = free_memory(model.device)
    budget = token_budget(shape, free, prefix=max_model_len)
    log.info(
        "token budget auto: %d tokens per forward (%.1f GiB free on %s, prefix up to %d tokens)",
        budget,
        free / 2**30,
        model.device,
        max_model_len,
    )
    return budget


def to_device(values: list[int], device: torch.device) -> torch.Tensor:
    """``values`` as an int64 tensor on ``device``. To a GPU, from pinned memory without
    waiting (a copy from pageable memory would wait for the forwards already queued), so the
    host builds the next batch's tree while the device computes this one."""
    host = torch.tensor(values, dtype=torch.int64)
    if device.type != "cuda":
        return host.to(device)
    return host.pin_memory().to(device, non_blocking=True)


class HfJudge(Judge):
    def __init__(
        self,
        name: str,
        fmt: PromptFormat,
        model: Any,
        batch_size: int,
        max_model_len: int | None = None,
        token_budget: int | None = None,
        compiled: bool = False,
    ) -> None:
        self.name = name
        self.format = fmt
        self.tokenizer = fmt.tokenizer
        self.model = model.eval()
        decoder = model.get_decoder()
        self.decoder = torch.compile(decoder, dynamic=True) if compiled else decoder
        self.batch_size = batch_size
        self.token_budget = token_budget
        self.max_model_len = max_model_len or model.config.max_position_embeddings
        self.device = model.device
        self.layer_types = getattr(model.config, "layer_types", None)
        unsupported = set(self.layer_types or ()) - set(LAYER_TYPES)
        if unsupported:
            raise ValueError(f"hf judge: layer types {sorted(unsupported)} unsupported; use vllm")

    @classmethod
    def open(cls, spec: dict[str, Any], settings: dict[str, Any], llm: Any = None) -> HfJudge:
        fmt, model = load_judge_model(spec)
        budget = settings.get("token_budget")
        if budget == "auto":
            budget = auto_budget(
                model, spec["max_model_len"] or model.config.max_position_embeddings
            )
        return cls(spec["name"], fmt, model, settings["batch_size"], spec["max_model_len"], budget)

    def spans(self, tasks: ContextTasks) -> list[range]:
        """A forward per ``batch_size`` masked words, or, with a ``token_budget``, per run of
        masked words whose token tree holds at most that many tokens."""
        if self.token_budget is None:
            return super().spans(tasks)
        return packed_spans(tasks, self.token_budget)

    def prepare(self, tasks: ContextTasks) -> Prefix:
        if tasks.prefix_len == 0:
            return Prefix(tasks, None)
        ids = to_device(tasks.sequences[0][: tasks.prefix_len], self.device)[None]
        self.forward_tokens += tasks.prefix_len
        cache = self.decoder(input_ids=ids, use_cache=True).past_key_values
        return Prefix(tasks, [(layer.keys, layer.values) for layer in cache.layers])

    def logits(self, state: Prefix, rows: range) -> torch.Tensor:
        tree = token_tree(state.tasks, rows)
        n = len(tree.tokens)
        self.forward_tokens += n
        packed = [*tree.tokens, *tree.parents, *tree.depths, *tree.predictors]
        on_device = to_device(packed, self.device)  # one copy: the mask is built on the device
        tokens, parents, depths = on_device[: 3 * n].view(3, n)
        predictors = on_device[3 * n :]
        positions = state.tasks.prefix_len + depths
        hidden = self.decoder(
            input_ids=tokens[None],
            position_ids=positions[None],
            attention_mask=self._attention_mask(state, parents, max(tree.depths), positions),
            past_key_values=self._cache(state.layers),
            use_cache=state.layers is not None,
        ).last_hidden_state
        return self._lm_head(hidden[0, predictors])

    def _attention_mask(
        self, state: Prefix, parents: torch.Tensor, depth: int, positions: torch.Tensor
    ) -> Any:
        """Masks of (nodes, cached + nodes) in the form the model's kernel takes: a node sees
        the prefix and its ancestors. One mask per layer type; sliding-window layers also drop
        keys outside the window."""
        tree_mask = ancestor_mask(parents, depth)
        if self.layer_types is None:
            return self._mask(self._allowed(tree_mask, positions, state, 0, None))
        window = getattr(self.model.config, "sliding_window", None)
        return {
            kind: self._mask(
                self._allowed(
                    tree_mask,
                    positions,
                    state,
                    self.layer_types.index(kind),
                    window if kind == "sliding_attention" else None,
                )
            )
            for kind in set(self.layer_types)
        }

    def _allowed(
        self,
        tree_mask: torch.Tensor,
        positions: torch.Tensor,
        state: Prefix,
        layer: int,
        window: int | None,
    ) -> torch.Tensor:
        """Which keys each node sees in layers like ``layer``, whose cache holds the prefix's
        last keys."""
        prefix_len = state.tasks.prefix_len
        cached = 0 if state.layers is None else state.layers[layer][0].shape[-2]
        prefix = torch.ones(len(positions), cached, dtype=torch.bool, device=self.device)
        allowed = torch.cat([prefix, tree_mask], 1)
        if window is not None:
            kept = torch.arange(prefix_len - cached, prefix_len, device=self.device)
            keys = torch.cat([kept, positions])
            allowed &= positions[:, None] - keys[None, :] < window
        return allowed

    def _mask(self, allowed: torch.Tensor) -> Any:
        """``allowed`` as the model's kernel takes it: a block mask for FlexAttention, else an
        additive mask (1, 1, nodes, keys)."""
        if self.model.config._attn_implementation == FLEX:
            return block_mask(allowed)
        blocked = torch.finfo(self.model.dtype).min
        mask = torch.zeros(allowed.shape, dtype=self.model.dtype, device=self.device)
        return mask.masked_fill_(~allowed, blocked)[None, None]

    def _cache(self, layers: Layers | None) -> Any:
        """A fresh cache holding the prefix (the model appends to copies, not to ``layers``)."""
        if layers is None:
            return None
        from transformers import DynamicCache

        return DynamicCache(ddp_cache_data=layers, config=self.model.config)

    def _lm_head(self, hidden: torch.Tensor) -> torch.Tensor:
        """Logits of the final hidden states; (n, H) -> (n, V)."""
        logits = self.model.get_output_embeddings()(hidden)
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        return torch.tanh(logits / cap) * cap if cap else logits

    def close(self) -> None:
        del self.model, self.decoder
