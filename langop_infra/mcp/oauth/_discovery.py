"""Finding who issues tokens for an MCP server: RFC 9728, RFC 8414 and OpenID discovery.

Spec: modelcontextprotocol.io, "Authorization", revisions 2025-11-25 and 2025-03-26 (the
latter's fallback when a server publishes no protected resource metadata).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth.utils import (
    build_oauth_authorization_server_metadata_discovery_urls,
    build_protected_resource_metadata_discovery_urls,
)
from mcp.shared.auth_utils import check_resource_allowed, resource_url_from_server_url

from langop_infra.mcp._http import display_url, json_object, origin
from langop_infra.mcp.oauth._errors import OAuthError

log = logging.getLogger("langop_infra.mcp.oauth")

_MAX_METADATA_BYTES = 256 * 1024
_AUTH_PARAM = re.compile(r'([A-Za-z_][\w.-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))')


@dataclass(frozen=True)
class Challenge:
    """The parameters of a ``WWW-Authenticate: Bearer ...`` challenge (RFC 6750, RFC 9728)."""

    scope: tuple[str, ...] = ()
    resource_metadata: str | None = None
    error: str | None = None

    @classmethod
    def parse(cls, header: str | None) -> Challenge:
        """The Bearer challenge in ``header``; an empty one when there is none."""
        header = header or ""
        start = re.search(r"(?i)\bbearer\b", header)
        params: dict[str, str] = {}
        for match in _AUTH_PARAM.finditer(header, start.end() if start else 0):
            value = match.group(2) if match.group(2) is not None else match.group(3)
            params.setdefault(match.group(1).lower(), re.sub(r"\\(.)", r"\1", value))
        return cls(
            scope=tuple(params.get("scope", "").split()),
            resource_metadata=params.get("resource_metadata") or None,
            error=params.get("error") or None,
        )


@dataclass(frozen=True)
class AuthorizationServer:
    """Where to get tokens for one MCP server, and what its authorization server supports."""

    resource: str
    issuer: str
    metadata: dict[str, Any]
    scopes_supported: tuple[str, ...] = ()  # from the protected resource metadata
    legacy: bool = False  # no metadata documents at all: 2025-03-26 default endpoints

    def endpoint(self, name: str) -> str:
        """``authorization_endpoint``, ``token_endpoint`` or ``registration_endpoint`` ("")."""
        value = self.metadata.get(name)
        return value if isinstance(value, str) else ""

    def listed(self, key: str, default: Sequence[str] = ()) -> Sequence[object]:
        """List ``key`` of the metadata; ``default`` when there is none."""
        value = self.metadata.get(key)
        return cast("list[object]", value) if isinstance(value, list) else default

    def supports(self, key: str, value: str) -> bool:
        """Whether list ``key`` of the metadata holds ``value``."""
        return value in self.listed(key)


def same_issuer(pinned: str, issuers: list[str]) -> bool:
    """Whether ``issuers`` holds ``pinned`` (RFC 8414 compares exactly; a trailing slash is
    forgiven, since people write both)."""
    return any(pinned.rstrip("/") == issuer.rstrip("/") for issuer in issuers)


def is_loopback(url: str) -> bool:
    """Whether ``url`` names this machine (where plain HTTP is acceptable)."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def prm_urls(server_url: str, hint: str | None) -> list[str]:
    """Where to look for protected resource metadata, in the order the spec gives."""
    return list(dict.fromkeys(build_protected_resource_metadata_discovery_urls(hint, server_url)))


def metadata_urls(issuer: str) -> list[str]:
    """RFC 8414 and OpenID Connect discovery URLs for ``issuer``, path-aware, in spec order."""
    return build_oauth_authorization_server_metadata_discovery_urls(issuer, issuer)


async def read_capped(response: httpx2.Response, limit: int, too_big: str, shown: str) -> bytes:
    """The body of ``response``; :class:`OAuthError` ``too_big`` once it passes ``limit`` bytes."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise OAuthError(too_big, target=shown)
    return bytes(body)


async def fetch_json(client: httpx2.AsyncClient, url: str, what: str) -> dict[str, object] | None:
    """GET a JSON object; None when the server has none there (any 4xx, or not JSON)."""
    shown = display_url(url)
    try:
        async with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
            if response.status_code != 200:
                return None
            limit = _MAX_METADATA_BYTES
            too_big = (
                f"{shown} sent more than {limit} bytes of {what}; that is no metadata document"
            )
            body = await read_capped(response, limit, too_big, shown)
    except httpx2.HTTPError as exc:
        raise OAuthError(
            f"cannot fetch {what} from {shown}: {type(exc).__name__} "
            f"{str(exc)[:120]}; check that the server is reachable",
            target=shown,
        ) from None
    return json_object(body)


async def find_resource_metadata(
    client: httpx2.AsyncClient, server_url: str, hint: str | None
) -> dict[str, object] | None:
    """The first protected resource metadata that lists authorization servers, or None."""
    for url in prm_urls(server_url, hint):
        prm = await fetch_json(client, url, "protected resource metadata")
        log.debug("protected resource metadata at %s: %s", display_url(url), prm is not None)
        if prm is not None and isinstance(prm.get("authorization_servers"), list):
            return prm
    return None


def _strings(value: object) -> list[str]:
    """The strings of ``value`` when it is a list."""
    return (
        [s for s in cast("list[object]", value) if isinstance(s, str)]
        if isinstance(value, list)
        else []
    )


async def discover(
    client: httpx2.AsyncClient,
    server_url: str,
    challenge: Challenge,
    issuer: str | None = None,
) -> AuthorizationServer:
    """Protected resource metadata, then the authorization server's metadata (``issuer``'s
    when the metadata lists it among several)."""
    hint, shown = challenge.resource_metadata, display_url(server_url)
    if hint and urlsplit(hint).scheme != "https" and origin(hint) != origin(server_url):
        raise OAuthError(
            f"{shown} names its resource metadata at {display_url(hint)}, "
            "which is neither HTTPS nor on the server's own origin; refusing to trust it",
            target=shown,
        )
    prm = await find_resource_metadata(client, server_url, hint)
    resource = resource_url_from_server_url(server_url)
    if prm is None:
        # 2025-03-26: no resource metadata; the server's origin is its authorization server.
        parts = urlsplit(server_url)
        return await _authorization_server(
            client, f"{parts.scheme}://{parts.netloc}", resource, (), legacy=True
        )
    claimed = prm.get("resource")
    if isinstance(claimed, str) and claimed:
        if not check_resource_allowed(resource, claimed):
            raise OAuthError(
                f"the protected resource metadata of {shown} names another "
                f"resource ({display_url(claimed)}); refusing to get a token for it",
                target=shown,
            )
        resource = claimed
    servers = [s for s in _strings(prm["authorization_servers"]) if s]
    if not servers:
        raise OAuthError(
            f"the protected resource metadata of {shown} lists no "
            "authorization server; the server is misconfigured",
            target=shown,
        )
    pinned = [s for s in servers if issuer is not None and same_issuer(issuer, [s])]
    scopes = tuple(_strings(prm.get("scopes_supported")))
    return await _authorization_server(client, (pinned or servers)[0], resource, scopes)


async def _authorization_server(
    client: httpx2.AsyncClient,
    issuer: str,
    resource: str,
    scopes_supported: tuple[str, ...],
    *,
    legacy: bool = False,
) -> AuthorizationServer:
    for url in metadata_urls(issuer):
        metadata = await fetch_json(client, url, "authorization server metadata")
        log.debug("authorization server metadata at %s: %s", display_url(url), metadata is not None)
        if metadata is None or not isinstance(metadata.get("token_endpoint"), str):
            continue
        claimed = metadata.get("issuer")
        if not legacy and claimed != issuer:
            raise OAuthError(
                f"the authorization server metadata at {display_url(url)} names issuer "
                f"{str(claimed)[:100]!r}, not {issuer!r} (RFC 8414 §3.3); refusing it",
                target=display_url(issuer),
            )
        return AuthorizationServer(resource, issuer, metadata, scopes_supported)
    if not legacy:
        raise OAuthError(
            f"found no authorization server metadata for {display_url(issuer)} (tried "
            f"{', '.join(display_url(u) for u in metadata_urls(issuer))}); check the issuer URL",
            target=display_url(issuer),
        )
    endpoints = {
        "authorization_endpoint": issuer + "/authorize",
        "token_endpoint": issuer + "/token",
        "registration_endpoint": issuer + "/register",
    }
    return AuthorizationServer(resource, issuer, endpoints, scopes_supported, legacy=True)


async def challenge_of(http: httpx2.AsyncClient, url: str) -> Challenge | None:
    """The server's challenge to a request without a token, or None when it sends none."""
    ping = b'{"jsonrpc": "2.0", "id": 0, "method": "ping"}'
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    try:
        async with http.stream("POST", url, content=ping, headers=headers) as response:
            if response.status_code != 401:
                return None
            return Challenge.parse(response.headers.get("www-authenticate"))
    except httpx2.HTTPError:
        return None  # the session's own request will say what is wrong
