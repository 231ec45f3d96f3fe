"""The model, reached through ``MODEL_ENDPOINT``: an OpenAI-compatible chat completions API
(the LiteLLM gateway, or a provider directly), called with httpx.

:meth:`ChatModel.complete` returns the assistant's message (text and tool calls) or raises
:class:`ModelError` with a message fit for an answer: the model is down, answered with an
HTTP error, or answered something that is not a chat completion.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import httpx

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.core._redact import Scrubber
from langop_infra.mcp._http import display_url

__all__ = ["ChatModel", "ModelError", "ModelReply", "RequestedCall"]

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
ERROR_LIMIT = 600  # characters of a model error an answer shows
ERROR_BODY_BYTES = 16 * 1024  # of an error answer, enough for its message


class ModelError(LangopError):
    """The model could not give a usable answer."""


@dataclass(frozen=True)
class RequestedCall:
    """A tool call the model asked for: its id, the (API) tool name, the raw arguments."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ModelReply:
    """The assistant's message: its text, and the tool calls it asks for."""

    content: str
    calls: tuple[RequestedCall, ...]
    message: dict[str, Any]


class ChatModel:
    """``POST {endpoint}/chat/completions`` with the model's name, messages and tools."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        api_key: str | None,
        timeout: float,
        metrics: RuntimeMetrics,
        client: httpx.AsyncClient | None = None,
        scrubber: Scrubber | None = None,
    ) -> None:
        self.url = endpoint.rstrip("/") + "/chat/completions"
        self.shown = display_url(self.url)  # no credentials in a URL reach a message
        self.model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self._metrics = metrics
        # A model's error may echo the key or the request: its words reach the A2A caller.
        self.scrubber = scrubber or Scrubber()
        self.scrubber.add(api_key or "")

    async def complete(
        self, messages: Sequence[Mapping[str, object]], tools: Sequence[Mapping[str, object]]
    ) -> ModelReply:
        body: dict[str, object] = {"model": self.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        started = time.perf_counter()
        try:
            reply = await self._post(body)
        except ModelError as exc:
            self._metrics.model_requests.labels("error").inc()
            raise ModelError(self.scrubber.line(exc, ERROR_LIMIT)) from None
        finally:
            self._metrics.model_seconds.observe(time.perf_counter() - started)
        self._metrics.model_requests.labels("ok").inc()
        return reply

    async def _post(self, body: dict[str, object]) -> ModelReply:
        try:
            status, content = await self._read(body)
        except httpx.HTTPError as exc:
            raise ModelError(
                f"the model at {self.shown} cannot be reached: {type(exc).__name__}: {exc}"
            ) from None
        if status >= 400:
            raise ModelError(
                f"the model at {self.shown} answered HTTP {status}: {_excerpt(_text(content))}"
            )
        try:
            document: object = _json.read(content)
        except ValueError:
            raise ModelError(
                f"the model answered something that is not JSON: {_excerpt(_text(content))}"
            ) from None
        return parse_reply(document)

    async def _read(self, body: dict[str, object]) -> tuple[int, bytes]:
        """The status and the body, read (decoded) no further than its cap: an error body's
        :data:`ERROR_BODY_BYTES`, an answer's :data:`MAX_RESPONSE_BYTES` (over it, an error)."""
        request = self._client.build_request("POST", self.url, json=body, headers=self._headers)
        response = await self._client.send(request, stream=True)
        try:
            error = response.status_code >= 400
            limit = ERROR_BODY_BYTES if error else MAX_RESPONSE_BYTES
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > limit and not error:
                    raise ModelError(f"the model's answer is over {MAX_RESPONSE_BYTES} bytes")
                if size >= limit and error:
                    break  # enough of an error for its message
            return response.status_code, b"".join(chunks)[:limit]
        finally:
            await response.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()


def parse_reply(document: Any) -> ModelReply:
    """The first choice's message of a chat completion; :class:`ModelError` otherwise."""
    try:
        message = cast("dict[str, Any]", document["choices"][0]["message"])
        if not isinstance(message, dict):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError("message is not an object")
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise TypeError("content is not a string")
        calls = tuple(_call(c) for c in cast("list[Any]", message.get("tool_calls") or []))
    except (KeyError, IndexError, TypeError) as exc:
        raise ModelError(
            f"the model's answer is not a chat completion ({exc}): "
            f"{_excerpt(json.dumps(document, default=str))}"
        ) from None
    return ModelReply(content, calls, message)


def _call(raw: Any) -> RequestedCall:
    function = raw["function"]
    arguments = function.get("arguments")
    if arguments is None:
        arguments = "{}"
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return RequestedCall(str(raw.get("id") or ""), str(function["name"]), arguments)


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
