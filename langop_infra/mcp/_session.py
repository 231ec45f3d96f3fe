"""``Session``: the MCP lifecycle (connect, negotiate, list tools, call tools, close) over
any transport; negotiating and sending requests are in :mod:`langop_infra.mcp._negotiation`.
"""

from __future__ import annotations

import asyncio
import functools
import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar, cast

import httpx2
from mcp_types.jsonrpc import HEADER_MISMATCH

from langop_infra.mcp._errors import (
    ConfinementError,
    HTTPStatusError,
    InvalidInput,
    JSONRPCError,
    MalformedResponse,
    MCPError,
    MCPTimeout,
    ServerBusy,
    TransportError,
)
from langop_infra.mcp._http import HTTPConnection, display_url
from langop_infra.mcp._jsonrpc import Message
from langop_infra.mcp._negotiation import (
    PROTOCOL_VERSION,
    SUPPORTED_PROTOCOL_VERSIONS,
    Negotiation,
    Transport,
)
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._paging import list_all_tools
from langop_infra.mcp._sdk_transport import legacy_sse, streamable_http
from langop_infra.mcp._stdio import StdioTransport
from langop_infra.mcp._targets import check_headers, resolve_target
from langop_infra.mcp._timeouts import timeout_after

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "Session",
    "ToolCallResult",
    "Transport",
]

DEFAULT_OPTIONS = ClientOptions()
_T = TypeVar("_T")


@dataclass(frozen=True)
class ToolCallResult:
    """What ``tools/call`` returned: content blocks, the tool's error flag, structured output."""

    content: list[dict[str, Any]]
    is_error: bool
    structured_content: dict[str, Any] | None = None


class Session(Negotiation):
    """One connection to one MCP server.

    ``target`` is an http(s) URL, or a command (list of strings) to run as a stdio server.
    Use it as ``async with Session(url, options) as session:``; entering negotiates.
    ``transport`` injects an ``httpx2.AsyncBaseTransport`` (e.g. ``httpx2.ASGITransport``) or
    a ready :class:`Transport`; ``on_notification`` receives the server's notifications
    (``notifications/tools/list_changed``, ...); a stdio server's environment is ``HOME``,
    ``LOGNAME``, ``PATH``, ``SHELL``, ``TERM`` and ``USER`` of ours plus ``env``
    (:func:`langop_infra.mcp._stdio.child_environment`).
    """

    def __init__(
        self,
        target: str | Sequence[str],
        options: ClientOptions = DEFAULT_OPTIONS,
        *,
        transport: Transport | httpx2.AsyncBaseTransport | None = None,
        on_notification: Callable[[Message], None] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self._env = dict(env or {})
        self.on_notification = on_notification
        self._http_transport: httpx2.AsyncBaseTransport | None = None
        self._injected: Transport | None = None
        if isinstance(transport, httpx2.AsyncBaseTransport):
            self._http_transport = transport
        elif transport is not None:
            if not callable(getattr(transport, "request", None)):
                raise InvalidInput(
                    f"transport={type(transport).__name__} is neither an "
                    "httpx2.AsyncBaseTransport (e.g. httpx2.ASGITransport; an httpx one no "
                    "longer fits) nor an MCP transport object with request() and notify()"
                )
            self._injected = transport
        if self._injected is not None and isinstance(target, str) and "://" not in target:
            self._url, self._command, label = None, None, target
        else:
            self._url, self._command = resolve_target(target, options.transport)
            label = display_url(self._url) if self._url else shlex.join(self._command or [])
        check_headers(options.headers)
        super().__init__(options, label)
        self._used_transport = ""
        self._slots = asyncio.Semaphore(options.max_concurrent_calls)
        self._waiting = 0

    @property
    def transport_name(self) -> str:
        """The transport in use: ``streamable-http``, ``sse`` or ``stdio``."""
        if self._transport is not None:
            return self._transport.name
        if self._used_transport:
            return self._used_transport
        return "stdio" if self._command is not None else self.options.transport

    @property
    def session_id(self) -> str | None:
        """The server's ``Mcp-Session-Id`` (streamable HTTP with a stateful server), else None."""
        return getattr(self._transport, "session_id", None)

    @property
    def listening(self) -> bool:
        """True while the server's GET stream (its channel to us) is open."""
        return bool(getattr(self._transport, "listening", False))

    @property
    def transport(self) -> Transport | None:
        """The connected transport (None before connecting and after closing)."""
        return self._transport

    async def __aenter__(self) -> Session:
        try:
            await self.initialize()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def initialize(self) -> None:
        """Connect and negotiate a protocol version, within ``options.deadline``."""
        if self._closed:
            raise TransportError(f"the session with {self.label} is closed; open a new one")
        if not self._initialized:
            await self._bounded(self._connect(), "connecting and initializing")

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, as the server described it, following ``nextCursor`` to the last page.

        The listing is bounded by ``max_pages``, ``max_tools`` and ``max_total_bytes``.
        """
        await self.initialize()
        tools = await self._bounded(
            list_all_tools(
                functools.partial(self._call, "tools/list"),
                lambda: getattr(self._transport, "received_bytes", None),
                self.options,
                self.label,
            ),
            "listing tools",
        )
        schemas = {t["name"]: t.get("inputSchema") for t in tools}
        self._schemas = {k: v for k, v in schemas.items() if isinstance(v, dict)}
        return tools

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        """Call tool ``name``; a tool's own failure is ``is_error=True``, not an exception."""
        await self.initialize()
        await self._take_slot()
        try:
            return await self._call_tool(name, arguments)
        finally:
            self._slots.release()

    async def _take_slot(self) -> None:
        """Wait for one of ``max_concurrent_calls``, among at most ``max_queued_calls``."""
        running, waiting = self.options.max_concurrent_calls, self.options.max_queued_calls
        if self._slots.locked() and self._waiting >= waiting:
            raise ServerBusy(
                f"{self.label} is busy: {running} calls running and {self._waiting} waiting "
                "(max_concurrent_calls, max_queued_calls); try again shortly",
                target=self.label,
            )
        self._waiting += 1
        try:
            async with timeout_after(self.options.timeout):
                await self._slots.acquire()
        except TimeoutError:
            raise MCPTimeout(
                f"no free call slot for {self.label} within {self.options.timeout:g}s: "
                f"{running} calls running (max_concurrent_calls); the server is slow",
                target=self.label,
            ) from None
        finally:
            self._waiting -= 1

    async def _call_tool(self, name: str, arguments: Mapping[str, Any] | None) -> ToolCallResult:
        params = {"name": name, "arguments": dict(arguments or {})}
        try:
            result = await self._call("tools/call", params)
        except JSONRPCError as exc:
            # A 2026 server checks Mcp-Param-* headers against the tool's schema: learn it once.
            if exc.code != HEADER_MISMATCH or not self._modern or name in self._schemas:
                raise
            await self.list_tools()
            result = await self._call("tools/call", params)
        content = result.get("content", [])
        structured = result.get("structuredContent")
        if result.get("resultType", "complete") != "complete":
            raise MalformedResponse(
                f"{self.label} answered tools/call {name} with resultType "
                f"{str(result.get('resultType'))[:40]!r}: the tool needs input (elicitation) "
                "this client cannot give",
                target=self.label,
            )
        blocks = cast("list[object]", content) if isinstance(content, list) else None
        if blocks is None or not all(isinstance(c, dict) for c in blocks):
            raise MalformedResponse(
                f"{self.label} answered tools/call {name} with content that is not a list of "
                "objects; the server does not follow MCP",
                target=self.label,
            )
        return ToolCallResult(
            content=cast("list[dict[str, Any]]", blocks),
            is_error=result.get("isError") is True,
            structured_content=(
                cast("dict[str, Any]", structured) if isinstance(structured, dict) else None
            ),
        )

    async def aclose(self) -> None:
        """End the session (HTTP DELETE of the session id, or stop the process); idempotent."""
        if not self._closed:
            self._closed = True
            await self._release()

    def deadline_error(self, what: str) -> MCPError:
        """The error to raise when ``what`` ran out of ``options.deadline``."""
        deadline = self.options.deadline or 0
        return self._refused_error(deadline) or MCPTimeout(
            f"{what} with {self.label} did not finish within the {deadline:g}s deadline: "
            "the server is slow or keeps a stream open without answering; "
            "raise the deadline or check its logs" + self._diagnostics(),
            target=self.label,
        )

    async def _release(self) -> None:
        transport, http, self._transport, self._http = self._transport, self._http, None, None
        if transport is not None:
            self._used_transport = transport.name
        if http is not None:
            self._last_refused = http.refused
        try:
            if transport is not None and (transport is not self._injected or self._closed):
                await transport.aclose()
        finally:
            if http is not None:
                await http.aclose()

    async def _bounded(self, operation: Awaitable[_T], what: str) -> _T:
        try:
            async with timeout_after(self.options.deadline):
                return await operation
        except TimeoutError:
            raise self.deadline_error(what) from None

    async def _connect(self) -> None:
        await self._release()  # what a failed earlier attempt left behind
        self._modern = False
        if self._injected is not None:
            self._attach(self._injected)
            await self._negotiate()
            return
        if self._command is not None:
            self._attach(await StdioTransport.start(self._command, self.options, self._env))
            await self._negotiate()
            return
        assert self._url is not None
        self._http = HTTPConnection(self._url, self.options, self._http_transport)
        if self.options.transport == "sse":
            self._attach(legacy_sse(self._http, self._url, self.label))
            await self._handshake(self._handshake_version())
            return
        self._attach(streamable_http(self._http, self._url, self.label, self.options.listen))
        try:
            await self._negotiate()
        except HTTPStatusError as exc:
            # A legacy HTTP+SSE server refuses the POST; its GET opens the event stream.
            if self.options.transport != "auto" or exc.status not in (400, 404, 405):
                raise
            if self._transport is not None:
                await self._transport.aclose()  # the streamable one, before the legacy one
            self._attach(await self._legacy_probe(exc))
            await self._handshake(self._handshake_version())

    async def _legacy_probe(self, refused: HTTPStatusError) -> Transport:
        """The legacy transport, if the URL opens an event stream; else ``refused`` raised.

        A probe's GET refused for want of a permission says more than the POST's refusal
        that prompted it (e.g. an API server proxy allowing create but not get); so does a
        message endpoint outside the confinement."""
        assert self._http is not None and self._url is not None
        legacy = legacy_sse(self._http, self._url, self.label)
        try:
            await legacy.start()
        except (ConfinementError, HTTPStatusError) as exc:
            await legacy.aclose()
            if isinstance(exc, ConfinementError) or exc.status in (401, 403):
                raise
            raise refused from None
        except MCPError:
            await legacy.aclose()
            raise refused from None
        return legacy

    def _attach(self, transport: Any) -> None:
        self._transport = transport
        if hasattr(transport, "on_notification"):
            transport.on_notification = self._notified

    def _notified(self, message: Message) -> None:
        if self.on_notification is not None:
            self.on_notification(message)
