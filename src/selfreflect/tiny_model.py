"""A tiny, deterministic Qwen2-architecture chat model built locally (no hub access).

Random weights, a byte-level BPE tokenizer trained on a few shipped sentences, and a
ChatML chat template with system/user/assistant roles, ``continue_final_message`` support and
a Qwen3-style ``enable_thinking`` switch. Used as subject, summariser and judge in the smoke
configuration and the tests.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]

CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- endif %}"
    "{%- endif %}"
)


def build_tokenizer(vocab_size: int = 640):
    """Byte-level BPE trained on the shipped corpus, wrapped as a fast HF tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    corpus = (resources.files("selfreflect") / "data" / "tiny_corpus.txt").read_text("utf-8")
    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    backend.train_from_iterator(corpus.splitlines(), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
        model_max_length=4096,
    )


OWNER = "selfreflect tiny-model"  # the command whose marker its folder holds


# the tiny model's sizes (a Qwen2 config's)
TINY_SHAPE = {
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 64,  # vLLM's CPU attention rejects smaller heads
    "initializer_range": 0.1,  # peakier next-token distributions than the default 0.02
    "tie_word_embeddings": True,
}


def build_tiny_model(out_dir: str | os.PathLike, seed: int = 0, shape: dict | None = None) -> Path:
    """Write the tiny model (weights, config, tokenizer, template) to ``out_dir``; ``shape``:
    Qwen2 config sizes other than :data:`TINY_SHAPE` (a real model's layers with random weights
    and the tiny tokenizer's vocabulary: ``bench device-run``'s DAG).

    The result is a pure function of ``seed`` and ``shape``: same seed, same weights and tokenizer.
    """
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM
    from transformers.utils import logging as transformers_logging

    from selfreflect.fileio import atomic_dir, check_replaceable

    check_replaceable(out_dir, OWNER)
    transformers_logging.disable_progress_bar()  # a bar per shard; an error stays one line

    tokenizer = build_tokenizer()
    eos = tokenizer.convert_tokens_to_ids("<|im_end|>")
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    config = Qwen2Config(
        **(shape or TINY_SHAPE),
        vocab_size=len(tokenizer),
        max_position_embeddings=4096,
        bos_token_id=None,
        eos_token_id=eos,
        pad_token_id=pad,
        dtype="float32",
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config).eval()
    with atomic_dir(out_dir, OWNER) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        GenerationConfig(eos_token_id=eos, pad_token_id=pad).save_pretrained(tmp)
    return Path(out_dir)
