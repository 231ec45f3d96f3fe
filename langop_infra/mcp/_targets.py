"""Where a session connects: an http(s) URL or a stdio command, and headers HTTP can carry."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from urllib.parse import urlsplit

import httpx2

from langop_infra.mcp._errors import InvalidInput
from langop_infra.mcp._http import display_url


def resolve_target(
    target: str | Sequence[str], transport: str
) -> tuple[str | None, list[str] | None]:
    """(url, None) for an HTTP target, (None, argv) for a stdio one."""
    if isinstance(target, str) and transport != "stdio":
        url = target.strip()
        try:
            parts = urlsplit(url)
            valid = parts.scheme in ("http", "https") and bool(parts.hostname)
            _ = parts.port  # raises ValueError on a port that is not a number
            httpx2.URL(url)  # and httpx refuses control characters
        except (ValueError, httpx2.InvalidURL):
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


def check_headers(headers: Mapping[str, str]) -> None:
    """Refuse, before any connection, headers that HTTP cannot carry."""
    for name, value in headers.items():
        try:
            httpx2.Headers({name: value})
            valid = bool(name) and not any(c in ":\r\n\0 \t" for c in name)
            valid = valid and not any(c in "\r\n\0" for c in value)
        except (TypeError, UnicodeError):
            valid = False
        if not valid:
            raise InvalidInput(
                f"header {name!r} cannot be sent: names are tokens and values are ASCII on "
                "one line; fix the header (is a value from the environment garbled?)"
            )
