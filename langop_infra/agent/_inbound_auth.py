"""Who may call the built-in agent over A2A: bearer tokens, one per caller, from Secrets;
and callers known by a signed token (a Kubernetes service account, an OIDC subject), on the
agent's allow-list.

``A2A_ACCESS`` is ``authenticated`` (the default) or ``open`` (asked for by name). Each
caller's token reaches the pod as ``A2A_CALLER_<CALLER>_TOKEN`` through ``secretKeyRef``.
Authenticated, a request other than the agent card's ``GET`` needs ``Authorization: Bearer
<token>`` matching a caller's token; the comparison runs against every caller, in constant
time (HMAC digests, ``hmac.compare_digest``), so neither a token's length nor its prefix nor
which caller it belongs to shows in the timing. A token no caller holds goes to the token
verifier, if any (:mod:`langop_infra.agent._token_verify`): the identity it vouches for must
be some ``A2A_CALLER_<CALLER>_IDENTITY`` (the allow-list). Refused: 401 with
``WWW-Authenticate`` for a missing or invalid token, 403 (``insufficient_scope``) for a valid
one of someone not on the list, and no turn runs. The caller rides on to the app as Starlette's
``scope["user"]``, which a2a-sdk hands the executor as the request's authenticated user.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from starlette.authentication import AuthCredentials, SimpleUser
from starlette.types import ASGIApp, Receive, Scope, Send

from langop_infra.agent._token_verify import TokenVerifier, load_verifier

__all__ = ["ACCESS_MODES", "BearerAuth", "Callers", "load_callers"]

ACCESS_MODES = ("authenticated", "open")
_PREFIX, _SUFFIX, _IDENTITY = "A2A_CALLER_", "_TOKEN", "_IDENTITY"
MIN_TOKEN = 16  # shorter tokens are guessable; refused at start


@dataclass(frozen=True)
class Callers:
    """The access mode and each caller's token digest (keyed: the tokens never stay)."""

    access: str = "authenticated"
    digests: Mapping[str, bytes] = field(default_factory=dict[str, bytes], repr=False)
    key: bytes = field(default_factory=lambda: os.urandom(32), repr=False)
    #: Identity a verified token vouches for -> caller name (the allow-list).
    identities: Mapping[str, str] = field(default_factory=dict[str, str])
    verifier: TokenVerifier | None = field(default=None, compare=False)

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
    """``A2A_ACCESS``, the ``A2A_CALLER_<CALLER>_TOKEN`` and ``_IDENTITY`` variables and the
    token verifier, checked; ValueError names the variable and the fix."""
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
    identities = _identities(env)
    verifier = load_verifier(env)
    if identities and verifier is None:
        raise ValueError(
            "A2A_CALLER_<CALLER>_IDENTITY names callers by a verified token, and "
            "A2A_TOKEN_VERIFY is unset: set it to tokenreview or oidc"
        )
    return Callers(access, digests, key, identities, verifier)


def _identities(env: Mapping[str, str]) -> dict[str, str]:
    """identity -> caller, from ``A2A_CALLER_<CALLER>_IDENTITY``."""
    found: dict[str, str] = {}
    for name, value in sorted(env.items()):
        named = len(name) > len(_PREFIX) + len(_IDENTITY)
        if not (named and name.startswith(_PREFIX) and name.endswith(_IDENTITY)):
            continue
        identity = value.strip()
        if not identity:
            raise ValueError(f"{name}: empty; give the caller's identity (its token's subject)")
        found[identity] = name[len(_PREFIX) : -len(_IDENTITY)].lower().replace("_", "-")
    return found


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
        verifier = self.callers.verifier
        if caller is None and token and verifier is not None:
            identity = await verifier.identity(token)
            caller = self.callers.identities.get(identity) if identity else None
            if identity and caller is None:
                await _refuse(send, presented=True, forbidden=True)
                return
        if caller is None:
            await _refuse(send, presented=token is not None)
            return
        scope["user"], scope["auth"] = SimpleUser(caller), AuthCredentials(["a2a"])
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


async def _refuse(send: Send, *, presented: bool, forbidden: bool = False) -> None:
    """401 with the challenge RFC 6750 asks for (``invalid_token`` when one was sent), or
    403 ``insufficient_scope`` for a valid token of a caller not on the list."""
    error = "insufficient_scope" if forbidden else "invalid_token"
    challenge = 'Bearer realm="a2a"' + (f', error="{error}"' if presented else "")
    why = (
        "your token is valid, and you are not among this agent's callers"
        if forbidden
        else "this agent answers authenticated callers only: send Authorization: "
        "Bearer <your caller token>"
    )
    body = json.dumps({"error": why}).encode()
    headers = [
        (b"www-authenticate", challenge.encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    status = 403 if forbidden else 401
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
