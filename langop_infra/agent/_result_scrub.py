"""What the registry's scrubber knows, and how a tool result goes through it.

The registry shares the HTTP tools' :class:`~langop_infra.core._redact.Scrubber` and teaches
it what the MCP servers are sent: the client options' headers, each server's headers, the
values of a stdio server's env whose names say they are credentials (``LOG_LEVEL=info``
would garble results), the credential-named query values of each server's URL (a routed
``?apikey=${VAR}`` once expanded), and the OAuth client secret and tokens the options'
``auth`` holds (learned again before each result: tokens change).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import parse_qsl, unquote, urlsplit

from langop_infra.agent._servers import ServerEntry
from langop_infra.config.checks._endpoint_advice import is_credential_param
from langop_infra.core._redact import Scrubber
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._session import ToolCallResult

_CREDENTIAL_NAME = re.compile(r"(?i)key|token|secret|pass|auth|credential|cookie|session")


def registry_scrubber(
    scrubber: Scrubber, options: ClientOptions, entries: Iterable[ServerEntry]
) -> Scrubber:
    """``scrubber``, taught the credentials the registry's servers are sent."""
    scrubber.add(
        options.headers,
        [
            [entry.headers, credential_env(entry.env), query_credentials(entry.url)]
            for entry in entries
        ],
        held_secrets(options),
    )
    return scrubber


def scrubbed_result(
    scrubber: Scrubber, options: ClientOptions, result: ToolCallResult
) -> ToolCallResult:
    """``result`` without any credential the agent sent (a server may echo them)."""
    scrubber.learn(held_secrets(options))  # tokens fetched since the last call
    return dataclasses.replace(
        result,
        content=scrubber.value(result.content),
        structured_content=scrubber.value(result.structured_content),
    )


def held_secrets(options: ClientOptions) -> list[str]:
    """The client secret and tokens an OAuth ``auth`` holds (none for other auths)."""
    held: object = getattr(options.auth, "held_secrets", None)
    values: object = held() if callable(held) else []
    return [str(value) for value in cast("list[Any]", values)]


def credential_env(env: Mapping[str, str]) -> list[str]:
    """The values of ``env`` whose names say they are credentials (KEY, TOKEN, SECRET,
    PASS, AUTH, CREDENTIAL, COOKIE, SESSION)."""
    return [value for key, value in env.items() if _CREDENTIAL_NAME.search(key)]


def url_credentials(url: str) -> list[str]:
    """The password of ``url``'s userinfo (raw and decoded) and its credential query values."""
    try:
        password = urlsplit(url).password or ""
    except ValueError:
        return []
    netloc = urlsplit(url).netloc.rpartition("@")[0]
    return [netloc.partition(":")[2], unquote(password), *query_credentials(url)]


def query_credentials(url: str) -> list[str]:
    """The values of ``url``'s query parameters whose names say they are credentials, as
    sent and decoded."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    found: list[str] = []
    for piece in query.split("&"):
        raw = piece.partition("=")[2]
        for name, value in parse_qsl(piece, keep_blank_values=True):
            if value and is_credential_param(name):
                found += [raw, value]
    return found
