"""``Session``: the MCP lifecycle (initialize, list tools, call tools, close) over any transport."""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

import httpx

from langop_infra.mcp import jsonrpc
from langop_infra.mcp.errors import (
    HTTPStatusError,
    InvalidInput,
    JSONRPCError,
    MalformedResponse,
    MCPTimeout,
    ProtocolVersionError,
    ServerUnreachable,
    SessionExpired,
    TransportError,
)
from langop_infra.mcp.http import HTTPConnection, display_url
from langop_infra.mcp.jsonrpc import Message
from langop_infra.mcp.legacy_sse import LegacySSETransport
from langop_infra.mcp.options import ClientOptions
from langop_infra.mcp.stdio import StdioTransport
from langop_infra.mcp.streamable_http import StreamableHTTPTransport
from langop_infra.mcp.timeouts import timeout_after

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_PROTOCOL_VERSIONS",
    "Session",
    "ToolCallResult",
]

PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
)
try:  # the distribution's version, without importing the langop_infra package
    from importlib.metadata import version as _version

    CLIENT_VERSION = _version("langop-infra")
except Exception:  # not installed (a vendored copy): the client still works
    CLIENT_VERSION = "0"
CLIENT_INFO = {"name": "langop-infra", "version": CLIENT_VERSION}
DEFAULT_OPTIONS = ClientOptions()

_T = TypeVar("_T")


class Transport(Protocol):
    """What a session needs from a transport; each module in this package provides one."""

    name: str
    label: str
    protocol_version: str | None

    async def request(self, message: Message) -> Message: ...
    async def notify(self, message: Message) -> None: ...
    def reset_session(self) -> None: ...
    def diagnostics(self) -> str: ...
    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ToolCallResult:
    """What ``tools/call`` returned: content blocks, the tool's error flag, structured output."""

    content: list[dict[str, Any]]
    is_error: bool
    structured_content: dict[str, Any] | None = None


class Session:
    """One connection to one MCP server.

    ``target`` is an http(s) URL, or a command (list of strings) to run as a stdio server.
    Use it as ``async with Session(url, options) as session:``; entering initializes.
    """

    def __init__(
        self, target: str | Sequence[str], options: ClientOptions = DEFAULT_OPTIONS
    ) -> None:
        self.options = options
        self._url, self._command = _resolve_target(target, options.transport)
        _check_headers(options.headers)
        self.label = display_url(self._url) if self._url else shlex.join(self._command or [])
        self._http: HTTPConnection | None = None
        self._transport: Transport | None = None
        self._used_transport = ""
        self._last_refused: tuple[httpx.URL, int] | None = None
        self._ids = itertools.count(1)
        self._initialized = False
        self._closed = False
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.protocol_version = ""

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
        """Connect and run the ``initialize`` handshake, within ``options.deadline``."""
        if self._closed:
            raise TransportError(f"the session with {self.label} is closed; open a new one")
        if not self._initialized:
            await self._bounded(self._connect(), "connecting and initializing")

    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool, as the server described it, following ``nextCursor`` to the last page."""
        await self.initialize()
        return await self._bounded(self._list_tools(), "listing tools")

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        """Call tool ``name``; a tool's own failure is ``is_error=True``, not an exception."""
        await self.initialize()
        result = await self._call("tools/call", {"name": name, "arguments": dict(arguments or {})})
        content = result.get("content", [])
        structured = result.get("structuredContent")
        if not isinstance(content, list) or not all(isinstance(c, dict) for c in content):
            raise MalformedResponse(
                f"{self.label} answered tools/call {name} with content that is not a list of "
                "objects; the server does not follow MCP",
                target=self.label,
            )
        return ToolCallResult(
            content=content,
            is_error=result.get("isError") is True,
            structured_content=structured if isinstance(structured, dict) else None,
        )

    async def aclose(self) -> None:
        """End the session (HTTP DELETE of the session id, or stop the process); idempotent."""
        if not self._closed:
            self._closed = True
            await self._release()

    async def _release(self) -> None:
        transport, http, self._transport, self._http = self._transport, self._http, None, None
        if transport is not None:
            self._used_transport = transport.name
        if http is not None:
            self._last_refused = http.refused
        try:
            if transport is not None:
                await transport.aclose()
        finally:
            if http is not None:
                await http.aclose()

    async def _bounded(self, operation: Awaitable[_T], what: str) -> _T:
        try:
            async with timeout_after(self.options.deadline):
                return await operation
        except TimeoutError:
            raise self._deadline_error(what) from None

    def _deadline_error(self, what: str) -> MCPTimeout | ServerUnreachable:
        """The error for ``what`` running out of ``options.deadline``."""
        deadline = self.options.deadline or 0
        return self._refused_error(deadline) or MCPTimeout(
            f"{what} with {self.label} did not finish within the {deadline:g}s deadline: "
            "the server is slow or keeps a stream open without answering; "
            "raise the deadline or check its logs" + self._diagnostics(),
            target=self.label,
        )

    def _refused_error(self, seconds: float) -> ServerUnreachable | None:
        # Time ran out while a refused connection was being retried: say so, not "slow".
        refused = self._http.refused if self._http is not None else self._last_refused
        if refused is None:
            return None
        url, attempts = refused
        return ServerUnreachable(
            f"connection refused by {display_url(url)} (tried {attempts} times in "
            f"{seconds:g}s): is the server running on that port?",
            target=self.label,
        )

    async def _connect(self) -> None:
        await self._release()  # what a failed earlier attempt left behind
        if self._command is not None:
            self._transport = await StdioTransport.start(self._command, self.options)
            await self._handshake()
            return
        assert self._url is not None
        self._http = HTTPConnection(self._url, self.options)
        if self.options.transport == "sse":
            self._transport = await LegacySSETransport.connect(self._http, self._url)
            await self._handshake()
            return
        self._transport = StreamableHTTPTransport(self._http, self._url)
        try:
            await self._handshake()
        except HTTPStatusError as exc:
            # A legacy HTTP+SSE server refuses the POST; its GET opens the event stream.
            if self.options.transport != "auto" or exc.status not in (400, 404, 405):
                raise
            legacy = await LegacySSETransport.connect(self._http, self._url, probe=True)
            if legacy is None:
                raise
            self._transport = legacy
            await self._handshake()

    async def _handshake(self) -> None:
        assert self._transport is not None
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        }
        try:
            result = await self._call("initialize", params, renew=False)
        except JSONRPCError as exc:
            if exc.code != jsonrpc.METHOD_NOT_FOUND:
                raise
            # The seeds' simple servers implement tools/* only: go on without a handshake.
            self.protocol_version = "unknown"
            self._initialized = True
            return
        version = result.get("protocolVersion")
        if version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolVersionError(
                f"{self.label} answered initialize with protocol version {version!r}, which this "
                f"client does not speak (it speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}); "
                "upgrade langop-infra or use a server that supports one of those",
                target=self.label,
            )
        info, capabilities = result.get("serverInfo"), result.get("capabilities")
        self.server_info = info if isinstance(info, dict) else {}
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.protocol_version = version
        self._transport.protocol_version = version
        try:
            async with timeout_after(self.options.timeout):
                await self._transport.notify(jsonrpc.notification("notifications/initialized"))
        except TimeoutError:
            raise self._timeout("notifications/initialized") from None
        self._initialized = True

    async def _call(self, method: str, params: dict[str, Any], *, renew: bool = True) -> Message:
        transport = self._transport
        if transport is None or self._closed:
            raise TransportError(f"the session with {self.label} is closed; open a new one")
        message = jsonrpc.request(next(self._ids), method, params)
        try:
            async with timeout_after(self.options.timeout):
                response = await transport.request(message)
        except TimeoutError:
            raise self._timeout(method) from None
        except SessionExpired:
            if not renew:
                raise
            transport.reset_session()
            await self._handshake()
            return await self._call(method, params, renew=False)
        return jsonrpc.result_of(response, method=method, source=self.label)

    async def _list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        seen: set[str] = set()
        names: set[str] = set()
        cursor: str | None = None
        for _ in range(self.options.max_pages):
            result = await self._call("tools/list", {"cursor": cursor} if cursor else {})
            page = result.get("tools")
            if not isinstance(page, list) or not all(
                isinstance(t, dict) and isinstance(t.get("name"), str) for t in page
            ):
                raise MalformedResponse(
                    f"{self.label} answered tools/list without a list of named tools; "
                    "the server does not follow MCP",
                    target=self.label,
                )
            cursor = result.get("nextCursor")
            if cursor not in (None, "") and (not isinstance(cursor, str) or cursor in seen):
                raise MalformedResponse(
                    f"{self.label} sent tools/list cursor {cursor!r} twice (or not a string): "
                    "its pagination loops; fix the server's nextCursor",
                    target=self.label,
                )
            # A later page repeating an earlier page's tool: the list changed under us.
            repeated = sorted({t["name"] for t in page} & names)
            if repeated:
                raise MalformedResponse(
                    f"{self.label} listed tool {repeated[0]!r} again on a later tools/list "
                    "page: its list changed while paging; retry, or fix the server",
                    target=self.label,
                )
            names.update(t["name"] for t in page)
            tools.extend(page)
            if cursor is None or cursor == "":
                return tools
            seen.add(cursor)
        raise MalformedResponse(
            f"{self.label} kept paging tools/list past {self.options.max_pages} pages; "
            "raise max_pages if it really has that many tools, else fix its nextCursor",
            target=self.label,
        )

    def _timeout(self, method: str) -> MCPTimeout | ServerUnreachable:
        return self._refused_error(self.options.timeout) or MCPTimeout(
            f"no answer to {method} from {self.label} within {self.options.timeout:g}s: "
            "the server is stuck or slow; raise the timeout or check its logs"
            + self._diagnostics(),
            target=self.label,
        )

    def _diagnostics(self) -> str:
        detail = self._transport.diagnostics() if self._transport is not None else ""
        return f"; server stderr: {detail}" if detail else ""


def _resolve_target(
    target: str | Sequence[str], transport: str
) -> tuple[str | None, list[str] | None]:
    """(url, None) for an HTTP target, (None, argv) for a stdio one."""
    if isinstance(target, str) and transport != "stdio":
        url = target.strip()
        try:
            parts = urlsplit(url)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
            _ = parts.port  # raises ValueError on a port that is not a number
            httpx.URL(url)  # and httpx refuses control characters
        except (ValueError, httpx.InvalidURL):
            valid = False
        if not valid:
            shown = display_url(url) if "@" in url else url
            raise InvalidInput(
                f"{shown!r} is not an http(s) URL with a host; give e.g. "
                "http://tool.ns.svc.cluster.local:8080/mcp, or a command for stdio",
                target=shown,
            )
        return url, None
    if isinstance(target, str):
        try:
            command = shlex.split(target)
        except ValueError as exc:
            raise InvalidInput(f"cannot split the command {target!r}: {exc}") from None
    else:
        command = [str(part) for part in target]
        if transport not in ("auto", "stdio"):
            raise InvalidInput(
                f"a command ({shlex.join(command)}) needs the stdio transport, not {transport}",
                target=shlex.join(command),
            )
    if not command:
        raise InvalidInput("empty stdio command: give the program to run and its arguments")
    return None, command


def _check_headers(headers: Mapping[str, str]) -> None:
    """Refuse, before any connection, headers that HTTP cannot carry."""
    for name, value in headers.items():
        try:
            httpx.Headers({name: value})
            valid = bool(name) and not any(c in ":\r\n\0 \t" for c in name)
            valid = valid and not any(c in "\r\n\0" for c in value)
        except (TypeError, UnicodeError):
            valid = False
        if not valid:
            raise InvalidInput(
                f"header {name!r} cannot be sent: names are tokens and values are ASCII on "
                "one line; fix the header (is a value from the environment garbled?)"
            )
