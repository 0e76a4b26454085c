"""Any OpenAI-compatible endpoint (OpenAI, vLLM ``serve``, …) as a :class:`Generator`.

Chats go to ``/chat/completions`` (the server applies the chat template), rendered prompts to
``/completions``. ``n``, ``seed`` and ``stop`` are sent as API fields, ``top_k`` and, for the
open-weight families (:mod:`selfreflect.families`), the ``enable_thinking`` switch as vLLM's
extra fields; token counts come from ``usage``. The server renders chats with its template, so
a reasoning family's ``</think>`` suffix and a base family's joined contents are not applied.
A request the endpoint rejects (HTTP 400, e.g. too long) fails its prompt; an endpoint that
cannot be reached or refuses the key raises. The API key is read from the environment variable
named by ``api_key_env`` and never logged, stored or echoed in an error.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from selfreflect.backends import Generation, Generator, Sampling
from selfreflect.chat import Message
from selfreflect.errors import InputError
from selfreflect.families import PromptFormat

logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")  # anything else may be a pasted key: not echoed


def api_key(spec: dict[str, Any]) -> str:
    """The key from ``api_key_env``; servers that need none (``null``) get a placeholder."""
    variable = spec["api_key_env"]
    if variable is None:
        return "EMPTY"
    if not os.environ.get(variable):
        shown = variable if _ENV_NAME.match(variable) else "(name not shown: not UPPER_CASE)"
        raise InputError(f"model '{spec['name']}': environment variable {shown} is not set")
    return os.environ[variable]


def request_fields(sampling: Sampling, template_kwargs: dict[str, Any]) -> dict[str, Any]:
    """API fields for one request under ``sampling``."""
    fields: dict[str, Any] = {
        "n": sampling.n,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
    }
    if sampling.stop:
        fields["stop"] = list(sampling.stop)
    if sampling.seed is not None:
        fields["seed"] = sampling.seed
    extra: dict[str, Any] = {}
    if sampling.top_k > 0:
        extra["top_k"] = sampling.top_k
    if template_kwargs:
        extra["chat_template_kwargs"] = template_kwargs
    if extra:
        fields["extra_body"] = extra
    return fields


class OpenaiGenerator(Generator):
    local = False  # the model lives at the endpoint

    def __init__(self, spec: dict[str, Any]) -> None:
        from openai import OpenAI

        self.name = spec["name"]
        self.model = spec["path"]
        self.tokenizer = None
        self.format = PromptFormat.for_model(None, spec)
        self.max_model_len = spec["max_model_len"]
        self.workers = spec["max_concurrency"]
        self._key = api_key(spec)
        self.client = OpenAI(base_url=spec["base_url"], api_key=self._key)

    def chat(
        self,
        chats: Sequence[list[Message]],
        sampling: Sampling | Sequence[Sampling],
        thinking: bool = False,
    ) -> list[Generation]:
        generic = self.format.family.name == "generic"
        template_kwargs = {} if generic and not thinking else {"enable_thinking": thinking}

        def one(chat: list[Message], spec: Sampling) -> Any:
            messages = self.format.messages(chat)
            return self.client.chat.completions.create(
                model=self.model, messages=messages, **request_fields(spec, template_kwargs)
            )

        return self._run(one, chats, sampling, lambda choice: choice.message.content or "")

    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        def one(prompt: str, spec: Sampling) -> Any:
            return self.client.completions.create(
                model=self.model, prompt=prompt, **request_fields(spec, {})
            )

        return self._run(one, prompts, sampling, lambda choice: choice.text)

    def _run(
        self,
        request: Callable[[Any, Sampling], Any],
        items: Sequence[Any],
        sampling: Sampling | Sequence[Sampling],
        text: Callable[[Any], str],
    ) -> list[Generation]:
        """Send one request per item, ``max_concurrency`` at a time, in order."""
        per_item = [sampling] * len(items) if isinstance(sampling, Sampling) else list(sampling)

        def call(pair: tuple[Any, Sampling]) -> Generation:
            return self._generation(lambda: request(*pair), text)

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(call, zip(items, per_item, strict=True)))

    def _generation(self, send: Callable[[], Any], text: Callable[[Any], str]) -> Generation:
        import openai

        try:
            response = send()
        except openai.BadRequestError as err:
            return Generation(error=f"endpoint rejected the request: {self._clean(err)}")
        except openai.OpenAIError as err:
            where = self.client.base_url
            raise InputError(
                f"model '{self.name}': endpoint {where} failed: {self._clean(err)}"
            ) from None
        choices = sorted(response.choices, key=lambda choice: choice.index)
        usage = response.usage
        return Generation(
            texts=[text(choice) for choice in choices],
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
        )

    def _clean(self, err: Exception) -> str:
        """The error as one line, with the API key masked wherever it appears."""
        message = f"{type(err).__name__}: {err}".replace("\n", " ")
        return message.replace(self._key, "***") if self._key != "EMPTY" else message
