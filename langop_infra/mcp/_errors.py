"""The client's one exception family: a short, actionable message and a ``kind`` slug each.

    LangopError                      root of every langop-infra exception
    └── MCPClientError               (old name MCPError)
        ├── MCPConnectionError       no usable connection
        │   ├── ServerUnreachable
        │   ├── MCPTimeout
        │   ├── ServerBusy
        │   └── ConnectionLost       (old name TransportError)
        ├── MCPProtocolError         an answer that breaks MCP or JSON-RPC
        │   ├── JSONRPCError
        │   ├── MalformedResponse
        │   ├── ProtocolVersionError
        │   └── ResponseTooLarge
        ├── MCPHTTPError             (old name HTTPStatusError)
        │   └── SessionExpired
        ├── InvalidInput
        └── OAuthError               (mcp/oauth)

The old names stay as aliases for one release; they collide with httpx's and the official
SDK's exceptions in a module that imports both.
"""

from __future__ import annotations

from typing import Any, ClassVar

from langop_infra._errors import (
    REDACTED as REDACTED,  # re-exported: the client names it
    LangopError,
)


class MCPClientError(LangopError):
    """Base of every error the MCP client raises; ``str()`` is one line naming the server."""

    kind: ClassVar[str] = "error"

    def __init__(self, message: str, *, target: str | None = None) -> None:
        # One line, always: these messages end up in CLI output and Pulumi diagnostics.
        super().__init__(" ".join(message.split()))
        self.target = target


class MCPConnectionError(MCPClientError):
    """No usable connection to the server: unreachable, too slow, or dropped."""

    kind = "connection"


class MCPProtocolError(MCPClientError):
    """The server answered, but not as MCP and JSON-RPC require."""

    kind = "protocol"


class ServerUnreachable(MCPConnectionError):
    """No connection: refused, unknown host, TLS handshake failed, process would not start."""

    kind = "unreachable"


class MCPTimeout(MCPConnectionError):
    """No answer within the per-call timeout or the operation's deadline."""

    kind = "timeout"


class ServerBusy(MCPConnectionError):
    """A session's calls in flight and waiting are at their limits: refused without waiting
    (``ClientOptions.max_concurrent_calls``, ``max_queued_calls``)."""

    kind = "busy"


class MCPHTTPError(MCPClientError):
    """The server answered with an HTTP status the client cannot use (or a refused redirect)."""

    kind = "http-status"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        target: str | None = None,
        www_authenticate: str | None = None,
        detail: str = "",
        kubernetes_status: bool = False,
    ) -> None:
        super().__init__(message, target=target)
        self.status = status
        self.www_authenticate = www_authenticate
        # A one-line summary of the error body; kubernetes_status: the body was a Kubernetes
        # API ``Status`` (an API server or its proxy answered, not the MCP server).
        self.detail = detail
        self.kubernetes_status = kubernetes_status


class JSONRPCError(MCPProtocolError):
    """The server answered with a JSON-RPC error object."""

    kind = "jsonrpc"

    def __init__(
        self, text: str, *, code: int, message: str, data: Any = None, target: str | None = None
    ) -> None:
        super().__init__(text, target=target)
        self.code = code
        self.message = message
        self.data = data


class MalformedResponse(MCPProtocolError):
    """The answer is not valid JSON-RPC or not the shape MCP requires."""

    kind = "malformed"


class ProtocolVersionError(MCPProtocolError):
    """The server chose a protocol version this client does not speak."""

    kind = "protocol-version"


class ResponseTooLarge(MCPProtocolError):
    """A response (or one event of a stream) exceeded ``ClientOptions.max_response_bytes``."""

    kind = "too-large"

    def __init__(self, message: str, *, limit: int, target: str | None = None) -> None:
        super().__init__(message, target=target)
        self.limit = limit


class ConnectionLost(MCPConnectionError):
    """Anything else that broke in a transport: a dropped connection, a process that exited."""

    kind = "transport"


class ConfinementError(MCPClientError):
    """A request the server steered outside ``ClientOptions.confine_to`` (a redirect, a
    message endpoint): refused before anything was sent there."""

    kind = "confinement"


class InvalidInput(MCPClientError):
    """A URL, command, header or tool argument the client cannot send at all."""

    kind = "invalid-input"


class SessionExpired(MCPHTTPError):
    """HTTP 404 for a request that carried a session id: the server forgot the session.

    The session re-initializes once and retries; the error escapes only if that fails too.
    """


# Deprecated names, kept for one release: they collide with httpx.HTTPStatusError,
# httpx.TransportError and the official SDK's McpError.
MCPError = MCPClientError
HTTPStatusError = MCPHTTPError
TransportError = ConnectionLost
