"""The client's one exception family: a short, actionable message and a ``kind`` slug each."""

from __future__ import annotations

from typing import Any, ClassVar


class MCPError(Exception):
    """Base of every error the MCP client raises; ``str()`` is one line naming the server."""

    kind: ClassVar[str] = "error"

    def __init__(self, message: str, *, target: str | None = None) -> None:
        # One line, always: these messages end up in CLI output and Pulumi diagnostics.
        super().__init__(" ".join(message.split()))
        self.target = target


class ServerUnreachable(MCPError):
    """No connection: refused, unknown host, TLS handshake failed, process would not start."""

    kind = "unreachable"


class MCPTimeout(MCPError):
    """No answer within the per-call timeout or the operation's deadline."""

    kind = "timeout"


class HTTPStatusError(MCPError):
    """The server answered with an HTTP status the client cannot use (or a refused redirect)."""

    kind = "http-status"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        target: str | None = None,
        www_authenticate: str | None = None,
    ) -> None:
        super().__init__(message, target=target)
        self.status = status
        self.www_authenticate = www_authenticate


class JSONRPCError(MCPError):
    """The server answered with a JSON-RPC error object."""

    kind = "jsonrpc"

    def __init__(
        self, text: str, *, code: int, message: str, data: Any = None, target: str | None = None
    ) -> None:
        super().__init__(text, target=target)
        self.code = code
        self.message = message
        self.data = data


class MalformedResponse(MCPError):
    """The answer is not valid JSON-RPC or not the shape MCP requires."""

    kind = "malformed"


class ProtocolVersionError(MCPError):
    """The server chose a protocol version this client does not speak."""

    kind = "protocol-version"


class ResponseTooLarge(MCPError):
    """A response (or one event of a stream) exceeded ``ClientOptions.max_response_bytes``."""

    kind = "too-large"

    def __init__(self, message: str, *, limit: int, target: str | None = None) -> None:
        super().__init__(message, target=target)
        self.limit = limit


class TransportError(MCPError):
    """Anything else that broke in a transport: a dropped connection, a process that exited."""

    kind = "transport"


class ConfinementError(MCPError):
    """A request the server steered outside ``ClientOptions.confine_to`` (a redirect, a
    message endpoint): refused before anything was sent there."""

    kind = "confinement"


class InvalidInput(MCPError):
    """A URL, command, header or tool argument the client cannot send at all."""

    kind = "invalid-input"


class SessionExpired(HTTPStatusError):
    """HTTP 404 for a request that carried a session id: the server forgot the session.

    The session re-initializes once and retries; the error escapes only if that fails too.
    """
