"""Token endpoint requests, client authentication, PKCE and dynamic client registration."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx2
import jwt
from mcp.client.auth.extensions.client_credentials import SignedJWTParameters
from mcp.client.auth.oauth2 import PKCEParameters
from pydantic import Field

from langop_infra.mcp._http import display_url, json_object
from langop_infra.mcp.oauth._discovery import AuthorizationServer, is_loopback, read_capped
from langop_infra.mcp.oauth._errors import OAuthError, scrub

_MAX_TOKEN_RESPONSE_BYTES = 64 * 1024
_EXPIRY_MARGIN = 30.0  # seconds: refresh a little early rather than send a dying token
JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_WHAT = {  # what each grant's token request is called in messages
    "authorization_code": "authorization code exchange",
    "client_credentials": "client credentials token request",
    "refresh_token": "token refresh",
}


@dataclass
class Client:
    """This client as the authorization server knows it; secrets never in ``repr``."""

    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    signing_algorithm: str = "ES256"
    auth_method: str = "none"  # client_secret_basic | client_secret_post | private_key_jwt | none


@dataclass
class Token:
    """An access token in memory, with what came with it; never printed."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()

    def expired(self) -> bool:
        return self.expires_at is not None and time.monotonic() >= self.expires_at


class PKCE(PKCEParameters):
    """The SDK's RFC 7636 S256 verifier and challenge, the verifier kept out of ``repr``."""

    code_verifier: str = Field(..., min_length=43, max_length=128, repr=False)


def basic_authorization(client_id: str, client_secret: str) -> str:
    """The ``Authorization`` value of RFC 6749 §2.3.1 ``client_secret_basic``.

    Both parts are form-urlencoded before base64, so a ``:``, ``%``, ``+`` or non-ASCII
    character reaches the server as sent. Percent-encoding everything (space as ``%20``, not
    ``+``) decodes the same under form decoding and plain URL decoding (the MCP SDK's).
    """
    pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def choose_auth_method(server: AuthorizationServer, *, secret: bool, key: bool) -> str:
    """The token endpoint authentication this client can do and the server accepts."""
    if key:
        return "private_key_jwt"
    if not secret:
        return "none"
    # RFC 8414: absent means client_secret_basic only.
    supported = server.listed("token_endpoint_auth_methods_supported", ["client_secret_basic"])
    for method in ("client_secret_basic", "client_secret_post"):
        if method in supported:
            return method
    # Sending the secret a way the server says it does not take only earns invalid_client.
    named = ", ".join(str(m) for m in supported) or "no method"
    raise OAuthError(
        f"{display_url(server.issuer)} accepts client authentication by {named} only "
        "(token_endpoint_auth_methods_supported), not by client secret; give the client a "
        "private key (private_key_jwt) or ask for a client_secret_basic or client_secret_post "
        "client",
        target=display_url(server.issuer),
    )


async def request_token(
    http: httpx2.AsyncClient, server: AuthorizationServer, client: Client, form: dict[str, str]
) -> Token:
    """POST ``form`` and the resource to the token endpoint, with this client's authentication."""
    url, what = server.endpoint("token_endpoint"), _WHAT[form["grant_type"]]
    if not url:
        raise OAuthError(
            f"{display_url(server.issuer)} has no token endpoint", target=server.issuer
        )
    headers: dict[str, str] = {}
    # client_id in the body with every method: some servers (the MCP SDK's) look it up there.
    form = {**form, "resource": server.resource, "client_id": client.client_id}
    form = {k: v for k, v in form.items() if v}
    if client.auth_method == "client_secret_basic":
        headers["Authorization"] = basic_authorization(client.client_id, client.client_secret or "")
    elif client.auth_method == "client_secret_post":
        form["client_secret"] = client.client_secret or ""
    elif client.auth_method == "private_key_jwt":
        form["client_assertion_type"] = JWT_BEARER
        form["client_assertion"] = await _client_assertion(client, server)
    known = [client.client_secret, form.get("refresh_token"), form.get("code")]
    payload = await _post(http, url, what, headers=headers, data=form, secrets_=known)
    access, kind = _text(payload, "access_token"), payload.get("token_type")
    if access is None:
        raise OAuthError(
            f"{display_url(url)} answered the {what} without an access_token; "
            "the authorization server does not follow OAuth 2.1",
            target=display_url(url),
        )
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise OAuthError(
            f"{display_url(url)} issued a token of type {str(kind)[:20]!r}, not Bearer; "
            "only bearer tokens are supported",
            target=display_url(url),
        )
    lifetime = payload.get("expires_in")
    expires_at = None
    if isinstance(lifetime, (int, float)) and lifetime > 0:
        expires_at = time.monotonic() + max(lifetime - _EXPIRY_MARGIN, lifetime / 2)
    scope = payload.get("scope")
    return Token(
        access_token=access,
        refresh_token=_text(payload, "refresh_token"),
        expires_at=expires_at,
        scopes=tuple(scope.split()) if isinstance(scope, str) else (),
    )


async def register(
    http: httpx2.AsyncClient,
    server: AuthorizationServer,
    *,
    client_name: str,
    redirect_uri: str,
    scopes: tuple[str, ...] = (),
) -> Client:
    """RFC 7591 dynamic registration of a public (or, if the server insists, secret) client."""
    url = server.endpoint("registration_endpoint")
    if not url:
        raise OAuthError(
            f"{display_url(server.issuer)} offers neither dynamic client registration nor "
            "client ID metadata documents; pass a pre-registered client (--client-id)",
            target=display_url(server.issuer),
        )
    supported = server.listed("token_endpoint_auth_methods_supported", ["none"])
    method = next(
        (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported),
        "none",
    )
    metadata = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        # A loopback redirect means an app on the user's machine (2026-07-28 registration).
        "application_type": "native" if is_loopback(redirect_uri) else "web",
    }
    if scopes:  # some servers only grant what the client registered for
        metadata["scope"] = " ".join(scopes)
    payload = await _post(http, url, "client registration", json_body=metadata)
    client_id, secret = _text(payload, "client_id"), _text(payload, "client_secret")
    if client_id is None:
        raise OAuthError(
            f"{display_url(url)} answered the client registration without a client_id",
            target=display_url(url),
        )
    granted = payload.get("token_endpoint_auth_method")
    method = granted if isinstance(granted, str) else method
    return Client(client_id, secret, auth_method=method if secret else "none")


async def _post(
    http: httpx2.AsyncClient,
    url: str,
    what: str,
    *,
    headers: dict[str, str] | None = None,
    data: dict[str, str] | None = None,
    json_body: object = None,
    secrets_: list[str | None] | None = None,
) -> dict[str, object]:
    """POST to ``url``; its JSON object answer, or :class:`OAuthError` saying what failed."""
    shown = display_url(url)
    too_big = f"{shown} sent an oversized answer to the {what}"
    headers = {"Accept": "application/json", **(headers or {})}
    try:
        async with http.stream("POST", url, headers=headers, data=data, json=json_body) as response:
            body = await read_capped(response, _MAX_TOKEN_RESPONSE_BYTES, too_big, shown)
            status = response.status_code
    except httpx2.HTTPError as exc:
        raise OAuthError(
            f"the {what} to {shown} failed: {type(exc).__name__}; check that the authorization "
            "server is reachable",
            target=shown,
        ) from None
    reply = json_object(body)
    if status >= 400 or reply is None:
        detail = ""
        error, description = (reply or {}).get("error"), (reply or {}).get("error_description")
        if isinstance(error, str):
            detail = ": " + error[:60]
            if isinstance(description, str):
                detail += " (" + description[:160] + ")"
        detail = scrub(" ".join(detail.split()), secrets_ or [])
        raise OAuthError(
            f"{shown} refused the {what} with HTTP {status}{detail}; check the client id, "
            "secret and scopes",
            target=shown,
        )
    return reply


def _text(payload: dict[str, object], key: str) -> str | None:
    """``payload[key]`` when it is a non-empty string, else None."""
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


async def _client_assertion(client: Client, server: AuthorizationServer) -> str:
    """An RFC 7523 client assertion signed with the client's private key (the SDK's)."""
    signer = SignedJWTParameters(
        issuer=client.client_id,
        subject=client.client_id,
        signing_key=client.private_key or "",  # none: jwt refuses it, an OAuthError below
        signing_algorithm=client.signing_algorithm,
    )
    try:
        return await signer.create_assertion_provider()(
            server.metadata.get("issuer") or server.issuer
        )
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise OAuthError(
            f"cannot sign the client assertion with the {client.signing_algorithm} private key "
            f"({type(exc).__name__}); check the key file and the algorithm"
        ) from None
