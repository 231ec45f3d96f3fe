"""The httpx2 transport the official SDK's HTTP client sends through.

The SDK speaks MCP over ``httpx2``; every request it makes goes through our
:class:`~langop_infra.mcp._http.HTTPConnection` instead (one ``httpx.AsyncClient``): proxy
confinement, same-origin redirects, connect retries, TLS, ``auth=``, decoding caps. Every
body handed back is capped at ``max_response_bytes`` and counted. The SDK turns HTTP
failures into bare JSON-RPC errors; the bridge keeps our actionable error for each, by
request id, for :mod:`langop_infra.mcp._sdk_transport` to raise instead.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import httpx2

import langop_infra._json as _json
import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._errors import MalformedResponse, MCPError, SessionExpired
from langop_infra.mcp._http import HTTPConnection, http_failure, status_failure, too_large

_ERROR_BODY_BYTES = 16 * 1024
# Headers httpx2 sets for itself; ours come from the httpx client.
_DROPPED = frozenset(
    {"host", "content-length", "accept-encoding", "connection", "user-agent", "transfer-encoding"}
)


def _stand_in_body(key: object) -> bytes:
    """What the SDK resolves a request with when our error says more (see
    ``_sdk_transport._SDK_MADE``)."""
    error = {"code": -32700, "message": "Failed to parse: the client raises its own error"}
    return json.dumps({"jsonrpc": "2.0", "id": key, "error": error}).encode()


def _stand_in(key: object, request: httpx2.Request) -> httpx2.Response:
    headers = {"content-type": "application/json"}
    return httpx2.Response(200, headers=headers, content=_stand_in_body(key), request=request)


_DECODED = frozenset({"content-encoding", "content-length", "transfer-encoding"})


class Failure:
    """An HTTP failure the SDK saw as a JSON-RPC error; ``always``: raise it even when the
    body carried a JSON-RPC error (401, 403, 5xx, an expired session)."""

    def __init__(self, error: MCPError, *, always: bool) -> None:
        self.error = error
        self.always = always


class Bridge(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport over an :class:`HTTPConnection`, for one session."""

    def __init__(self, http: HTTPConnection, label: str, *, listen: bool) -> None:
        self.http = http
        self.label = label
        self.listen = listen
        self.session_id: str | None = None
        self.listening = False
        # By JSON-RPC request id; ``stream``: the last failure of a GET or DELETE.
        self.failures: dict[object, Failure] = {}
        self.stream: MCPError | None = None
        self.resume_refused: MCPError | None = None
        self._version: str | None = None
        # Our answers to the server's requests, by id: set once their POST is done.
        self.answers: dict[object, asyncio.Event] = {}
        # Our notifications, in the order the SDK posts them: set once posted.
        self.notified: list[asyncio.Event] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        key, method = _identify(body)
        try:
            return await self._handle(request, body, key, method)
        finally:
            if method is None:
                answered = self.answers.pop(key, None)
            else:
                answered = self.notified.pop(0) if key is None and self.notified else None
            if answered is not None:
                answered.set()

    async def _handle(
        self, request: httpx2.Request, body: bytes, key: object, method: str | None
    ) -> httpx2.Response:
        what = _what(request, method)
        resuming = "last-event-id" in request.headers
        if request.method == "GET" and not resuming and not self.listen:
            return httpx2.Response(405, request=request)  # we do not want the server's stream
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROPPED}
        self._version = request.headers.get("mcp-protocol-version", self._version)
        if request.method == "DELETE" and self._version:  # the SDK forgets it there
            headers.setdefault("MCP-Protocol-Version", self._version)
        try:
            response = await self.http.send(
                request.method, str(request.url), headers=headers, content=body or None, what=what
            )
        except MCPError as exc:
            # Raised into the SDK, it would end the whole transport; a stand-in answer
            # fails only this request (and a stream or DELETE the SDK gives up on).
            self._record(key, Failure(exc, always=True))
            if key is None:
                return httpx2.Response(502, request=request)
            return _stand_in(key, request)
        if method == "initialize" and response.status_code < 400:
            self.session_id = response.headers.get("mcp-session-id") or None
        if response.status_code >= 400:
            return await self._failed(request, response, key, what, resuming=resuming)
        kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DECODED]
        if method and key is not None and "json" in response.headers.get("content-type", ""):
            content = await self._checked_json(response, key, method)
            return httpx2.Response(
                response.status_code, headers=kept, content=content, request=request
            )
        listening = method == "subscriptions/listen" or (request.method == "GET" and not resuming)
        stream = _Capped(self, response, key, what, listening=listening)
        return httpx2.Response(response.status_code, headers=kept, stream=stream, request=request)

    async def _failed(
        self,
        request: httpx2.Request,
        response: httpx.Response,
        key: object,
        what: str,
        *,
        resuming: bool,
    ) -> httpx2.Response:
        body = bytearray()
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) >= _ERROR_BODY_BYTES:
                    break
        except httpx.HTTPError:
            pass  # the status says enough
        finally:
            await response.aclose()
        content = bytes(body[:_ERROR_BODY_BYTES])
        status = response.status_code
        error: MCPError = status_failure(response, content, what)
        sent_session = request.headers.get("mcp-session-id")
        if status == 404 and sent_session:
            error = SessionExpired(
                f"{self.label} no longer knows our session (HTTP 404 to {what}); "
                "it restarted or expired the session: connect again",
                status=404,
                target=self.label,
            )
        if resuming and not isinstance(error, SessionExpired):
            self.resume_refused = error
        always = status in (401, 403) or status >= 500 or isinstance(error, SessionExpired)
        always = always or not _carries_error(content, response.headers.get("content-type", ""))
        self._record(key, Failure(error, always=always))
        kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DECODED]
        return httpx2.Response(status, headers=kept, content=content, request=request)

    async def _checked_json(self, response: httpx.Response, key: object, method: str) -> bytes:
        """A JSON body read whole (capped), or a stand-in error when it is not a JSON-RPC
        answer to ``key``: the SDK then resolves the request, and we raise our error."""
        try:
            body = await self.http.read_body(response, method)
            answers = jsonrpc.decode(body, source=self.label)
        except MCPError as exc:
            self._record(key, Failure(exc, always=True))
            return _stand_in_body(key)
        if any(jsonrpc.is_response_to(a, key) for a in answers):  # type: ignore[arg-type]
            return body
        self._record(
            key,
            Failure(
                MalformedResponse(
                    f"{self.label} answered {method} without a JSON-RPC response to it "
                    f"({jsonrpc.preview(body)}); the server does not follow MCP",
                    target=self.label,
                ),
                always=True,
            ),
        )
        return _stand_in_body(key)

    def _record(self, key: object, failure: Failure) -> None:
        if key is None:
            self.stream = failure.error
        else:
            self.failures[key] = failure

    async def aclose(self) -> None:
        """The HTTP connection is the session's to close."""


class _Capped(httpx2.AsyncByteStream):
    """A response body read through, counted, and cut at ``max_response_bytes``."""

    def __init__(
        self, bridge: Bridge, response: httpx.Response, key: object, what: str, *, listening: bool
    ) -> None:
        self._bridge = bridge
        self._response = response
        self._key = key
        self._what = what
        self._listening = listening
        self._chunks = response.aiter_bytes()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        http, limit = self._bridge.http, self._bridge.http.options.max_response_bytes
        received = 0
        self._bridge.listening = self._listening or self._bridge.listening
        try:
            async for chunk in self._chunks:
                received += len(chunk)
                http.received += len(chunk)
                if received > limit and not self._listening:
                    url = self._response.request.url
                    error = too_large(url, self._what, limit, received, self._response)
                    self._bridge._record(self._key, Failure(error, always=True))
                    raise error
                yield chunk
        except httpx.HTTPError as exc:
            error = http_failure(exc, self._response.request.url, self._what)
            if self._listening:
                raise error from None
            self._bridge._record(self._key, Failure(error, always=True))
            raise error from None
        finally:
            if self._listening:
                self._bridge.listening = False

    async def aclose(self) -> None:
        # Read to its end (briefly), the connection serves the next request.
        await self._bridge.http.discard(self._response, self._chunks)


def _identify(body: bytes) -> tuple[object, str | None]:
    """The JSON-RPC id and method of a request body (None, None for anything else)."""
    if not body:
        return None, None
    try:
        message: Any = _json.read(body)
    except ValueError:
        return None, None
    if not isinstance(message, dict):
        return None, None
    method = message.get("method")
    return message.get("id"), method if isinstance(method, str) else None


def _what(request: httpx2.Request, method: str | None) -> str:
    if method:
        return method
    if request.method == "DELETE":
        return "ending the session"
    if "last-event-id" in request.headers:
        return "resuming the stream"
    return "the server's stream" if request.method == "GET" else "a response"


def _carries_error(body: bytes, content_type: str) -> bool:
    """Whether a 4xx body is a JSON-RPC error the SDK hands back as the answer."""
    if not content_type.lower().startswith("application/json"):
        return False
    try:
        message: Any = _json.read(body)
    except ValueError:
        return False
    return isinstance(message, dict) and isinstance(message.get("error"), dict)
