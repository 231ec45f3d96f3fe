"""The model, reached through ``MODEL_ENDPOINT``: an OpenAI-compatible chat completions API
(the LiteLLM gateway, or a provider directly), called with httpx.

:meth:`ChatModel.complete` returns the assistant's message (text and tool calls) or raises
:class:`ModelError` with a message fit for an answer: the model is down, answered with an
HTTP error, or answered something that is not a chat completion.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import httpx

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.agent import _retry
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.core._redact import Scrubber
from langop_infra.mcp._http import display_url

__all__ = ["ChatModel", "ModelError", "ModelReply", "RequestedCall"]

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
ERROR_LIMIT = 600  # characters of a model error an answer shows
ERROR_BODY_BYTES = 16 * 1024  # of an error answer, enough for its message


class ModelError(LangopError):
    """The model could not give a usable answer."""


class _Retriable(ModelError):
    """A failure worth asking again for (429, 5xx, a broken connection)."""

    def __init__(self, message: str, asked: float | None = None) -> None:
        super().__init__(message)
        self.asked = asked  # seconds the model's Retry-After asked for


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
        *,
        max_retries: int = _retry.MAX_RETRIES,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
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
        self.timeout, self.max_retries, self._sleep = timeout, max_retries, sleep
        self.retry_delays: list[float] = []  # the backoff actually waited (for observers)

    async def complete(
        self,
        messages: Sequence[Mapping[str, object]],
        tools: Sequence[Mapping[str, object]],
        deadline: float | None = None,
    ) -> ModelReply:
        """The model's reply; a 429, 5xx or broken connection is asked again (up to
        ``max_retries`` times, after :func:`~langop_infra.agent._retry.retry_delay`) unless
        the wait would pass ``deadline`` (the event loop's clock)."""
        body: dict[str, object] = {"model": self.model, "messages": list(messages)}
        if tools:
            body["tools"] = list(tools)
        try:
            return await self._retried(body, deadline)
        except ModelError as exc:
            raise ModelError(self.scrubber.line(exc, ERROR_LIMIT)) from None

    async def _retried(self, body: dict[str, object], deadline: float | None) -> ModelReply:
        clock = asyncio.get_running_loop().time
        for attempt in itertools.count():
            try:
                return await self._counted(body, deadline)
            except _Retriable as exc:
                delay = _retry.retry_delay(attempt, exc.asked)
                if attempt >= self.max_retries:
                    raise ModelError(f"{exc} (gave up after {attempt + 1} attempts)") from None
                if deadline is not None and clock() + delay >= deadline:
                    raise ModelError(
                        f"{exc} (no retry: it would pass the turn's deadline)"
                    ) from None
                self.retry_delays.append(delay)
                await self._sleep(delay)
        raise AssertionError("unreachable")  # itertools.count() never ends

    async def _counted(self, body: dict[str, object], deadline: float | None) -> ModelReply:
        """One request, counted and timed in the metrics."""
        started = time.perf_counter()
        try:
            reply = await self._post(body, deadline)
        except ModelError:
            self._metrics.model_requests.labels("error").inc()
            raise
        finally:
            self._metrics.model_seconds.observe(time.perf_counter() - started)
        self._metrics.model_requests.labels("ok").inc()
        return reply

    async def _post(self, body: dict[str, object], deadline: float | None) -> ModelReply:
        timeout = self.timeout
        if deadline is not None:
            timeout = max(0.001, min(timeout, deadline - asyncio.get_running_loop().time()))
        try:
            status, retry_after, content = await self._read(body, timeout)
        except httpx.HTTPError as exc:
            problem = f"the model at {self.shown} cannot be reached: {type(exc).__name__}: {exc}"
            raise (
                _Retriable(problem) if _retry.retriable(error=exc) else ModelError(problem)
            ) from None
        if status >= 400:
            problem = (
                f"the model at {self.shown} answered HTTP {status}: {_excerpt(_text(content))}"
            )
            if _retry.retriable(status):
                raise _Retriable(problem, _retry.retry_after(retry_after, time.time()))
            raise ModelError(problem)
        try:
            document: object = _json.read(content)
        except ValueError:
            raise ModelError(
                f"the model answered something that is not JSON: {_excerpt(_text(content))}"
            ) from None
        return parse_reply(document)

    async def _read(self, body: dict[str, object], timeout: float) -> tuple[int, str | None, bytes]:
        """The status, the Retry-After header and the body, read (decoded) no further than its
        cap: an error body's :data:`ERROR_BODY_BYTES`, an answer's :data:`MAX_RESPONSE_BYTES`
        (over it, an error)."""
        request = self._client.build_request(
            "POST", self.url, json=body, headers=self._headers, timeout=timeout
        )
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
            retry_after = response.headers.get("retry-after")
            return response.status_code, retry_after, b"".join(chunks)[:limit]
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


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _text(content: bytes) -> str:
    return content.decode("utf-8", errors="replace")
