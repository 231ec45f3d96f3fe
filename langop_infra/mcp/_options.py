"""How the client connects: headers, time limits, retries, caps, TLS, transport, protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

if TYPE_CHECKING:
    import httpx2

TransportName = Literal["auto", "streamable-http", "sse", "stdio"]
TRANSPORTS: tuple[str, ...] = ("auto", "streamable-http", "sse", "stdio")
# "auto" tries server/discover (2026-07-28) and falls back to initialize; a version pins it.
PROTOCOLS: tuple[str, ...] = (
    "auto",
    *sorted((*HANDSHAKE_PROTOCOL_VERSIONS, *MODERN_PROTOCOL_VERSIONS), reverse=True),
)
# Fields with a smallest allowed value (timeout and deadline must be above zero).
_LEAST = (
    ("connect_retries", 0),
    ("retry_backoff", 0),
    ("max_response_bytes", 1),
    ("max_pages", 1),
    ("max_total_bytes", 1),
    ("max_concurrent_calls", 1),
    ("max_queued_calls", 0),
    ("max_tools", 1),
)


@dataclass(frozen=True)
class ClientOptions:
    """Connection options shared by every transport.

    ``timeout`` bounds each request; ``deadline`` bounds a whole operation (connect,
    initialize and list every page); ``None`` means no overall bound.
    ``max_total_bytes`` and ``max_tools`` bound a whole listing over all its pages;
    ``protocol`` is ``auto`` or a version to speak; ``listen`` opens the server's GET
    stream (server-to-client requests and notifications) on stateful sessions.
    ``confine_to``, an http(s) URL prefix ending in ``/``, keeps every request under it:
    for headers valid beyond the server (an API server's proxy), no redirect is followed and
    a message endpoint outside it is refused (:mod:`langop_infra.mcp._confinement`).
    ``tls_server_name`` is the name an https server's certificate is checked against (and
    sent as SNI) instead of the URL's host: a kubeconfig's ``tls-server-name``.
    ``max_concurrent_calls`` bounds the ``tools/call`` requests a session has in flight;
    up to ``max_queued_calls`` more wait (each at most ``timeout``) and any beyond are
    refused at once with :class:`~langop_infra.mcp._errors.ServerBusy`.
    """

    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout: float = 10.0
    deadline: float | None = 30.0
    connect_retries: int = 3
    retry_backoff: float = 0.2
    max_response_bytes: int = 8 * 1024 * 1024
    max_pages: int = 100
    max_total_bytes: int = 32 * 1024 * 1024
    max_tools: int = 10_000
    protocol: str = "auto"
    listen: bool = True
    verify: bool | str = True
    cert: str | tuple[str, str] | None = None
    transport: TransportName = "auto"
    # An httpx2.Auth for HTTP transports, e.g. langop_infra.mcp.oauth.OAuth2Auth.
    auth: httpx2.Auth | None = None
    confine_to: str | None = None
    tls_server_name: str | None = None
    max_concurrent_calls: int = 32
    max_queued_calls: int = 256

    def __post_init__(self) -> None:
        problems: list[str] = []
        if not self.timeout > 0:
            problems.append(f"timeout must be > 0 seconds, got {self.timeout!r}")
        if self.deadline is not None and not self.deadline > 0:
            problems.append(f"deadline must be > 0 seconds or None, got {self.deadline!r}")
        for name, least in _LEAST:
            if getattr(self, name) < least:
                problems.append(f"{name} must be >= {least}, got {getattr(self, name)!r}")
        if self.protocol not in PROTOCOLS:
            problems.append(
                f"protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}"
            )
        if self.transport not in TRANSPORTS:
            problems.append(
                f"transport must be one of {', '.join(TRANSPORTS)}, got {self.transport!r}"
            )
        if self.confine_to is not None:
            from langop_infra.mcp._confinement import prefix_problem

            problem = prefix_problem(self.confine_to)
            if problem:
                problems.append(problem)
        if problems:
            raise ValueError("invalid ClientOptions: " + "; ".join(problems))
        # Frozen means frozen: a caller mutating its dict afterwards must not change us.
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))

    def __hash__(self) -> int:
        # headers are a mapping and auth need not be hashable: by content and by identity.
        special = {"headers": tuple(sorted(self.headers.items())), "auth": id(self.auth)}
        return hash(tuple(special.get(f.name, getattr(self, f.name)) for f in fields(self)))
