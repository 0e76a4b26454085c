"""Generation backends behind one small interface.

A :class:`Generator` turns chats into sampled completions. ``vllm`` (offline engine) and
``hf`` (transformers ``generate``) run a local model, ``openai`` calls an OpenAI-compatible
endpoint; every backend honours the same
:class:`Sampling` semantics, including a per-prompt seed. A new backend is a
:class:`Generator` subclass taking the model's spec, named in
:data:`selfreflect.backends.registry.BACKENDS`, which
:func:`~selfreflect.backends.registry.open_generator` opens (no module of this package imports
that table).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from selfreflect.chat import Message
from selfreflect.families import ORIGINAL, PromptFormat


@dataclass(frozen=True)
class Sampling:
    """How to sample one prompt. ``temperature == 0`` means greedy; ``top_k == 0`` means off."""

    n: int = 1
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    seed: int | None = None


@dataclass
class Generation:
    """The ``n`` completions of one prompt, with token counts; ``error`` is set on failure."""

    texts: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None


class Generator(ABC):
    """A loaded model that completes chats."""

    name: str
    tokenizer: Any
    format: PromptFormat  # renders and tokenises chats for the model's family
    max_model_len: int
    local: bool = True  # runs model files from ``path`` (checked before loading)

    def chat(
        self,
        chats: Sequence[list[Message]],
        sampling: Sampling | Sequence[Sampling],
        thinking: bool = False,
    ) -> list[Generation]:
        """Complete each chat (generation prompt added) under its ``sampling``."""
        prompts = [self.format.render(chat, thinking=thinking) for chat in chats]
        per_prompt = [sampling] * len(prompts) if isinstance(sampling, Sampling) else sampling
        return self.generate(prompts, list(per_prompt))

    @abstractmethod
    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        """Complete rendered prompt texts, tokenised by :meth:`prompt_ids`."""

    def first_token_probs(self, prompts: list[str], top: int) -> list[dict[str, float]]:
        """The ``top`` most likely first tokens of each rendered prompt's completion, as decoded
        text -> probability under the model's own distribution (T = 1, no top-p); texts that
        several tokens decode to are summed. Backends without log-probabilities raise
        :class:`NotImplementedError`."""
        raise NotImplementedError(f"the {type(self).__name__} backend gives no log-probabilities")

    def prompt_ids(self, prompt: str, sampling: Sampling) -> tuple[list[int], str | None]:
        """Token ids of a prompt and why it cannot be run (``None`` when it can).

        ``original`` fidelity left-truncates a prompt longer than ``max_model_len -
        max_tokens - 1`` as the authors' tool does; ``corrected`` fails a prompt that leaves
        no room to generate instead of cutting off its system message and question.
        """
        ids = self.format.encode(prompt)
        if self.format.fidelity == ORIGINAL:
            room = self.max_model_len - sampling.max_tokens - 1
            if room < 1:
                return ids, f"max_tokens {sampling.max_tokens} fills max_model_len"
            return ids[-room:], None
        if len(ids) >= self.max_model_len:
            return ids, f"prompt has {len(ids)} tokens; max_model_len is {self.max_model_len}"
        return ids, None

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the engine (optional)."""

    def __enter__(self) -> Generator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
