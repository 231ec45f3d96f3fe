"""An HTTP tool's credential: checked as a header value, and its OAuth token, kept in check.

:func:`header_value` trims the trailing CR/LF a ``kubectl create secret --from-file``
leaves and refuses any other control character, naming the env var but never the value
(h11 would quote the whole header in its error). :class:`TokenKeeper` holds one
client-credentials token per tool: shared by concurrent calls, renewed shortly before it
expires, and replaced when the tool answers 401; a refused token is replaced at once, a
refused replacement only after a backoff (1 s, doubling, at most 5 min), so a tool that
refuses every token costs one token request per backoff, not one per call.
:func:`may_resend` says whether a refused request may be sent again with the new token.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import httpx

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.mcp.oauth._discovery import is_loopback

# A cached OAuth token is renewed this long before it expires (clock skew, request time).
TOKEN_MARGIN_SECONDS = 30.0
REPLACE_BACKOFF_SECONDS = 1.0
REPLACE_BACKOFF_MAX_SECONDS = 300.0
# RFC 9110 §9.2.2: sending these twice has the effect of sending them once.
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_INVALID_TOKEN = re.compile(r'(?i)\berror\s*=\s*"?invalid_token"?')


class CredentialProblem(LangopError):
    """A credential that cannot be used; the message never holds the value."""


def header_value(value: str, where: str, variable: str) -> str:
    """``value`` as a header value: one trailing CR/LF run trimmed (a file-made Secret's
    newline), any other control character refused without quoting the value."""
    trimmed = value.rstrip("\r\n")
    if _CONTROL.search(trimmed):
        raise CredentialProblem(
            f"{where}.authentication: the value of {variable or 'the credential'} holds a "
            "control character (a line break or other byte below 0x20) that no HTTP header "
            "may carry; recreate the Secret without it (only a trailing newline is trimmed)"
        )
    return trimmed


def oauth_settings(value: str) -> dict[str, Any] | None:
    """An oauth2 credential's JSON document, or ``None`` for a ready access token."""
    if not value.lstrip().startswith("{"):
        return None
    try:
        settings = _json.read(value)
    except ValueError:
        return None
    return cast("dict[str, Any]", settings) if isinstance(settings, dict) else None


def checked_credential(where: str, auth_type: str, value: str, variable: str) -> str:
    """The credential as sent: an oauth2 JSON document's ``tokenUrl`` checked, any other
    value checked as a header value (:func:`header_value`)."""
    settings = oauth_settings(value) if auth_type == "oauth2" else None
    if settings is None:
        return header_value(value, where, variable)
    problem = token_url_problem(str(settings.get("tokenUrl") or ""))
    if problem and settings.get("tokenUrl"):
        raise CredentialProblem(f"{where}.authentication: {problem} (the JSON in {variable})")
    return value


def token_url_problem(url: str) -> str | None:
    """Why ``url`` may not be a token endpoint: it must be https, or http on loopback."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname and is_loopback(url):
        return None
    return (
        "oauth2: tokenUrl must be an https URL (plain http only on loopback): the client "
        "secret travels with every token request"
    )


def may_resend(method: str, response: httpx.Response) -> bool:
    """Whether a request refused with 401 may be sent again: an idempotent one always; any
    other only when the challenge says the token was refused (RFC 6750 ``invalid_token``),
    which shows the server did not act on the request."""
    if method.upper() in IDEMPOTENT:
        return True
    challenge = ", ".join(response.headers.get_list("www-authenticate"))
    return bool(_INVALID_TOKEN.search(challenge))


# Doublings past this one only meet the cap; unbounded, 2.0 ** 1024 overflows a float.
_DOUBLINGS = math.ceil(math.log2(REPLACE_BACKOFF_MAX_SECONDS / REPLACE_BACKOFF_SECONDS))


def replace_backoff(streak: int) -> float:
    """Seconds before the next replacement after ``streak`` refused ones: doubling from
    :data:`REPLACE_BACKOFF_SECONDS` up to :data:`REPLACE_BACKOFF_MAX_SECONDS`, for good."""
    delay = REPLACE_BACKOFF_SECONDS * 2 ** min(streak - 1, _DOUBLINGS)
    return min(delay, REPLACE_BACKOFF_MAX_SECONDS)


@dataclass
class Token:
    value: str
    expires: float


@dataclass
class _Refusals:
    streak: int = 0  # replacements since a token last worked
    next_allowed: float = 0.0


Fetch = Callable[[], Any]  # an awaitable factory: () -> Awaitable[Token]


class TokenKeeper:
    """One tool's cached token, its renewals and its 401 replacements."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._tokens: dict[str, Token] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._refusals: dict[str, _Refusals] = {}

    async def token(self, tool: str, fetch: Fetch) -> str:
        """The tool's live token, fetched when there is none or it is about to expire."""
        async with self._locks.setdefault(tool, asyncio.Lock()):
            cached = self._tokens.get(tool)
            if cached is not None and self._clock() < cached.expires:
                return cached.value
            self._tokens[tool] = await fetch()
            return self._tokens[tool].value

    async def replace(self, tool: str, refused: str, fetch: Fetch) -> str | None:
        """A new token for one the tool refused with 401, or ``None`` while the backoff
        runs (the refused token stays the answer). Concurrent callers share one new token."""
        async with self._locks.setdefault(tool, asyncio.Lock()):
            cached = self._tokens.get(tool)
            if cached is not None and cached.value != refused:
                return cached.value  # a concurrent call already replaced it
            state = self._refusals.setdefault(tool, _Refusals())
            now = self._clock()
            if now < state.next_allowed:
                return None
            state.streak += 1
            state.next_allowed = now + replace_backoff(state.streak)
            self._tokens[tool] = await fetch()
            return self._tokens[tool].value

    def worked(self, tool: str) -> None:
        """The tool took its token: the next refusal is replaced at once again."""
        self._refusals.pop(tool, None)


def lifetime(reply: Mapping[str, object], clock: Callable[[], float] = time.monotonic) -> float:
    """When a token with this token response's ``expires_in`` should be renewed."""
    given = reply.get("expires_in")
    seconds = float(given) if isinstance(given, (int, float)) else 3600.0
    return clock() + max(seconds - TOKEN_MARGIN_SECONDS, 0.0)
