"""Keeping every request of a session under one URL prefix (``ClientOptions.confine_to``).

Some routes hand the client credentials that are good far beyond the MCP server: through the
Kubernetes API server's proxy the bearer token opens the whole API, and a ``Location`` or a
legacy-SSE ``endpoint`` the server names can land on the API server itself (the proxy
rewrites a ``Location`` with ``path.Join(prefix, location)``, which cleans ``..``). So a
confined client checks every URL before it sends anything there, follows no redirect, and
refuses a message endpoint outside the prefix. A URL is inside when its scheme, host and
port are the prefix's, it carries no user, and its path, percent-decoded once, has no ``.``,
``..`` or empty segment, no backslash or NUL, and starts with the prefix's path.
"""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

import httpx2

from langop_infra.mcp._errors import ConfinementError
from langop_infra.mcp._ports import effective_port


def prefix_problem(prefix: str) -> str | None:
    """Why ``prefix`` cannot be a confinement prefix, or None."""
    try:
        parts = urlsplit(prefix)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return f"confine_to {prefix!r} is not a URL"
    if not valid or parts.query or parts.fragment or not parts.path.endswith("/"):
        return (
            f"confine_to must be an http(s) URL with a host whose path ends in '/', "
            f"without query or fragment, got {prefix!r}"
        )
    return None


def _port(url: httpx2.URL) -> int | None:
    return effective_port(url.scheme, url.port)


def _path_problem(raw_path: str) -> str | None:
    decoded = unquote(raw_path)
    if "\\" in decoded or "\0" in decoded or "%" in decoded:
        return "its path holds a backslash, a NUL or a double percent-encoding"
    segments = decoded.split("/")
    if not decoded.startswith("/") or any(s in (".", "..") for s in segments):
        return "its path climbs with '.' or '..' segments once decoded"
    if "" in segments[1:-1]:
        return "its path has an empty segment ('//')"
    return None


def outside_reason(url: httpx2.URL | str, prefix: str) -> str | None:
    """Why ``url`` is not under ``prefix``, or None when it is."""
    try:
        target, base = httpx2.URL(str(url)), httpx2.URL(prefix)
    except httpx2.InvalidURL:
        return "it is not a valid URL"
    if (target.scheme, target.host, _port(target)) != (base.scheme, base.host, _port(base)):
        return "it is on another scheme, host or port"
    if target.userinfo:
        return "it carries a user name"
    raw = target.raw_path.decode("ascii").partition("?")[0]
    problem = _path_problem(raw)
    if problem:
        return problem
    base_path = unquote(base.raw_path.decode("ascii").partition("?")[0])
    if not unquote(raw).startswith(base_path):
        return "its path is not under the prefix"
    return None


def check(url: httpx2.URL | str, prefix: str | None, what: str) -> None:
    """Raise :class:`ConfinementError` unless ``url`` (where ``what`` would go) is under
    ``prefix``; nothing when ``prefix`` is None."""
    if prefix is None:
        return
    reason = outside_reason(url, prefix)
    if reason:
        raise ConfinementError(
            f"refused to send {what} to {shown(url)}, outside {prefix} ({reason}): this "
            "client's credentials are valid beyond the server, so every request stays under "
            "that prefix",
            target=shown(url),
        )


def shown(url: httpx2.URL | str) -> str:
    """``url`` without user, query or fragment, for messages."""
    parts = urlsplit(str(url))
    return parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="").geturl()
