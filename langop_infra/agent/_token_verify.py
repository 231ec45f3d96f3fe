"""Callers known by a signed token rather than a shared one: Kubernetes service-account
tokens checked by the API server's TokenReview, or an OIDC issuer's JWTs checked against its
published keys (JWKS); both with the agent's audience. A verified token yields the caller's
identity (``system:serviceaccount:<namespace>:<name>``, or the JWT's ``sub``); the agent's
allow-list (:mod:`langop_infra.agent._inbound_auth`) decides whether that identity may call.

``A2A_TOKEN_VERIFY`` is ``tokenreview`` or ``oidc``, ``A2A_TOKEN_AUDIENCE`` the audience a
token must name. TokenReview posts to the API server at ``KUBERNETES_SERVICE_HOST``/``_PORT``
with the pod's own token and CA (``A2A_SERVICE_ACCOUNT_DIR``, the standard mount unless set;
the pod's account needs ``system:auth-delegator``). OIDC reads ``A2A_OIDC_ISSUER`` and its
keys at ``A2A_OIDC_JWKS_URL`` (unset: the issuer's discovery document names them).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import ssl
import time
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, cast

import httpx
import jwt

import langop_infra._json as _json
from langop_infra.agent._capped import CappedTransport, read_capped
from langop_infra.mcp._ports import effective_port

__all__ = ["JwksTokens", "TokenReview", "TokenVerifier", "load_verifier"]

logger = logging.getLogger("langop_infra.agent")

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews"
MAX_ANSWER_BYTES = 1 << 20
CACHE_SECONDS = 60.0  # a verdict is reused this long: one review per caller a minute
CACHE_ENTRIES = 4096
REFETCH_SECONDS = 30.0  # an unknown key id fetches the keys again at most this often
LEEWAY_SECONDS = 30  # clock skew between the issuer and this pod
# Asymmetric only: with HS256 a published public key would be the shared secret.
ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
_TIMEOUT = httpx.Timeout(10.0)
# Three base64url parts: every service-account token is a JWT; anything else is not sent.
JWT_SHAPE = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$")


class TokenVerifier(Protocol):
    """Who a presented token says the caller is, once checked; None when it does not hold."""

    async def identity(self, token: str) -> str | None: ...

    async def aclose(self) -> None: ...


class Verdicts:
    """Recent verdicts by keyed token digest (the tokens never stay), bounded in count and
    age; only answers the verifier was sure of are kept."""

    def __init__(self, seconds: float = CACHE_SECONDS, entries: int = CACHE_ENTRIES) -> None:
        self._seconds, self._entries = seconds, entries
        self._key = os.urandom(32)
        self._held: OrderedDict[bytes, tuple[float, str | None]] = OrderedDict()

    def digest(self, token: str) -> bytes:
        return hmac.new(self._key, token.encode(), hashlib.sha256).digest()

    def get(self, digest: bytes) -> tuple[bool, str | None]:
        """``(found, identity)``."""
        held = self._held.get(digest)
        if held is None or held[0] < time.monotonic():
            self._held.pop(digest, None)
            return False, None
        return True, held[1]

    def put(self, digest: bytes, identity: str | None) -> None:
        self._held[digest] = (time.monotonic() + self._seconds, identity)
        self._held.move_to_end(digest)
        while len(self._held) > self._entries:
            self._held.popitem(last=False)


class TokenReview:
    """Kubernetes service-account tokens, checked by the API server (``TokenReview``)."""

    def __init__(
        self, api_url: str, audience: str, credentials: Path, client: httpx.AsyncClient
    ) -> None:
        self.url = api_url.rstrip("/") + TOKEN_REVIEW_PATH
        self.audience, self.credentials, self._client = audience, credentials, client
        self._verdicts = Verdicts()

    async def identity(self, token: str) -> str | None:
        if not JWT_SHAPE.match(token):
            return None  # no review for what cannot be a service-account token
        digest = self._verdicts.digest(token)
        found, identity = self._verdicts.get(digest)
        if found:
            return identity
        sure, identity = await self._review(token)
        if sure:
            self._verdicts.put(digest, identity)
        return identity

    async def _review(self, token: str) -> tuple[bool, str | None]:
        """``(sure, identity)``: not sure when the API server could not be asked."""
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token, "audiences": [self.audience]},
        }
        try:
            # The kubelet rotates the pod's own token: read at each review.
            own = (self.credentials / "token").read_text().strip()
            response = await self._client.post(
                self.url, json=body, headers={"Authorization": f"Bearer {own}"}
            )
        except (OSError, httpx.HTTPError) as exc:
            logger.warning("TokenReview not possible: %s", type(exc).__name__)
            return False, None
        if response.status_code not in (200, 201):
            logger.warning("TokenReview refused: HTTP %d", response.status_code)
            return False, None
        return True, self._reviewed(response.content)

    def _reviewed(self, content: bytes) -> str | None:
        try:
            answer: object = _json.read(content)
        except ValueError:
            return None
        status = _field(answer, "status")
        user = _field(status, "user")
        audiences: object = _field_or(status, "audiences", [])
        username = _field_or(user, "username", None)
        if _field_or(status, "authenticated", False) is not True or not isinstance(username, str):
            return None
        if not isinstance(audiences, list) or self.audience not in audiences:
            return None  # an audience-agnostic authenticator: not for this agent
        return username

    async def aclose(self) -> None:
        await self._client.aclose()


class JwksTokens:
    """JWTs of one OIDC issuer, checked against its published keys (JWKS): signature by an
    asymmetric key, ``iss``, ``aud``, ``exp`` and ``sub`` required."""

    def __init__(
        self, issuer: str, audience: str, jwks_url: str | None, client: httpx.AsyncClient
    ) -> None:
        self.issuer, self.audience, self.jwks_url = issuer, audience, jwks_url
        self._client = client
        self._keys: dict[str, Any] = {}
        self._fetched = float("-inf")

    async def identity(self, token: str) -> str | None:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        algorithm = header.get("alg")
        if algorithm not in ALGORITHMS:
            return None
        key = await self._key(str(header.get("kid") or ""))
        if key is None:
            return None
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.PyJWTError:
            return None
        subject = claims.get("sub")
        return subject if isinstance(subject, str) and subject else None

    async def _key(self, kid: str) -> Any:
        if kid not in self._keys and time.monotonic() - self._fetched > REFETCH_SECONDS:
            await self._refresh()
        if not kid and len(self._keys) == 1:
            return next(iter(self._keys.values()))  # one key, and a token naming none
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        self._fetched = time.monotonic()
        try:
            url = self.jwks_url or await self._discovered()
            listing = await read_capped(self._client, url, MAX_ANSWER_BYTES)
            keys = jwt.PyJWKSet.from_dict(_json.read(listing.content)).keys
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            logger.warning("the issuer's keys could not be read: %s", type(exc).__name__)
            return
        self._keys = {key.key_id or "": key.key for key in keys}

    async def _discovered(self) -> str:
        """The issuer's ``jwks_uri``, from a discovery document that names this issuer."""
        url = self.issuer.rstrip("/") + "/.well-known/openid-configuration"
        document: object = _json.read(
            (await read_capped(self._client, url, MAX_ANSWER_BYTES)).content
        )
        if _field_or(document, "issuer", None) != self.issuer:
            raise ValueError("the discovery document names another issuer")
        jwks = _field_or(document, "jwks_uri", None)
        if not isinstance(jwks, str):
            raise ValueError("the discovery document names no jwks_uri")
        self.jwks_url = jwks
        return jwks

    async def aclose(self) -> None:
        await self._client.aclose()


def _field(value: object, name: str) -> object:
    return _field_or(value, name, {})


def _field_or(value: object, name: str, default: object) -> object:
    if not isinstance(value, Mapping):
        return default
    return cast("Mapping[str, object]", value).get(name, default)


def load_verifier(env: Mapping[str, str]) -> TokenVerifier | None:
    """The verifier ``A2A_TOKEN_VERIFY`` names, or None; ValueError names the variable and
    the fix."""
    method = (env.get("A2A_TOKEN_VERIFY") or "").strip().lower()
    if not method:
        return None
    audience = (env.get("A2A_TOKEN_AUDIENCE") or "").strip()
    if method not in ("tokenreview", "oidc"):
        raise ValueError(
            f"A2A_TOKEN_VERIFY={env.get('A2A_TOKEN_VERIFY')!r}: use tokenreview (Kubernetes "
            "service-account tokens) or oidc (an issuer's JWTs)"
        )
    if not audience:
        raise ValueError("A2A_TOKEN_AUDIENCE: a verified token must name this agent; set it")
    if method == "oidc":
        issuer = (env.get("A2A_OIDC_ISSUER") or "").strip()
        if not issuer.startswith("https://") and not issuer.startswith("http://"):
            raise ValueError("A2A_OIDC_ISSUER: the issuer's URL (https://...) is required")
        jwks = (env.get("A2A_OIDC_JWKS_URL") or "").strip() or None
        return JwksTokens(issuer, audience, jwks, _client(True))
    return _token_review(env, audience)


def _token_review(env: Mapping[str, str], audience: str) -> TokenReview:
    host = (env.get("KUBERNETES_SERVICE_HOST") or "").strip()
    port = (
        env.get("KUBERNETES_SERVICE_PORT_HTTPS")
        or env.get("KUBERNETES_SERVICE_PORT")
        or str(effective_port("https", None))
    ).strip()
    if not host:
        raise ValueError(
            "A2A_TOKEN_VERIFY=tokenreview: KUBERNETES_SERVICE_HOST is unset (not in a pod); "
            "the API server is where tokens are reviewed"
        )
    credentials = Path(env.get("A2A_SERVICE_ACCOUNT_DIR") or SERVICE_ACCOUNT_DIR)
    if not (credentials / "token").is_file():
        raise ValueError(
            f"A2A_TOKEN_VERIFY=tokenreview: no service-account token at {credentials}/token; "
            "set automountServiceAccountToken: true on the agent"
        )
    shown = f"[{host}]" if ":" in host else host
    ca = credentials / "ca.crt"
    client = _client(ssl.create_default_context(cafile=str(ca)) if ca.is_file() else True)
    return TokenReview(f"https://{shown}:{port}", audience, credentials, client)


def _client(verify: ssl.SSLContext | bool) -> httpx.AsyncClient:
    """A client whose answers are read no further than :data:`MAX_ANSWER_BYTES`."""
    inner = httpx.AsyncHTTPTransport(verify=verify)
    return httpx.AsyncClient(timeout=_TIMEOUT, transport=CappedTransport(MAX_ANSWER_BYTES, inner))
