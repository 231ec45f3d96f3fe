"""How the client connects: headers, time limits, retries, caps, TLS, transport, protocol."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import langop_infra.mcp._modern as modern

if TYPE_CHECKING:
    import httpx2

TransportName = Literal["auto", "streamable-http", "sse", "stdio"]
TRANSPORTS: tuple[str, ...] = ("auto", "streamable-http", "sse", "stdio")
# "auto" tries server/discover (2026-07-28) and falls back to initialize; a version pins it.
PROTOCOLS: tuple[str, ...] = (
    "auto",
    *sorted((*modern.HANDSHAKE_VERSIONS, *modern.MODERN_VERSIONS), reverse=True),
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
        if self.connect_retries < 0:
            problems.append(f"connect_retries must be >= 0, got {self.connect_retries!r}")
        if self.retry_backoff < 0:
            problems.append(f"retry_backoff must be >= 0, got {self.retry_backoff!r}")
        if self.max_response_bytes < 1:
            problems.append(f"max_response_bytes must be >= 1, got {self.max_response_bytes!r}")
        if self.max_pages < 1:
            problems.append(f"max_pages must be >= 1, got {self.max_pages!r}")
        if self.max_total_bytes < 1:
            problems.append(f"max_total_bytes must be >= 1, got {self.max_total_bytes!r}")
        if self.max_concurrent_calls < 1:
            problems.append(f"max_concurrent_calls must be >= 1, got {self.max_concurrent_calls!r}")
        if self.max_queued_calls < 0:
            problems.append(f"max_queued_calls must be >= 0, got {self.max_queued_calls!r}")
        if self.max_tools < 1:
            problems.append(f"max_tools must be >= 1, got {self.max_tools!r}")
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
        return hash(
            (
                tuple(sorted(self.headers.items())),
                self.timeout,
                self.deadline,
                self.connect_retries,
                self.retry_backoff,
                self.max_response_bytes,
                self.max_pages,
                self.max_total_bytes,
                self.max_tools,
                self.protocol,
                self.listen,
                self.verify,
                self.cert,
                self.transport,
                id(self.auth),
                self.confine_to,
                self.tls_server_name,
                self.max_concurrent_calls,
                self.max_queued_calls,
            )
        )
