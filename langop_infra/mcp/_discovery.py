"""The ``url`` transport: find a server's MCP endpoint from its well-known URL.

Best effort, as there is no single standard yet: GET the URL (or, for a bare origin,
``/.well-known/mcp`` then ``/.well-known/mcp.json``); a JSON document names the endpoint as
``endpoint``, ``url``, ``mcpEndpoint``, ``streamableHttp``, ``transport.url`` or
``remotes[].url`` (the MCP registry's ``server.json``), relative or absolute.
"""

from __future__ import annotations

from typing import Any, cast
from urllib.parse import urlsplit

import httpx2

import langop_infra._json as _json
from langop_infra.mcp._errors import HTTPStatusError, TransportError
from langop_infra.mcp._http import HTTPConnection, display_url
from langop_infra.mcp._options import ClientOptions

__all__ = ["discover_endpoint"]

_WELL_KNOWN = ("/.well-known/mcp", "/.well-known/mcp.json")
_KEYS = ("endpoint", "url", "mcpEndpoint", "mcp_endpoint", "streamableHttp", "streamable_http")
_DOCUMENT_BYTES = 256 * 1024


async def discover_endpoint(url: str, options: ClientOptions) -> str:
    """The MCP endpoint URL that ``url`` (a well-known URL or a bare origin) points to."""
    parts = urlsplit(url)
    candidates = [url]
    if parts.path in ("", "/"):
        candidates = [url.rstrip("/") + path for path in _WELL_KNOWN]
    http = HTTPConnection(url, options)
    tried: list[str] = []
    try:
        for candidate in candidates:
            document, status = await _fetch(http, candidate)
            endpoint = _endpoint_in(document)
            if endpoint is not None:
                return _resolve(candidate, endpoint)
            tried.append(f"{display_url(candidate)} (HTTP {status})")
    finally:
        await http.aclose()
    raise TransportError(
        f"no MCP endpoint found at {', '.join(tried)}: the url transport expects a JSON "
        "document naming it ('endpoint', 'url' or 'remotes[].url'); give the endpoint "
        "itself with transport: http",
        target=display_url(url),
    )


async def _fetch(http: HTTPConnection, url: str) -> tuple[Any, int]:
    try:
        response = await http.send(
            "GET", url, headers={"Accept": "application/json"}, what="endpoint discovery"
        )
    except HTTPStatusError as exc:  # a refused redirect: no document here
        return None, exc.status
    status = response.status_code
    body = bytearray()
    try:
        if status == 200:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > _DOCUMENT_BYTES:
                    return None, status
    except httpx2.HTTPError:
        return None, status
    finally:
        await response.aclose()
    try:
        return _json.read(body), status
    except ValueError:
        return None, status


def _endpoint_in(document: Any) -> str | None:
    if not isinstance(document, dict):
        return None
    fields = cast("dict[str, Any]", document)
    for key in _KEYS:
        value = fields.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if (url := _url_of(value)) is not None:
            return url
    found = _endpoint_in(fields.get("transport"))
    if found:
        return found
    remotes: Any = fields.get("remotes") or []
    for remote in remotes:
        # server.json: prefer streamable HTTP; the legacy SSE one works through auto mode.
        if (url := _url_of(remote)) is not None:
            return url
    return None


def _url_of(value: object) -> str | None:
    """The ``url`` string of a JSON object; None for anything else."""
    url = cast("dict[str, Any]", value).get("url") if isinstance(value, dict) else None
    return url if isinstance(url, str) else None


def _resolve(document_url: str, endpoint: str) -> str:
    resolved = str(httpx2.URL(document_url).join(endpoint))
    if urlsplit(document_url).scheme == "https" and urlsplit(resolved).scheme != "https":
        raise TransportError(
            f"{display_url(document_url)} names the endpoint {display_url(resolved)}, which "
            "drops HTTPS; refusing to send credentials there",
            target=display_url(document_url),
        )
    return resolved
