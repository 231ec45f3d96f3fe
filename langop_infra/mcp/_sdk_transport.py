"""A :class:`~langop_infra.mcp._session.Transport` over one of the official SDK's transports.

The SDK's transport (``streamable_http_client``, or ``sse_client`` for legacy HTTP+SSE) runs
in a task of its own, so that its task groups are entered and left by one task whatever task
the session is used from; we send on its write stream and match what its read stream brings
by request id. The SDK resolves a request it cannot answer with a JSON-RPC error of its own
making; when the :class:`~langop_infra.mcp._bridge.Bridge` saw why, that error is raised
instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import httpx2
import mcp_types
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import ClientMessageMetadata, SessionMessage
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

import langop_infra.mcp._jsonrpc as jsonrpc
from langop_infra.mcp._bridge import Bridge, LegacyBridge
from langop_infra.mcp._errors import (
    ConfinementError,
    ConnectionLost,
    HTTPStatusError,
    InvalidInput,
    MalformedResponse,
    MCPError,
    MCPTimeout,
)
from langop_infra.mcp._http import HTTPConnection
from langop_infra.mcp._jsonrpc import Message
from langop_infra.mcp._timeouts import timeout_after

_CLOSE_SECONDS = 2.0
_SSE_MARGIN = 64 * 1024
# The SDK's own stand-ins for an answer that never came, by code and message start (those
# for a status >= 400 or a redirect come with the bridge's error, raised first).
_SDK_MADE = (  # -32000 is also any server's own generic error: matched by the SDK's words
    (mcp_types.CONNECTION_CLOSED, "SSE stream "),  # failed: ..., ended without a response, ...
    (mcp_types.CONNECTION_CLOSED, "Connection closed"),
    (mcp_types.PARSE_ERROR, "Failed to parse"),
    (mcp_types.INVALID_REQUEST, "server answered a request with 202"),
    (mcp_types.INVALID_REQUEST, "Unexpected content type"),
)


class SDKTransport:
    """Our request/notify transport over an SDK transport's message streams."""

    def __init__(self, name: str, url: str, bridge: Bridge) -> None:
        self.name = name
        self.label = bridge.label
        self.protocol_version: str | None = None
        self.on_notification: Callable[[Message], None] | None = None
        self._url = url
        self._bridge = bridge
        self._pending = bridge.pending
        self._write: Any = None
        self._error: MCPError | None = None
        self._runner: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Future[None]] = set()

    @property
    def session_id(self) -> str | None:
        """The server's ``Mcp-Session-Id``, if it gave one."""
        return self._bridge.session_id

    @property
    def listening(self) -> bool:
        """True while the server's GET stream is open."""
        return self._bridge.listening

    @property
    def received_bytes(self) -> int:
        """Bytes of response bodies read so far (what a listing's total cap counts)."""
        return self._bridge.http.received

    async def start(self) -> None:
        """Open the SDK transport (for legacy SSE: until its endpoint event)."""
        if self._runner is not None and self._closing.is_set():  # a session being reset
            with suppress(Exception):
                await self._runner
        if self._runner is None or self._runner.done():
            self._closing, self._ready, self._error = asyncio.Event(), asyncio.Event(), None
            self._runner = asyncio.create_task(self._run())
        if self.name != "sse":
            await self._ready.wait()
        else:
            await self._endpoint()
        if self._error is not None:
            raise self._error

    async def _endpoint(self) -> None:
        seconds = self._bridge.http.options.timeout
        waits = [asyncio.ensure_future(e.wait()) for e in (self._ready, self._bridge.failed)]
        try:
            async with timeout_after(seconds):
                await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            await self.aclose()
            raise MCPTimeout(
                f"{self.label} opened an event stream but sent no endpoint event within "
                f"{seconds:g}s; it is not a legacy SSE endpoint: try --transport streamable-http",
                target=self.label,
            ) from None
        finally:
            for wait in waits:
                wait.cancel()
        error = self._error or (None if self._write else self._bridge.stream)
        if error is not None or not self._ready.is_set():
            await self.aclose()
            raise error or self._bridge.stream or self._closed()

    async def _run(self) -> None:
        try:
            async with self._open() as (read, write):
                self._write = write
                async with anyio.create_task_group() as group:
                    group.start_soon(self._pump, read)
                    self._ready.set()
                    await self._closing.wait()
                    group.cancel_scope.cancel()
        except Exception as exc:  # an exception group from the SDK's task group
            self._error = self._error or self._cause(exc)
        finally:
            self._write = None
            self._ready.set()
            error = self._error or ConnectionLost(
                f"the connection to {self.label} closed", target=self.label
            )
            self._pending.fail_all(error, later=False)

    @asynccontextmanager
    async def _open(self) -> AsyncGenerator[Any, None]:
        def client(**_: object) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(transport=self._bridge, timeout=None)

        if self.name == "sse":
            async with sse_client(self._url, httpx_client_factory=client) as streams:  # type: ignore[arg-type]
                yield streams
            return
        # Above our own cap, which then fires first on a request's stream and says more;
        # the SDK's bounds the events of the server's GET stream, which ours does not cap.
        limit = self._bridge.http.options.max_response_bytes + _SSE_MARGIN
        async with (
            client() as http,
            streamable_http_client(
                self._url, http_client=http, max_sse_event_size=limit
            ) as streams,
        ):
            yield streams

    def _cause(self, exc: BaseException) -> MCPError:
        return (
            _first_mcp_error(exc)
            or self._bridge.stream
            or ConnectionLost(
                f"the connection to {self.label} failed: {type(exc).__name__}: {exc}"[:300],
                target=self.label,
            )
        )

    async def _pump(self, read: Any) -> None:
        async for item in read:
            if isinstance(item, Exception):
                if self.name == "sse":  # the event stream broke: nothing more will come
                    self._pending.fail_all(self._bridge.stream or self._closed(), later=False)
                continue  # streamable HTTP resolves the request it concerns by itself
            message = item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            if self._pending.deliver(message) or "method" not in message:
                continue
            if message.get("id") is not None:
                await self._answer(message)
            elif self.on_notification is not None:
                self.on_notification(message)
        if self.name == "sse" and not self._closing.is_set():
            self._error = self._bridge.stream or self._closed()
            self._pending.fail_all(self._error, later=False)

    def _closed(self) -> ConnectionLost:
        return ConnectionLost(
            f"{self.label} closed the event stream; the server restarted or dropped the "
            "session: connect again",
            target=self.label,
        )

    async def _answer(self, server_request: Message) -> None:
        # Answered before the stream is read on, as the server asked: in order.
        answered = self._bridge.answers.setdefault(server_request["id"], asyncio.Event())
        with suppress(MCPError, TimeoutError):
            await self._send(jsonrpc.answer_to(server_request), None)
            async with timeout_after(self._bridge.http.options.timeout):
                await answered.wait()

    async def request(self, message: Message, headers: Mapping[str, str] | None = None) -> Message:
        """Send a request and return the server's answer to it."""
        jsonrpc.encode(message)  # InvalidInput before anything is sent
        await self.start()
        key = message["id"]
        try:
            answer = await self._pending.answer(key, lambda: self._send(message, headers))
        except ConnectionLost as lost:
            failure = self._bridge.failures.pop(key, None)
            if failure is None and self._bridge.resume_refused is not None:
                failure = self._stand_in({}, message["method"])
            raise failure or lost from None
        if not isinstance(answer.get("error"), dict):
            return answer
        error: dict[str, Any] = answer["error"]
        failure = self._bridge.failures.pop(key, None)
        if failure is not None:
            raise failure
        if _sdk_made(error):
            raise self._stand_in(error, message["method"])
        return answer

    def subscribe(self, message: Message, headers: Mapping[str, str]) -> None:
        """Send ``subscriptions/listen`` (2026-07-28); its answers are notifications."""
        task = asyncio.ensure_future(self._send(message, headers))
        task.add_done_callback(_retrieved)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def notify(self, message: Message) -> None:
        """Send a notification; nothing comes back."""
        await self.start()
        if message["method"] == "notifications/cancelled" and (
            self.protocol_version in MODERN_PROTOCOL_VERSIONS
        ):
            await self._send(message, None)  # the SDK aborts the request's POST instead
            return
        posted = asyncio.Event()
        self._bridge.notified.append(posted)
        await self._send(message, None)
        # Returns once it is posted: a session closed right after still sends it.
        with suppress(TimeoutError):
            async with timeout_after(self._bridge.http.options.timeout):
                await posted.wait()

    async def _send(self, message: Message, headers: Mapping[str, str] | None) -> None:
        if self._write is None:
            raise self._error or ConnectionLost(
                f"the connection to {self.label} is closed", target=self.label
            )
        version = self.protocol_version
        stamped = {"MCP-Protocol-Version": version} if version else {}
        # Lower case: the SDK learns the version from its own lower-case key (and then stamps
        # its DELETE and aborts a cancelled 2026 POST), and one name is sent once.
        stamped = {k.lower(): v for k, v in {**stamped, **(headers or {})}.items()}
        try:
            await self._write.send(_session_message(message, stamped))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise self._error or ConnectionLost(
                f"the connection to {self.label} closed", target=self.label
            ) from None

    def _stand_in(self, error: dict[str, Any], method: str) -> MCPError:
        """Our error for an answer the SDK made up (``error``) or one never given."""
        text, code = str(error.get("message", "")), error.get("code")
        refused = self._bridge.resume_refused
        if isinstance(refused, HTTPStatusError):
            self._bridge.resume_refused = None
            return HTTPStatusError(
                f"{self.label} ended the event stream of {method} before answering and then "
                f"refused to resume it (GET with Last-Event-ID answered HTTP {refused.status}): "
                "the server's stream resumption is broken or disabled; retry, or check its "
                "event store",
                status=refused.status,
                target=self.label,
            )
        if code == mcp_types.CONNECTION_CLOSED:
            return self._bridge.stream or ConnectionLost(
                f"{self.label} closed the event stream before answering {method}; "
                "the server crashed or dropped the request: check its logs",
                target=self.label,
            )
        if text.startswith("server answered a request with 202"):
            text = f"accepted {method} (HTTP 202) but sent no response"
        return MalformedResponse(
            f"{self.label} answered {method} in a way MCP does not allow ({text[:160]}); "
            "the server does not follow MCP",
            target=self.label,
        )

    def reset_session(self) -> None:
        """Forget the server's session: the next request opens the SDK transport anew."""
        self._bridge.session_id = None
        self._closing.set()

    def diagnostics(self) -> str:
        """Nothing beyond what errors carry."""
        return ""

    async def aclose(self) -> None:
        """Close the SDK transport (it ends the server's session with DELETE), briefly."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._closing.set()
        try:
            async with timeout_after(min(self._bridge.http.options.timeout, _CLOSE_SECONDS)):
                await asyncio.shield(runner)
        except (TimeoutError, asyncio.TimeoutError):
            runner.cancel()
            with suppress(asyncio.CancelledError, Exception):
                await runner
        if isinstance(self._bridge.stream, ConfinementError):
            raise self._bridge.stream


def _session_message(message: Message, headers: Mapping[str, str] | None) -> SessionMessage:
    try:
        parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except ValueError as exc:
        raise InvalidInput(
            f"cannot send {message.get('method', 'a message')}: {str(exc)[:200]}"
        ) from None
    metadata = ClientMessageMetadata(headers=dict(headers)) if headers else None
    return SessionMessage(parsed, metadata=metadata)


def _sdk_made(error: dict[str, Any]) -> bool:
    code, text = error.get("code"), str(error.get("message", ""))
    return any(code == c and text.startswith(start) for c, start in _SDK_MADE)


def _first_mcp_error(exc: BaseException | None) -> MCPError | None:
    if exc is None or isinstance(exc, MCPError):
        return exc
    inner = [*getattr(exc, "exceptions", ()), exc.__cause__ or exc.__context__]
    return next(filter(None, map(_first_mcp_error, (e for e in inner if e is not exc))), None)


def _retrieved(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()


def streamable_http(http: HTTPConnection, url: str, label: str, listen: bool) -> SDKTransport:
    """The SDK's streamable HTTP transport, sending through ``http``."""
    return SDKTransport("streamable-http", url, Bridge(http, label, listen=listen))


def legacy_sse(http: HTTPConnection, url: str, label: str) -> SDKTransport:
    """The SDK's legacy HTTP+SSE transport, sending through ``http``."""
    return SDKTransport("sse", url, LegacyBridge(http, label, url))
