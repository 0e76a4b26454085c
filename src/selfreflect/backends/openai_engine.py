"""Any OpenAI-compatible endpoint (OpenAI, vLLM ``serve``, …) as a :class:`Generator`.

Chats go to ``/chat/completions`` (the server applies the chat template), rendered prompts to
``/completions``. ``n``, ``seed`` and ``stop`` are sent as API fields, ``top_k`` and, for the
open-weight families (:mod:`selfreflect.families`), the ``enable_thinking`` switch as vLLM's
extra fields; token counts come from ``usage``. The server renders chats with its template, so
a reasoning family's ``</think>`` suffix and a base family's joined contents are not applied.
The client retries a request answered with 429 or 5xx, or not answered within ``timeout``
seconds, ``max_retries`` times with exponential backoff. A request that still fails, that the
endpoint rejects (HTTP 400, e.g. too long), or whose response is not a completion with exactly
``n`` choices fails its prompt with the reason; an endpoint that cannot be reached, refuses the
key or has no such model raises. The API key is read from the environment variable named by
``api_key_env`` and never logged, stored or echoed in an error.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from selfreflect.backends import Generation, Generator, Sampling
from selfreflect.chat import Message
from selfreflect.errors import InputError
from selfreflect.families import PromptFormat

_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")  # anything else may be a pasted key: not echoed


def api_key(spec: dict[str, Any]) -> str:
    """The key from ``api_key_env``; servers that need none (``null``) get a placeholder."""
    variable = spec["api_key_env"]
    if variable is None:
        return "EMPTY"
    if not os.environ.get(variable):
        shown = variable if _ENV_NAME.fullmatch(variable) else "(name not shown: not UPPER_CASE)"
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
        self.client = OpenAI(
            base_url=spec["base_url"],
            api_key=self._key,
            timeout=spec["timeout"],
            max_retries=spec["max_retries"],
        )
        # The SDK builds its response models on first use (pydantic's defer_build), which is not
        # thread-safe: requests wait for their endpoint together, responses are parsed one at a
        # time (concurrent first parses failed with "BaseModel cannot be instantiated directly").
        self._parsing = threading.Lock()

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
            return self._parsed(
                self.client.chat.completions.with_raw_response.create(
                    model=self.model, messages=messages, **request_fields(spec, template_kwargs)
                )
            )

        def text(choice: Any) -> str | None:  # null content (all reasoning, say) fails it
            return None if choice.message is None else choice.message.content

        return self._run(one, chats, sampling, text)

    def generate(self, prompts: list[str], sampling: list[Sampling]) -> list[Generation]:
        def one(prompt: str, spec: Sampling) -> Any:
            return self._parsed(
                self.client.completions.with_raw_response.create(
                    model=self.model, prompt=prompt, **request_fields(spec, {})
                )
            )

        return self._run(one, prompts, sampling, lambda choice: choice.text)

    def _parsed(self, raw: Any) -> Any:
        """The SDK's response object of a raw response, parsed under :attr:`_parsing`."""
        with self._parsing:
            return raw.parse()

    def _run(
        self,
        request: Callable[[Any, Sampling], Any],
        items: Sequence[Any],
        sampling: Sampling | Sequence[Sampling],
        text: Callable[[Any], str | None],
    ) -> list[Generation]:
        """Send one request per item, ``max_concurrency`` at a time, in order."""
        per_item = [sampling] * len(items) if isinstance(sampling, Sampling) else list(sampling)

        def call(pair: tuple[Any, Sampling]) -> Generation:
            return self._generation(lambda: request(*pair), pair[1].n, text)

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(call, zip(items, per_item, strict=True)))

    def _generation(
        self, send: Callable[[], Any], n: int, text: Callable[[Any], str | None]
    ) -> Generation:
        """One request's completions; a failed request is a :class:`Generation` with the reason."""
        import openai

        try:
            response = send()
        except (
            openai.AuthenticationError,
            openai.PermissionDeniedError,
            openai.NotFoundError,
        ) as err:
            raise self._endpoint_error(err) from None
        except (openai.APIStatusError, openai.APITimeoutError) as err:
            return Generation(error=f"endpoint failed the request: {self._clean(err)}")
        except openai.OpenAIError as err:  # e.g. no connection
            raise self._endpoint_error(err) from None
        except json.JSONDecodeError as err:
            return Generation(
                error=f"endpoint sent malformed JSON: {err.msg} at character {err.pos}"
            )
        choices = getattr(response, "choices", None)
        if not isinstance(choices, list):
            return Generation(error=f"endpoint sent no choices: {self._clean(str(response))[:80]}")
        if len(choices) != n or {choice.index for choice in choices} != set(range(n)):
            return Generation(error=f"endpoint returned {len(choices)} of {n} choices")
        texts = [text(choice) for choice in sorted(choices, key=lambda choice: choice.index)]
        if not all(isinstance(t, str) for t in texts):
            return Generation(error="endpoint returned a choice without text")
        usage = response.usage
        return Generation(
            texts=texts,
            prompt_tokens=(usage and usage.prompt_tokens) or 0,
            completion_tokens=(usage and usage.completion_tokens) or 0,
        )

    def _endpoint_error(self, err: Exception) -> InputError:
        where = self.client.base_url
        return InputError(f"model '{self.name}': endpoint {where} failed: {self._clean(err)}")

    def _clean(self, err: Exception | str) -> str:
        """The error as one line (at most 300 characters), with the API key masked."""
        message = err if isinstance(err, str) else f"{type(err).__name__}: {err}"
        if self._key != "EMPTY":
            message = message.replace(self._key, "***")
        return " ".join(message.split())[:300]
