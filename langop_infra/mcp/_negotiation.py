"""Negotiating a protocol version, and sending requests in it: the base of ``Session``.

This follows the official SDK client's automatic mode: ``server/discover`` at 2026-07-28
first; a server that answers it as a 2026 server is spoken to without a session; -32022
naming a common 2026 version retries there, naming only versions we lack is an error;
anything else (method not found, -32020, a 4xx, a malformed answer, a timeout) falls back
to the ``initialize`` handshake (2025-11-25 and older).
"""

from __future__ import annotations

import importlib.metadata
import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, cast

import httpx2
from mcp.client.session import DISCOVER_TIMEOUT_SECONDS
from mcp_types import SERVER_INFO_META_KEY
from mcp_types.jsonrpc import METHOD_NOT_FOUND, UNSUPPORTED_PROTOCOL_VERSION
from mcp_types.version import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_PROTOCOL_VERSIONS,
)

import langop_infra.mcp._jsonrpc as jsonrpc
import langop_infra.mcp._modern as modern
from langop_infra.mcp._errors import (
    HTTPStatusError,
    JSONRPCError,
    MalformedResponse,
    MCPError,
    MCPTimeout,
    ProtocolVersionError,
    ServerUnreachable,
    SessionExpired,
    TransportError,
)
from langop_infra.mcp._http import HTTPConnection, display_url
from langop_infra.mcp._jsonrpc import Message
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._timeouts import timeout_after

PROTOCOL_VERSION = LATEST_HANDSHAKE_VERSION  # what initialize offers
SUPPORTED_PROTOCOL_VERSIONS = (*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS)


def _client_version() -> str:
    """The distribution's version, without importing the langop_infra package."""
    try:
        return importlib.metadata.version("langop-infra")
    except Exception:  # not installed (a vendored copy): the client still works
        return "0"


CLIENT_INFO = {"name": "langop-infra", "version": _client_version()}
CLIENT_CAPABILITIES: dict[str, Any] = {}  # no sampling, roots or elicitation: refused at once

_CANCEL_SECONDS = 1.0


class Transport(Protocol):
    """What a session needs from a transport; each module in this package provides one.

    ``Session(target, transport=...)`` takes any object of this shape (for in-process tests)
    or an ``httpx2.AsyncBaseTransport`` under the HTTP transports.
    """

    name: str
    label: str
    protocol_version: str | None

    async def request(
        self, message: Message, headers: Mapping[str, str] | None = None
    ) -> Message: ...
    async def notify(self, message: Message) -> None: ...
    def reset_session(self) -> None: ...
    def diagnostics(self) -> str: ...
    async def aclose(self) -> None: ...


class Negotiation:
    """A session's conversation with its connected transport: negotiation and requests."""

    def __init__(self, options: ClientOptions, label: str) -> None:
        self.options = options
        self.label = label
        self._transport: Transport | None = None
        # The HTTP connection, if any: a refused connection it retried explains a timeout.
        self._http: HTTPConnection | None = None
        self._last_refused: tuple[httpx2.URL, int] | None = None
        self._ids = itertools.count(1)
        self._initialized = False
        self._closed = False
        self._modern = False
        self._schemas: dict[str, dict[str, Any]] = {}
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.protocol_version = ""

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

    def _handshake_version(self) -> str:
        wanted = self.options.protocol
        return wanted if wanted in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION

    async def _negotiate(self) -> None:
        """Discover first, fall back to initialize, as the official client's auto mode."""
        wanted = self.options.protocol
        if wanted in HANDSHAKE_PROTOCOL_VERSIONS:
            await self._handshake(wanted)
            return
        version = LATEST_MODERN_VERSION if wanted == "auto" else wanted
        for attempt in range(2):
            try:
                result = await self._call(
                    "server/discover",
                    {},
                    renew=False,
                    timeout=min(self.options.timeout, DISCOVER_TIMEOUT_SECONDS),
                    version=version,
                )
            except JSONRPCError as exc:
                supported = modern.supported_versions(exc.data)
                if exc.code == UNSUPPORTED_PROTOCOL_VERSION and supported is not None:
                    mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
                    if mutual and attempt == 0 and wanted == "auto" and mutual[-1] != version:
                        version = mutual[-1]
                        continue
                    if not any(v in HANDSHAKE_PROTOCOL_VERSIONS for v in supported):
                        raise self._no_common_version(supported) from None
                if wanted != "auto":
                    raise
                await self._fall_back()
                return
            except (HTTPStatusError, MalformedResponse, MCPTimeout) as exc:
                if wanted != "auto" or getattr(exc, "status", 0) in (401, 403):
                    raise
                await self._fall_back()
                return
            listed = result.get("supportedVersions")
            offered = cast("list[object]", listed) if isinstance(listed, list) else []
            if version not in offered and wanted != "auto":
                raise self._no_common_version(offered)
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in offered]
            if not mutual:  # answers discover, but only for handshake-era versions
                await self._fall_back()
                return
            self._adopt_modern(version if version in mutual else mutual[-1], result)
            return

    async def _fall_back(self) -> None:
        try:
            await self._handshake(LATEST_HANDSHAKE_VERSION)
        except JSONRPCError as exc:
            # A 2026-only server naming its versions in answer to initialize.
            supported = modern.supported_versions(exc.data) or []
            mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in supported]
            if exc.code != UNSUPPORTED_PROTOCOL_VERSION or not mutual:
                raise
            result = await self._call("server/discover", {}, renew=False, version=mutual[-1])
            self._adopt_modern(mutual[-1], result)

    def _adopt(self, version: str, info: Any, capabilities: Any) -> None:
        """Take the negotiated ``version`` and what the server said of itself."""
        assert self._transport is not None
        self.server_info = info if isinstance(info, dict) else {}
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.protocol_version = version
        self._transport.protocol_version = version

    def _adopt_modern(self, version: str, result: Message) -> None:
        meta = result.get("_meta")
        info = (
            cast("dict[str, Any]", meta).get(SERVER_INFO_META_KEY)
            if isinstance(meta, dict)
            else None
        )
        self._adopt(version, info, result.get("capabilities"))
        self._modern = True
        self._initialized = True
        subscribe = getattr(self._transport, "subscribe", None)
        if self.options.listen and subscribe is not None:
            # 2026-07-28 has no GET stream: a client opts in to notifications by listening.
            params: dict[str, object] = {"notifications": {"toolsListChanged": True}}
            enveloped = modern.envelope(params, version, CLIENT_INFO, CLIENT_CAPABILITIES)
            message = jsonrpc.request(next(self._ids), "subscriptions/listen", enveloped)
            subscribe(message, modern.routing_headers("subscriptions/listen", params, version))

    def _no_common_version(self, supported: Sequence[object]) -> ProtocolVersionError:
        offered = ", ".join(map(str, supported[:8])) or "none"
        return ProtocolVersionError(
            f"{self.label} speaks protocol versions {offered}, and this client speaks "
            f"{', '.join(SUPPORTED_PROTOCOL_VERSIONS)} (asked for {self.options.protocol}); "
            "use --protocol auto, or upgrade langop-infra or the server",
            target=self.label,
        )

    async def _handshake(self, version: str) -> None:
        assert self._transport is not None
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT_INFO}
        try:
            result = await self._call("initialize", params, renew=False)
        except JSONRPCError as exc:
            if exc.code != METHOD_NOT_FOUND and self.options.protocol != "auto":
                raise JSONRPCError(
                    f"{exc}; the server may speak only 2026-07-28 or later: try protocol auto",
                    code=exc.code,
                    message=exc.message,
                    data=exc.data,
                    target=self.label,
                ) from None
            if exc.code != METHOD_NOT_FOUND:
                raise
            # language-operator's simple tool servers implement tools/* only: go on without
            # a handshake.
            self.protocol_version = "unknown"
            self._initialized = True
            return
        answered: Any = result.get("protocolVersion")
        if answered not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise ProtocolVersionError(
                f"{self.label} answered initialize with protocol version {answered!r}, which this "
                f"client does not speak (it speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}); "
                "upgrade langop-infra or use a server that supports one of those",
                target=self.label,
            )
        self._adopt(answered, result.get("serverInfo"), result.get("capabilities"))
        try:
            async with timeout_after(self.options.timeout):
                await self._transport.notify(jsonrpc.notification("notifications/initialized"))
        except TimeoutError:
            raise self._timeout("notifications/initialized") from None
        self._initialized = True
        listen = getattr(self._transport, "listen", None)
        if self.options.listen and listen is not None:
            await listen()

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        renew: bool = True,
        timeout: float | None = None,
        version: str | None = None,
    ) -> Message:
        transport = self._transport
        if transport is None or self._closed:
            raise TransportError(f"the session with {self.label} is closed; open a new one")
        version = version or (self.protocol_version if self._modern else None)
        headers: dict[str, str] | None = None
        if version:
            schema = self._schemas.get(params.get("name", "")) if method == "tools/call" else None
            headers = modern.routing_headers(method, params, version, schema)
            params = modern.envelope(params, version, CLIENT_INFO, CLIENT_CAPABILITIES)
        message = jsonrpc.request(next(self._ids), method, params)
        seconds = timeout or self.options.timeout
        try:
            async with timeout_after(seconds):
                response = await transport.request(message, headers)
        except TimeoutError:
            await self._cancel(transport, message)
            raise self._timeout(method, seconds) from None
        except SessionExpired:
            if not renew or self._modern:
                raise
            transport.reset_session()
            await self._handshake(self._handshake_version())
            return await self._call(method, params, renew=False)
        return jsonrpc.result_of(response, method=method, source=self.label)

    async def _cancel(self, transport: Transport, message: Message) -> None:
        """Tell the server we gave up on ``message`` (as the official client does), so it
        can stop the work; best effort, briefly. ``initialize`` is never cancelled (spec)."""
        if message["method"] == "initialize":
            return
        params: dict[str, object] = {
            "requestId": message["id"],
            "reason": "the client's timeout expired",
        }
        try:
            async with timeout_after(_CANCEL_SECONDS):
                await transport.notify(jsonrpc.notification("notifications/cancelled", params))
        except (MCPError, TimeoutError, OSError):
            pass  # the timeout error that follows says what matters

    def _timeout(self, method: str, seconds: float | None = None) -> MCPTimeout | ServerUnreachable:
        seconds = seconds or self.options.timeout
        return self._refused_error(seconds) or MCPTimeout(
            f"no answer to {method} from {self.label} within {seconds:g}s: "
            "the server is stuck or slow; raise the timeout or check its logs"
            + self._diagnostics(),
            target=self.label,
        )

    def _diagnostics(self) -> str:
        detail = self._transport.diagnostics() if self._transport is not None else ""
        return f"; server stderr: {detail}" if detail else ""
