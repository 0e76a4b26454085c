"""The ``hf`` judge's token budget from the memory its forwards may take
(``scoring.token_budget: auto``): pure arithmetic on the model's shape.

A packed forward computes a token tree of ``tokens`` nodes after a context's cached prefix.
Beyond the weights it holds, at most: the key/value cache with the tree appended (every
layer), the additive attention masks and their boolean parts, one layer's attention scores and
weights in float32 (as the math kernel makes them; a fused kernel makes fewer) or its MLP's
activations, whichever is larger, a few hidden-state copies, and the LM head's logits with the
judge's float32 distributions of the reference and the summary and their difference (every
node a target at most). :func:`forward_bytes` adds these up; :func:`token_budget` is the most
tokens whose forward fits a share of the memory that is free once the model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FLOAT32 = 4
MASK_TYPES = 2  # full and sliding-window attention: one additive mask each at most
VOCAB_ROWS = 4  # per target: the logits, the summary's and reference's distributions, p - q
HIDDEN_COPIES = 4  # residual stream, normed input, attention output, MLP output


@dataclass(frozen=True)
class Shape:
    """What a forward's memory depends on: a decoder's sizes and the bytes of its dtype."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    dtype_bytes: int

    @classmethod
    def of(cls, config: Any, dtype_bytes: int) -> Shape:
        """The shape of a transformers model config (``model.config``)."""
        heads = config.num_attention_heads
        return cls(
            layers=config.num_hidden_layers,
            hidden=config.hidden_size,
            intermediate=config.intermediate_size,
            heads=heads,
            kv_heads=getattr(config, "num_key_value_heads", None) or heads,
            head_dim=getattr(config, "head_dim", None) or config.hidden_size // heads,
            vocab=config.vocab_size,
            dtype_bytes=dtype_bytes,
        )


def forward_bytes(shape: Shape, tokens: int, prefix: int) -> int:
    """An upper bound of the bytes one forward of ``tokens`` tree tokens after a cached
    prefix of ``prefix`` tokens allocates beyond the weights."""
    keys = prefix + tokens
    b = shape.dtype_bytes
    cache = shape.layers * 2 * shape.kv_heads * shape.head_dim * keys * b
    masks = tokens * keys * (MASK_TYPES * b + 3)  # additive masks, then 3 boolean ones
    attention = 2 * shape.heads * tokens * keys * FLOAT32  # one layer: scores and weights
    mlp = 3 * tokens * shape.intermediate * b  # gate, up, their product
    hidden = HIDDEN_COPIES * tokens * shape.hidden * b
    head = VOCAB_ROWS * tokens * shape.vocab * FLOAT32
    return cache + masks + max(attention, mlp) + hidden + head


def token_budget(shape: Shape, free_bytes: int, prefix: int, share: float = 0.5) -> int:
    """The most tree tokens (at least 1) whose forward after ``prefix`` cached tokens takes at
    most ``share`` of ``free_bytes`` (:func:`forward_bytes`; the rest is left to the
    allocator's fragmentation and what the judge keeps between forwards)."""
    allowed = share * free_bytes
    low, high = 1, 1
    while forward_bytes(shape, high * 2, prefix) <= allowed:
        high *= 2
    high *= 2  # forward_bytes(high) > allowed >= forward_bytes(low) where low fits at all
    while high - low > 1:
        middle = (low + high) // 2
        if forward_bytes(shape, middle, prefix) <= allowed:
            low = middle
        else:
            high = middle
    return low


def parse_budget(value: str) -> int | str:
    """A command line's ``--token-budget``: a positive number of tokens, or ``auto``."""
    if value == "auto":
        return value
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{value!r} is neither a positive number of tokens nor 'auto'")
    return int(value)
