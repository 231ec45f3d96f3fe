"""Negotiating a protocol version: ``server/discover`` first, the ``initialize`` handshake after.

This follows the official SDK client's automatic mode: a server that answers discover as
a 2026-07-28 server is spoken to without a session; -32022 naming a common 2026 version
retries there, naming only versions we lack is an error; anything else (method not found,
-32020, a 4xx, a malformed answer, a timeout) falls back to ``initialize``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import langop_infra.mcp._jsonrpc as jsonrpc
import langop_infra.mcp._modern as modern
from langop_infra.mcp._errors import (
    HTTPStatusError,
    JSONRPCError,
    MalformedResponse,
    MCPError,
    MCPTimeout,
    ProtocolVersionError,
)
from langop_infra.mcp._jsonrpc import Message
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._timeouts import timeout_after

PROTOCOL_VERSION = modern.LATEST_HANDSHAKE  # what initialize offers
SUPPORTED_PROTOCOL_VERSIONS: tuple[str, ...] = (*modern.HANDSHAKE_VERSIONS, *modern.MODERN_VERSIONS)


def _client_version() -> str:
    """The distribution's version, without importing the langop_infra package."""
    try:
        from importlib.metadata import version

        return version("langop-infra")
    except Exception:  # not installed (a vendored copy): the client still works
        return "0"


CLIENT_VERSION = _client_version()
CLIENT_INFO = {"name": "langop-infra", "version": CLIENT_VERSION}
CLIENT_CAPABILITIES: dict[str, Any] = {}  # no sampling, roots or elicitation: refused at once
_DISCOVER_TIMEOUT = 10.0  # seconds, as the official client: a silent server falls back sooner


class Negotiation:
    """The negotiating half of :class:`~langop_infra.mcp._session.Session` (a mixin)."""

    options: ClientOptions
    label: str
    protocol_version: str
    server_info: dict[str, Any]
    server_capabilities: dict[str, Any]
    _transport: Any
    _modern: bool
    _initialized: bool
    _ids: Any

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        renew: bool = True,
        timeout: float | None = None,
        version: str | None = None,
    ) -> Message:
        raise NotImplementedError

    def _timeout(self, method: str, seconds: float | None = None) -> MCPError:
        raise NotImplementedError

    def _handshake_version(self) -> str:
        wanted = self.options.protocol
        return wanted if wanted in modern.HANDSHAKE_VERSIONS else modern.LATEST_HANDSHAKE

    async def _negotiate(self) -> None:
        """Discover first, fall back to initialize, as the official client's auto mode."""
        wanted = self.options.protocol
        if wanted in modern.HANDSHAKE_VERSIONS:
            await self._handshake(wanted)
            return
        version = modern.LATEST_MODERN if wanted == "auto" else wanted
        for attempt in range(2):
            try:
                result = await self._call(
                    "server/discover",
                    {},
                    renew=False,
                    timeout=min(self.options.timeout, _DISCOVER_TIMEOUT),
                    version=version,
                )
            except JSONRPCError as exc:
                supported = modern.supported_versions(exc.data)
                if exc.code == modern.UNSUPPORTED_PROTOCOL_VERSION and supported is not None:
                    mutual = [v for v in modern.MODERN_VERSIONS if v in supported]
                    if mutual and attempt == 0 and wanted == "auto" and mutual[-1] != version:
                        version = mutual[-1]
                        continue
                    if not any(v in modern.HANDSHAKE_VERSIONS for v in supported):
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
            mutual = [v for v in modern.MODERN_VERSIONS if v in offered]
            if not mutual:  # answers discover, but only for handshake-era versions
                await self._fall_back()
                return
            self._adopt(version if version in mutual else mutual[-1], result)
            return

    async def _fall_back(self) -> None:
        try:
            await self._handshake(modern.LATEST_HANDSHAKE)
        except JSONRPCError as exc:
            # A 2026-only server naming its versions in answer to initialize.
            supported = modern.supported_versions(exc.data) or []
            mutual = [v for v in modern.MODERN_VERSIONS if v in supported]
            if exc.code != modern.UNSUPPORTED_PROTOCOL_VERSION or not mutual:
                raise
            result = await self._call("server/discover", {}, renew=False, version=mutual[-1])
            self._adopt(mutual[-1], result)

    def _adopt(self, version: str, result: Message) -> None:
        assert self._transport is not None
        raw_meta = result.get("_meta")
        meta: dict[str, Any] = (
            cast("dict[str, Any]", raw_meta) if isinstance(raw_meta, dict) else {}
        )
        info, capabilities = meta.get(modern.SERVER_INFO_KEY), result.get("capabilities")
        self.server_info = info if isinstance(info, dict) else {}
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.protocol_version = version
        self._transport.protocol_version = version
        self._modern = True
        self._initialized = True
        subscribe = getattr(self._transport, "subscribe", None)
        if self.options.listen and subscribe is not None:
            # 2026-07-28 has no GET stream: a client opts in to notifications by listening.
            params: dict[str, object] = {"notifications": {"toolsListChanged": True}}
            message = jsonrpc.request(next(self._ids), "subscriptions/listen", params)
            message["params"] = modern.envelope(params, version, CLIENT_INFO, CLIENT_CAPABILITIES)
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
            if exc.code != jsonrpc.METHOD_NOT_FOUND and self.options.protocol != "auto":
                raise JSONRPCError(
                    f"{exc}; the server may speak only 2026-07-28 or later: try protocol auto",
                    code=exc.code,
                    message=exc.message,
                    data=exc.data,
                    target=self.label,
                ) from None
            if exc.code != jsonrpc.METHOD_NOT_FOUND:
                raise
            # language-operator's simple tool servers implement tools/* only: go on without
            # a handshake.
            self.protocol_version = "unknown"
            self._initialized = True
            return
        answered: Any = result.get("protocolVersion")
        if answered not in modern.HANDSHAKE_VERSIONS:
            raise ProtocolVersionError(
                f"{self.label} answered initialize with protocol version {answered!r}, which this "
                f"client does not speak (it speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}); "
                "upgrade langop-infra or use a server that supports one of those",
                target=self.label,
            )
        info, capabilities = result.get("serverInfo"), result.get("capabilities")
        self.server_info = info if isinstance(info, dict) else {}
        self.server_capabilities = capabilities if isinstance(capabilities, dict) else {}
        self.protocol_version = answered
        self._transport.protocol_version = answered
        try:
            async with timeout_after(self.options.timeout):
                await self._transport.notify(jsonrpc.notification("notifications/initialized"))
        except TimeoutError:
            raise self._timeout("notifications/initialized") from None
        self._initialized = True
        if self.options.listen and hasattr(self._transport, "listen"):
            await self._transport.listen()
