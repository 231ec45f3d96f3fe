"""Who may call the built-in agent over A2A: bearer tokens, one per caller, from Secrets.

``A2A_ACCESS`` is ``authenticated`` (the default) or ``open`` (asked for by name). Each
caller's token reaches the pod as ``A2A_CALLER_<CALLER>_TOKEN`` through ``secretKeyRef``.
Authenticated, a request other than the agent card's ``GET`` needs ``Authorization: Bearer
<token>`` matching a caller's token; the comparison runs against every caller, in constant
time (HMAC digests, ``hmac.compare_digest``), so neither a token's length nor its prefix nor
which caller it belongs to shows in the timing. Refused: 401 with ``WWW-Authenticate``, and
no turn runs. The caller's name rides on to the app as ``scope["state"]["a2a_caller"]``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["ACCESS_MODES", "BearerAuth", "Callers", "load_callers"]

ACCESS_MODES = ("authenticated", "open")
_PREFIX, _SUFFIX = "A2A_CALLER_", "_TOKEN"
MIN_TOKEN = 16  # shorter tokens are guessable; refused at start


@dataclass(frozen=True)
class Callers:
    """The access mode and each caller's token digest (keyed: the tokens never stay)."""

    access: str = "authenticated"
    digests: Mapping[str, bytes] = field(default_factory=dict[str, bytes], repr=False)
    key: bytes = field(default_factory=lambda: os.urandom(32), repr=False)

    @property
    def open(self) -> bool:
        return self.access == "open"

    def caller(self, token: str) -> str | None:
        """The caller whose token ``token`` is, compared with every caller's."""
        presented = self._digest(token)
        found = None
        for name, digest in self.digests.items():
            if hmac.compare_digest(presented, digest):
                found = name  # no early exit: every caller is compared
        return found

    def _digest(self, token: str) -> bytes:
        return hmac.new(self.key, token.encode(), hashlib.sha256).digest()


def load_callers(env: Mapping[str, str]) -> Callers:
    """``A2A_ACCESS`` and the ``A2A_CALLER_<CALLER>_TOKEN`` variables, checked; ValueError
    names the variable and the fix."""
    access = (env.get("A2A_ACCESS") or "authenticated").strip().lower()
    if access not in ACCESS_MODES:
        raise ValueError(
            f"A2A_ACCESS={env.get('A2A_ACCESS')!r}: use authenticated (callers with tokens) "
            "or open (anyone who reaches the port)"
        )
    key = os.urandom(32)
    digests: dict[str, bytes] = {}
    for name, value in sorted(env.items()):
        named = len(name) > len(_PREFIX) + len(_SUFFIX)  # A2A_CALLER_TOKEN names no caller
        if not (named and name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
            continue
        caller = name[len(_PREFIX) : -len(_SUFFIX)].lower().replace("_", "-")
        token = value.strip()
        if len(token) < MIN_TOKEN:
            raise ValueError(
                f"{name}: a caller's token needs at least {MIN_TOKEN} characters; "
                "make one with `openssl rand -hex 32` and keep it in a Secret"
            )
        digests[caller] = hmac.new(key, token.encode(), hashlib.sha256).digest()
    return Callers(access, digests, key)


class BearerAuth:
    """ASGI middleware: every request but ``public`` (method, path) pairs needs a caller's
    bearer token, unless access is open."""

    def __init__(
        self, app: ASGIApp, callers: Callers, public: frozenset[tuple[str, str]] = frozenset()
    ) -> None:
        self.app, self.callers, self.public = app, callers, public

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.callers.open:
            await self.app(scope, receive, send)
            return
        if (scope["method"], scope["path"]) in self.public:
            await self.app(scope, receive, send)
            return
        token = _bearer(scope)
        caller = self.callers.caller(token) if token else None
        if caller is None:
            await _refuse(send, presented=token is not None)
            return
        scope.setdefault("state", {})["a2a_caller"] = caller
        await self.app(scope, receive, send)


def _bearer(scope: Scope) -> str | None:
    """The token of the request's ``Authorization: Bearer`` header, or None."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").strip().partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return ""
    return None


async def _refuse(send: Send, *, presented: bool) -> None:
    """401, with the challenge RFC 6750 asks for (``invalid_token`` when one was sent)."""
    challenge = 'Bearer realm="a2a"' + (', error="invalid_token"' if presented else "")
    body = json.dumps(
        {
            "error": "this agent answers authenticated callers only: send Authorization: "
            "Bearer <your caller token>"
        }
    ).encode()
    headers = [
        (b"www-authenticate", challenge.encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
