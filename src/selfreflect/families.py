"""Model families: how each family of the paper's models is prompted, as the authors ran it.

A model's ``family`` (config key, else detected from its path, GGUF file or name like the
authors' tool does) decides whether its chat template is used, whether the system message is
merged into the first user turn, and whether prompts with thinking off get an empty reasoning
block appended. :class:`PromptFormat` applies the family together with the run's ``fidelity``:
``original`` reproduces the authors' tool, ``corrected`` fixes what it got wrong
(docs/configuration.md, "Model families and fidelity").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from selfreflect.chat import Message

ORIGINAL, CORRECTED = "original", "corrected"
REASONING_END = "</think>"
_AUTHORS_SPLIT = "</think>\n\n"  # the authors' reasoning marker, also appended with thinking off


@dataclass(frozen=True)
class Family:
    """How one family of models is prompted."""

    name: str
    pattern: str  # searched case-insensitively in the model's path, GGUF file and name
    base: bool = False  # no chat template: contents joined by "\n", summaries stop at ". "
    reasoning: bool = False  # always reasons: with thinking off "</think>\n\n" is appended
    merge_system: bool = False  # the system message goes into the first user turn

    def matches(self, text: str) -> bool:
        return re.search(self.pattern, text, re.IGNORECASE) is not None


FAMILIES = (
    Family("deepseek-r1-distill", r"deepseek-r1-distill", reasoning=True),
    Family("qwq", r"qwq", reasoning=True),
    Family("qwen3-base", r"qwen3-[\w.-]*-base", base=True),  # Qwen3-30B-A3B-Base too
    Family("qwen3", r"qwen3"),
    # Qwen2.5-7B, and the named variants' base models (Qwen2.5-Coder-0.5B, Qwen2.5-Math-7B)
    Family(
        "qwen2.5-base", r"qwen2\.5-(?:(?!instruct)[a-z]+-)*[\d.]+b(?![\w.-]*instruct)", base=True
    ),
    Family("qwen2.5", r"qwen2\.5"),
    Family("gemma-pt", r"gemma-3-[\w.]*-pt", base=True, merge_system=True),
    Family("gemma", r"gemma", merge_system=True),
    Family("generic", r""),
)
BY_NAME = {family.name: family for family in FAMILIES}


def detect_family(*names: str | None) -> Family:
    """The first family whose pattern occurs in one of ``names`` (in order), else ``generic``."""
    for text in filter(None, names):
        for family in FAMILIES[:-1]:
            if family.matches(text):
                return family
    return BY_NAME["generic"]


def model_family(spec: dict[str, Any]) -> Family:
    """The family of a validated ``models`` entry: its ``family`` key, else detected."""
    if spec.get("family"):
        return BY_NAME[spec["family"]]
    return detect_family(spec.get("gguf"), spec.get("path"), spec.get("name"))


@dataclass(frozen=True)
class PromptFormat:
    """Renders chats to prompt texts and token ids for one model, by family and fidelity."""

    tokenizer: Any
    family: Family
    fidelity: str = ORIGINAL

    @classmethod
    def for_model(cls, tokenizer: Any, spec: dict[str, Any]) -> PromptFormat:
        return cls(tokenizer, model_family(spec), spec.get("fidelity", ORIGINAL))

    @property
    def has_chat_template(self) -> bool:
        """Chats go through the chat template (else their contents are joined, docs/protocol.md §1).

        Without a tokenizer (an OpenAI-compatible server) the server's template renders them.
        """
        if self.family.base:
            return False
        return self.tokenizer is None or getattr(self.tokenizer, "chat_template", None) is not None

    @property
    def summary_stop(self) -> tuple[str, ...]:
        """Stop strings of summaries and fresh answers: ``". "`` without a chat template."""
        return () if self.has_chat_template else (". ",)

    def messages(self, chat: list[Message]) -> list[Message]:
        """``chat`` with the system message merged into the first user turn where needed."""
        if not (self.family.merge_system and chat and chat[0]["role"] == "system"):
            return chat
        system, user, *rest = chat
        return [{"role": "user", "content": system["content"] + "\n" + user["content"]}, *rest]

    def render(
        self,
        chat: list[Message],
        *,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        thinking: bool = False,
    ) -> str:
        """The prompt text of ``chat``; ``thinking`` is passed as ``enable_thinking``.

        A reasoning family's generation prompt gets ``</think>\\n\\n`` with thinking off.
        """
        if not self.has_chat_template:
            return "\n".join(message["content"] for message in chat)
        generation = add_generation_prompt and not continue_final_message
        text = self.tokenizer.apply_chat_template(
            self.messages(chat),
            tokenize=False,
            add_generation_prompt=generation,
            continue_final_message=continue_final_message,
            enable_thinking=thinking,
        )
        if generation and self.family.reasoning and not thinking:
            text += _AUTHORS_SPLIT
        return text

    def encode(self, text: str) -> list[int]:
        """Token ids of a rendered prompt.

        ``original``: the tokenizer's defaults, as the authors' tool (a template that already
        starts with BOS gets a second one); ``corrected``: special tokens only when the text
        does not start with the BOS token already.
        """
        bos = getattr(self.tokenizer, "bos_token", None)
        add = self.fidelity == ORIGINAL or not (bos and text.startswith(bos))
        return self.tokenizer(text, add_special_tokens=add)["input_ids"]

    def after_reasoning(self, text: str) -> str | None:
        """A thinking model's answer without its reasoning; ``None``: the question fails.

        ``original``: the text after the one ``</think>\\n\\n``, the whole text when there is
        none or more than one; ``corrected``: the text after the first ``</think>``, without
        leading whitespace, and ``None`` when the reasoning block never closes.
        """
        if self.fidelity == ORIGINAL:
            parts = text.split(_AUTHORS_SPLIT)
            return parts[1] if len(parts) == 2 else text
        _, closed, answer = text.partition(REASONING_END)
        return answer.lstrip() if closed else None
