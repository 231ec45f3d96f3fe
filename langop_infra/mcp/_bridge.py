"""The httpx2 transport the official SDK's HTTP client sends through.

The SDK speaks MCP over ``httpx2``; every request it makes goes through our
:class:`~langop_infra.mcp._http.HTTPConnection` instead (one ``httpx2.AsyncClient``): proxy
confinement, same-origin redirects, connect retries, TLS, ``auth=``, decoding caps. Every
body handed back is capped at ``max_response_bytes`` and counted; a JSON answer is parsed
once, here, and handed to its waiter. The SDK turns HTTP failures into bare JSON-RPC errors;
the bridge keeps our actionable error for each, by request id, for
:mod:`langop_infra.mcp._sdk_transport` to raise instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2
import mcp_types

import langop_infra.mcp._confinement as confinement
import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._errors import (
    ConfinementError,
    ConnectionLost,
    MalformedResponse,
    MCPError,
    SessionExpired,
)
from langop_infra.mcp._http import (
    ERROR_BODY_BYTES,
    HTTPConnection,
    display_url,
    error_body,
    http_failure,
    json_object,
    origin,
    status_failure,
    too_large,
)
from langop_infra.mcp._jsonrpc import Message

_RESUME_ATTEMPTS = 2  # resumptions from one event id that bring nothing new
# Headers httpx2 sets for itself; ours come from the httpx client.
_DROPPED = frozenset(
    {"host", "content-length", "accept-encoding", "connection", "user-agent", "transfer-encoding"}
)
_DECODED = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def _stand_in(key: object) -> bytes:
    """What the SDK resolves request ``key`` with when we answer it ourselves: an error it
    hands on, which comes too late or is replaced by ours (see ``_sdk_transport._SDK_MADE``)."""
    error = {"code": -32700, "message": "Failed to parse: the client raises its own error"}
    return jsonrpc.encode({"jsonrpc": "2.0", "id": key, "error": error})


def _kept(response: httpx2.Response) -> list[tuple[str, str]]:
    """The headers of ``response`` that still hold once httpx2 has decoded its body."""
    return [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DECODED]


class Bridge(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport over an :class:`HTTPConnection`, for one session."""

    def __init__(self, http: HTTPConnection, label: str, *, listen: bool) -> None:
        self.http = http
        self.label = label
        self.listen = listen
        self.session_id: str | None = None
        self.listening = False
        self.pending = jsonrpc.PendingRequests()  # the session's requests awaiting answers
        # Why a request got no answer, by JSON-RPC request id, for when the SDK gives up on
        # it; ``stream``: the last failure of a GET or DELETE.
        self.failures: dict[object, MCPError] = {}
        self.stream: MCPError | None = None
        self.resume_refused: MCPError | None = None
        # Our answers to the server's requests, by id: set once their POST is done.
        self.answers: dict[object, asyncio.Event] = {}
        # Our notifications, in the order the SDK posts them: set once posted.
        self.notified: list[asyncio.Event] = []
        self.failed = asyncio.Event()  # set with ``stream``
        self._resumes: dict[str, int] = {}  # resumptions by Last-Event-ID
        self.events = False  # cap each event of a stream, not the stream (legacy SSE)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        sent = json_object(body) if body else None
        key, method = (sent or {}).get("id"), (sent or {}).get("method")
        method = method if isinstance(method, str) else None
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
        if resuming:  # the SDK would resume for ever from an event id that brings nothing new
            last = request.headers["last-event-id"]
            self._resumes[last] = self._resumes.get(last, 0) + 1
            if self._resumes[last] > _RESUME_ATTEMPTS:
                return httpx2.Response(503, request=request)  # the SDK then gives up on it
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _DROPPED}
        try:
            response = await self.http.send(
                request.method, str(request.url), headers=headers, content=body or None, what=what
            )
        except MCPError as exc:
            # Raised into the SDK, it would end the whole transport; a stand-in answer
            # fails only this request (and a stream or DELETE the SDK gives up on).
            self.record(key, exc)
            return self._instead(key, request)
        if method == "initialize" and response.status_code < 400:
            self.session_id = response.headers.get("mcp-session-id") or None
        if response.status_code >= 400:
            return await self._failed(request, response, key, what)
        is_json = "json" in response.headers.get("content-type", "")
        if method and key is not None and is_json and not self.events:
            return await self._json_answer(request, response, key, method)
        listening = method == "subscriptions/listen" or (request.method == "GET" and not resuming)
        stream = _Capped(self, response, key, what, listening=listening)
        if "event-stream" in response.headers.get("content-type", "") and not listening:
            # Resumed at once, as our own client did: the SDK waits a second by default.
            stream.prefix = b"" if self.events else b"retry: 0\n"
        return httpx2.Response(
            response.status_code, headers=_kept(response), stream=stream, request=request
        )

    async def _failed(
        self, request: httpx2.Request, response: httpx2.Response, key: object, what: str
    ) -> httpx2.Response:
        content, status = await error_body(response), response.status_code
        resuming = "last-event-id" in request.headers
        error: MCPError = status_failure(response, content, what)
        if status == 404 and request.headers.get("mcp-session-id"):
            error = SessionExpired(
                f"{self.label} no longer knows our session (HTTP 404 to {what}); "
                "it restarted or expired the session: connect again",
                status=404,
                target=self.label,
            )
        if resuming and not isinstance(error, SessionExpired):
            self.resume_refused = error
        answer = httpx2.Response(status, headers=_kept(response), content=content, request=request)
        if key is None and request.method == "GET" and not resuming and not self.events:
            return answer  # a server without a GET stream says so (405): no failure of ours
        always = status in (401, 403) or status >= 500 or isinstance(error, SessionExpired)
        carried = _carries_error(content, response.headers.get("content-type", ""))
        if key is None or always or not carried:
            self.record(key, error)
        return answer

    async def _json_answer(
        self, request: httpx2.Request, response: httpx2.Response, key: object, method: str
    ) -> httpx2.Response:
        """A JSON answer read whole (capped) and parsed once, as the SDK would: its waiter
        gets it when the SDK reads the body (a stand-in), that is once the SDK has seen the
        headers. No JSON-RPC answer to ``key``: the waiter gets our error; one only the
        SDK's parser refuses: the SDK gets the body and says why."""
        content: bytes | AsyncIterator[bytes] = _stand_in(key)
        try:
            body = await self.http.read_body(response, method)
            answer = self._answer(body, key, method)
        except MCPError as exc:
            self.record(key, exc)
        else:
            content = body if answer is None else self._deliver(answer, content)
        return httpx2.Response(
            response.status_code, headers=_kept(response), content=content, request=request
        )

    async def _deliver(self, answer: Message, stand_in: bytes) -> AsyncIterator[bytes]:
        self.pending.deliver(answer)
        yield stand_in

    def _answer(self, body: bytes, key: object, method: str) -> Message | None:
        """The answer to ``key`` in ``body``; None if only the SDK's parser refuses it."""
        try:
            parsed = mcp_types.jsonrpc_message_adapter.validate_json(body, by_name=False)
        except ValueError:
            parsed = None
        answer: Message = {}
        if isinstance(parsed, mcp_types.JSONRPCResponse | mcp_types.JSONRPCError):
            answer = parsed.model_dump(by_alias=True, mode="json", exclude_unset=True)
        if jsonrpc.is_response_to(answer, key) and not jsonrpc.nested_over(answer):
            return answer
        messages = jsonrpc.decode(body, source=self.label)  # not JSON, too deep, not objects
        if parsed is None and any(jsonrpc.is_response_to(m, key) for m in messages):
            return None
        raise MalformedResponse(
            f"{self.label} answered {method} without a JSON-RPC response to it "
            f"({jsonrpc.preview(body)}); the server does not follow MCP",
            target=self.label,
        )

    def saw(self, url: httpx2.URL, chunk: bytes) -> MCPError | None:
        """A chunk of an event stream read; the error that ends it, if any (legacy SSE
        checks its endpoint event)."""
        return None

    def _instead(self, key: object, request: httpx2.Request) -> httpx2.Response:
        """What the SDK gets for a request that failed on our side."""
        if key is None:
            return httpx2.Response(502, request=request)
        headers = {"content-type": "application/json"}
        return httpx2.Response(200, headers=headers, content=_stand_in(key), request=request)

    def record(self, key: object, error: MCPError) -> None:
        """Keep ``error`` for request ``key`` (None: the stream's or the DELETE's)."""
        if key is None:
            self.stream = error
            self.failed.set()
        else:
            self.failures[key] = error


class _Capped(httpx2.AsyncByteStream):
    """A response body read through, counted, and cut at ``max_response_bytes``."""

    def __init__(
        self, bridge: Bridge, response: httpx2.Response, key: object, what: str, *, listening: bool
    ) -> None:
        self._bridge = bridge
        self._response = response
        self._key = key
        self._what = what
        self._listening = listening
        self._chunks = response.aiter_bytes()
        self.prefix = b""  # bytes handed on before the body's own

    async def __aiter__(self) -> AsyncIterator[bytes]:
        bridge, events, url = self._bridge, self._bridge.events, self._response.request.url
        limit, received, bom = bridge.http.options.max_response_bytes, 0, LeadingBOM()
        bridge.listening = self._listening or bridge.listening
        if self.prefix:
            yield self.prefix
        try:
            async for raw in self._chunks:
                chunk = bom.feed(raw)
                bridge.http.received += len(raw)
                refused = bridge.saw(url, chunk) if events else None
                if refused is not None:
                    raise refused  # before the SDK reads the event (and logs it whole)
                received = _event_bytes(received, chunk) if events else received + len(chunk)
                if received > limit and (events or not self._listening):
                    what = "one event of the stream" if events else self._what
                    error = too_large(url, what, limit, received, self._response)
                    bridge.record(self._key, error)
                    raise error
                yield chunk
        except httpx2.HTTPError as exc:
            error = http_failure(exc, url, self._what)
            if not self._listening:
                bridge.record(self._key, error)
            raise error from None
        finally:
            if self._listening:
                bridge.listening = False

    async def aclose(self) -> None:
        # Shielded: the SDK closes a body when it aborts a request (a cancelled call at
        # 2026-07-28), inside a cancelled scope; unshielded, the close itself is cancelled
        # and the pooled connection stays taken for good (a burst then wedges the server).
        with anyio.CancelScope(shield=True):
            # Read to its end (briefly), the connection serves the next request.
            await self._bridge.http.discard(self._response, self._chunks)


class LeadingBOM:
    """Drops a UTF-8 byte order mark at the start of a stream, split or not: the WHATWG
    rules strip it, httpx2's event parser does not (and loses the first event)."""

    def __init__(self) -> None:
        self._head: bytearray | None = bytearray()

    def feed(self, chunk: bytes) -> bytes:
        """``chunk`` as it continues the stream, the mark left out."""
        if self._head is None:
            return chunk
        self._head += chunk
        if len(self._head) < 3 and _BOM.startswith(bytes(self._head)):
            return b""  # too short to tell yet
        head, self._head = bytes(self._head), None
        return head[3:] if head.startswith(_BOM) else head


_BOM = b"\xef\xbb\xbf"


def _event_bytes(before: int, chunk: bytes) -> int:
    """Bytes of the event still open after ``chunk`` (events end with a blank line)."""
    end = max(chunk.rfind(sep) for sep in (b"\n\n", b"\r\n\r\n", b"\r\r"))
    return before + len(chunk) if end < 0 else len(chunk) - end - 2


def _what(request: httpx2.Request, method: str | None) -> str:
    if method:
        return method
    if request.method == "DELETE":
        return "ending the session"
    if "last-event-id" in request.headers:
        return "resuming the stream"
    return "the server's stream" if request.method == "GET" else "a response"


def _carries_error(body: bytes, content_type: str) -> bool:
    """Whether a 4xx body is a JSON-RPC error (to our reader and the SDK's alike), which the
    SDK hands back as the answer."""
    if not content_type.lower().startswith("application/json") or json_object(body) is None:
        return False
    try:
        message = mcp_types.jsonrpc_message_adapter.validate_json(body, by_name=False)
    except ValueError:
        return False
    return isinstance(message, mcp_types.JSONRPCError)


class LegacyBridge(Bridge):
    """The bridge under the SDK's legacy HTTP+SSE client, which drops a message whose POST
    fails and stops posting: a failed POST fails its request at once, and the SDK is told it
    was accepted."""

    def __init__(self, http: HTTPConnection, label: str, url: str) -> None:
        super().__init__(http, label, listen=True)
        self.events = True
        self.url = url  # as the SDK's client has it
        self._opening: bytearray | None = bytearray()  # until the endpoint event

    def saw(self, url: httpx2.URL, chunk: bytes) -> MCPError | None:
        if self._opening is None:
            return None
        self._opening += chunk
        text = self._opening.decode("utf-8", "replace").replace("\r\n", "\n")
        for event in text.split("\n\n")[:-1]:
            fields = {k: v for k, _, v in (line.partition(":") for line in event.split("\n"))}
            if fields.get("event", "").strip() != "endpoint":
                continue
            self._opening = None
            refused = self._refusal(url, fields.get("data", "").strip())
            if refused is not None:
                self.record(None, refused)
            return refused
        if len(self._opening) > ERROR_BODY_BYTES:
            self._opening = None
        return None

    def _refusal(self, url: httpx2.URL, data: str) -> ConnectionLost | None:
        """Why the endpoint ``data`` is refused: another origin or no URL; or the same origin
        written unlike the URL (user info, letter case, a default port), which the SDK's
        client refuses too, and then waits for ever instead of failing."""
        try:
            endpoint = url.join(data)
            # Scheme and netloc, as the SDK compares them.
            exact = urlsplit(urljoin(self.url, data))[:2] == urlsplit(self.url)[:2]
        except (httpx2.InvalidURL, ValueError):
            endpoint, exact = None, False
        if endpoint is None or origin(endpoint) != origin(url):
            shown = display_url(endpoint) if endpoint is not None else "an invalid URL"
            return ConnectionLost(
                f"{self.label} announced a message endpoint on another host or an invalid "
                f"one ({shown}); refusing to send requests there",
                target=self.label,
            )
        if exact:
            return None
        return ConnectionLost(
            f"{self.label} announced its message endpoint as {display_url(endpoint)} with user "
            "info, letter case or a port that the URL does not have; the MCP SDK's legacy "
            "client posts only to the host and port exactly as the URL writes them: the server "
            "should announce a relative path",
            target=self.label,
        )

    def record(self, key: object, error: MCPError) -> None:
        super().record(key, error)
        if key is not None:
            self.pending.fail(key, error)

    def _instead(self, key: object, request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(202 if request.method == "POST" else 502, request=request)

    async def _handle(
        self, request: httpx2.Request, body: bytes, key: object, method: str | None
    ) -> httpx2.Response:
        confine = self.http.options.confine_to
        if request.method == "POST" and confine is not None:
            reason = confinement.outside_reason(str(request.url), confine)
            if reason:
                error = ConfinementError(
                    f"{self.label} announced a message endpoint {display_url(str(request.url))} "
                    f"outside {confine} ({reason}); refusing to send requests there: a client "
                    "confined to that prefix sends its credentials nowhere else",
                    target=self.label,
                )
                self.record(key, error)
                self.record(None, error)
                return self._instead(key, request)
        response = await super()._handle(request, body, key, method)
        if request.method == "POST" and response.status_code >= 300:
            return self._instead(key, request)
        kind = response.headers.get("content-type", "")
        if request.method == "GET" and response.status_code == 200 and "event-stream" not in kind:
            shown = kind or "no content type"
            error = ConnectionLost(
                f"{self.label} did not open an event stream (HTTP 200, {shown}); it is not "
                "a legacy SSE endpoint: try --transport streamable-http",
                target=self.label,
            )
            self.record(None, error)
        return response
