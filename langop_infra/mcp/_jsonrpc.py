"""JSON-RPC 2.0 messages: build them, decode them, match responses to requests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from itertools import chain
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.mcp._errors import InvalidInput, JSONRPCError, MalformedResponse, MCPError

Message = dict[str, Any]

METHOD_NOT_FOUND = -32601
# Levels of objects and arrays a message may nest: the package's one JSON reader's limit.
MAX_DEPTH = _json.MAX_DEPTH


def request(request_id: int, method: str, params: dict[str, object] | None = None) -> Message:
    """A request message; ``params`` is omitted when ``None``."""
    return {"jsonrpc": "2.0", "id": request_id, **notification(method, params)}


def notification(method: str, params: dict[str, object] | None = None) -> Message:
    """A notification message (no id, no response); ``params`` is omitted when ``None``."""
    message: Message = {"jsonrpc": "2.0", "method": method}
    return message if params is None else {**message, "params": params}


def encode(message: Message) -> bytes:
    """Compact UTF-8 JSON, as sent on the wire; :class:`InvalidInput` if it cannot be."""
    try:
        return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError, RecursionError) as exc:
        raise InvalidInput(
            f"cannot send {message.get('method', 'a message')}: its parameters are not "
            f"JSON-serializable ({exc}); pass plain dicts, lists, strings and numbers"
        ) from None


def decode(data: bytes | str, *, source: str) -> list[Message]:
    """The JSON-RPC messages in ``data`` (one object or a batch array).

    Raises :class:`MalformedResponse` naming ``source`` when it is not JSON or not objects.
    """
    try:
        # The transport caps the size (ClientOptions.max_response_bytes); depth is ours.
        payload = _json.read(data, max_bytes=max(len(data), _json.MAX_BYTES))
    except _json.JSONTooDeep:
        raise too_deep(source) from None
    except ValueError:
        raise MalformedResponse(
            f"{source} sent a body that is not JSON ({preview(data)}): "
            "it is not an MCP endpoint or it is broken; check the URL and the server's logs",
            target=source,
        ) from None
    messages = cast("list[object]", payload) if isinstance(payload, list) else [payload]
    if not messages or not all(isinstance(m, dict) for m in messages):
        raise MalformedResponse(
            f"{source} sent JSON that is not a JSON-RPC message ({preview(data)}); "
            "check that the URL is an MCP endpoint",
            target=source,
        )
    return cast("list[Message]", messages)


def too_deep(source: str) -> MalformedResponse:
    """The error for a message nested over :data:`MAX_DEPTH` levels."""
    return MalformedResponse(
        f"{source} sent JSON nested more than {MAX_DEPTH} levels deep; refusing it (a tool "
        "schema needs far fewer): the server is broken or hostile",
        target=source,
    )


def preview(data: bytes | str, limit: int = 80) -> str:
    """The start of ``data`` on one line, for error messages."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    if not text:
        return "empty body"
    return repr(text if len(text) <= limit else text[:limit] + "...")


def nested_over(message: Message, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed ``message`` nests more than ``limit`` objects and arrays: level by
    level, no recursion (cheaper than :func:`langop_infra._json.depth_over` on the text)."""
    level: list[Any] = [message]
    for _ in range(limit):
        items: Iterator[Any] = chain.from_iterable(
            cast("dict[str, Any]", v).values() if isinstance(v, dict) else v for v in level
        )
        level = [item for item in items if isinstance(item, dict | list)]
        if not level:
            return False
    return True


def is_response_to(message: Message, request_id: object) -> bool:
    """True for the response (result or error) to request ``request_id``."""
    return message.get("id") == request_id and ("result" in message or "error" in message)


def answer_to(server_request: Message) -> Message:
    """Our answer to a server->client request: pong to ``ping``, method-not-found otherwise.

    The client declares no capabilities, so sampling, roots and elicitation are refused at
    once: a server waiting for them gets an error to act on instead of waiting forever.
    """
    method, key = server_request.get("method"), server_request["id"]
    if method == "ping":
        return {"jsonrpc": "2.0", "id": key, "result": {}}
    shown = method if isinstance(method, str) else "this method"
    text = f"Method not found: this client does not support {shown[:100]}"
    return {"jsonrpc": "2.0", "id": key, "error": {"code": METHOD_NOT_FOUND, "message": text}}


def result_of(response: Message, *, method: str, source: str) -> dict[str, Any]:
    """The ``result`` object of ``response``, or the JSON-RPC error it carries, raised."""
    if "error" in response:
        given = response["error"]
        if not isinstance(given, dict):
            raise MalformedResponse(
                f"{source} answered {method} with an invalid error object {preview(str(given))}",
                target=source,
            )
        error = cast("dict[str, Any]", given)
        code = error["code"] if isinstance(error.get("code"), int) else 0
        text = str(error["message"]) if error.get("message") is not None else "(no message)"
        raise JSONRPCError(
            f"{source} answered {method} with JSON-RPC error {code}: {text}",
            code=code,
            message=text,
            data=error.get("data"),
            target=source,
        )
    result = response.get("result")
    if not isinstance(result, dict):
        raise MalformedResponse(
            f"{source} answered {method} with a result that is not an object "
            f"({preview(json.dumps(result))}); the server does not follow MCP",
            target=source,
        )
    return cast("Message", result)


class PendingRequests:
    """Futures of requests awaiting the responses a reader task delivers, by request id."""

    def __init__(self) -> None:
        self._futures: dict[object, asyncio.Future[Message]] = {}
        self._failure: MCPError | None = None

    async def answer(self, request_id: int, send: Callable[[], Awaitable[None]]) -> Message:
        """The response to ``request_id``, sent by ``send`` (unless all requests fail)."""
        future: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        if self._failure is not None:
            future.set_exception(self._failure)
        else:
            self._futures[request_id] = future
        try:
            if not future.done():
                await send()
            return await future
        finally:
            self._futures.pop(request_id, None)

    def deliver(self, message: Message) -> bool:
        """Resolve the future this response belongs to; False if it belongs to none."""
        key = message.get("id")
        if not isinstance(key, int) or not is_response_to(message, key):
            return False
        future = self._futures.pop(key, None)
        if future is not None and not future.done():
            future.set_result(message)
        return future is not None

    def fail(self, request_id: object, error: MCPError) -> None:
        """Fail the request ``request_id`` with ``error``."""
        future = self._futures.get(request_id)
        if future is not None and not future.done():
            future.set_exception(error)

    def fail_all(self, error: MCPError, *, later: bool = True) -> None:
        """Fail every waiting request with ``error``, and (``later``) every later one."""
        if later and self._failure is None:
            self._failure = error
        for key in list(self._futures):
            self.fail(key, error)
        self._futures.clear()
