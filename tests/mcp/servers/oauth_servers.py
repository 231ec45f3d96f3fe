"""MCP servers that demand OAuth, for the client's OAuth tests.

``sdk_server``: the official SDK's ``MCPServer`` as resource server *and* authorization
server (its real metadata, registration, authorize and token handlers, PKCE and client
authentication). The SDK leaves storage to a provider: ``MemoryProvider`` keeps clients,
codes and tokens in dicts and approves every authorization at once (no consent page).

``client_credentials_server``: the SDK's ``MCPServer`` as resource server, with an
authorization server of our own, because the SDK's has no client credentials grant and no
other authorization server runs here. That stand-in serves RFC 8414 metadata and a token
endpoint on oauthlib (real grant and scope validation) with strict client authentication;
it is no full implementation (see ``StandInAuthorizationServer``).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from oauthlib.oauth2 import BackendApplicationServer, RequestValidator
from oauthlib.oauth2.rfc6749 import errors as oauth_errors
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from tests.support.client_auth import basic_credentials

# oauthlib logs each token it issues at DEBUG: the server's log, not the client's, which the
# canary tests capture (caplog) to prove the client never logs a token.
logging.getLogger("oauthlib").setLevel(logging.INFO)


@dataclass
class MemoryProvider:
    """Storage for the SDK's authorization server; approves every request at once."""

    token_lifetime: int = 3600
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    tokens: dict[str, AccessToken] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshToken] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)  # access tokens, in order
    grants: list[str] = field(default_factory=list)  # "authorization_code" | "refresh_token"
    presented: list[str] = field(default_factory=list)  # every bearer token a client sent

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.grants.append("authorization_code")
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: RefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        del self.refresh_tokens[refresh_token.token]
        self.grants.append("refresh_token")
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        self.presented.append(token)
        found = self.tokens.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.tokens.pop(token.token, None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires_at = int(time.time()) + self.token_lifetime
        client_id = client.client_id or ""
        self.tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires_at,
            resource=resource,
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        self.issued.append(access)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_lifetime,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )


def _tools(server: MCPServer) -> MCPServer:
    @server.tool()
    def whoami() -> str:
        """Says hello to an authorized client."""
        return "authorized"

    return server


def sdk_server(base_url: str, provider: MemoryProvider, scopes: list[str] | None = None) -> Any:
    """The SDK's MCP server at ``base_url``/mcp, also its own authorization server."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auth = AuthSettings(
            issuer_url=base_url,
            resource_server_url=f"{base_url}/mcp",
            validate_token_resource=True,
            required_scopes=scopes,
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=scopes
            ),
        )
    server = MCPServer("oauth-demo", auth=auth, auth_server_provider=provider, log_level="WARNING")
    return _tools(server).streamable_http_app()


@dataclass
class StandInAuthorizationServer:
    """A client-credentials authorization server: RFC 8414 metadata and an RFC 6749 token
    endpoint (see the module docstring for why it is a stand-in).

    The token endpoint is oauthlib's ``BackendApplicationServer``: its grant type, duplicate
    parameter and scope checks, its RFC 6749 §5.2 error bodies and §5.1 headers. Client
    authentication, which oauthlib leaves to the validator, follows the SDK's own
    (mcp/server/auth/middleware/client_auth.py) and RFC 6749 §2.3.1, no kinder: only the
    advertised ``methods`` (``None``: not advertised, so ``client_secret_basic`` only, RFC 8414
    §2), Basic credentials decoded as both the RFC and the SDK do (tests/support/client_auth.py),
    a body ``client_id`` equal to the header's, one method per request; a refusal is 401
    ``invalid_client`` with a Basic challenge. Only ``scopes`` are granted: anything else is
    ``invalid_scope``, or with ``narrow_scopes`` the allowed part is granted and named in the
    answer (§3.3); no scope asked means all of ``scopes``. Tokens expire after
    ``token_lifetime`` seconds. Not done: other grants, private_key_jwt, refresh tokens,
    RFC 8707 ``invalid_target``, TLS.
    """

    base_url: str
    client_id: str
    client_secret: str
    methods: tuple[str, ...] | None = ("client_secret_basic",)
    scopes: tuple[str, ...] = ("tools",)
    narrow_scopes: bool = False
    token_lifetime: int = 600
    echo_secret_in_errors: bool = False  # a careless server, for the leak canary
    honoured: bool = True  # False: the resource server refuses every token it issued
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)  # the error of each refused request
    presented: list[str] = field(default_factory=list)  # "METHOD /path Bearer x" of each

    def accepted(self) -> tuple[str, ...]:
        return ("client_secret_basic",) if self.methods is None else self.methods

    async def metadata(self, request: Request) -> JSONResponse:
        document: dict[str, Any] = {
            "issuer": self.base_url,
            "token_endpoint": f"{self.base_url}/token",  # base_url is the issuer
            "grant_types_supported": ["client_credentials"],
            "scopes_supported": list(self.scopes),
            "response_types_supported": [],
        }
        if self.methods is not None:
            document["token_endpoint_auth_methods_supported"] = list(self.methods)
        return JSONResponse(document)

    async def token(self, request: Request) -> Response:
        body = (await request.body()).decode()
        self.requests.append(dict(parse_qsl(body, keep_blank_values=True)))
        endpoint = BackendApplicationServer(
            _ClientAuthentication(self), token_expires_in=lambda _: self.token_lifetime
        )
        headers, answer, status = endpoint.create_token_response(
            str(request.url), "POST", body, dict(request.headers)
        )
        if status == 401:  # oauthlib's challenge is Bearer; a token endpoint's names Basic
            headers.pop("WWW-Authenticate", None)
            if "client_secret_basic" in self.accepted():
                headers["WWW-Authenticate"] = 'Basic realm="token"'
        if status >= 400:
            self.refusals.append(json.loads(answer)["error"])
        return Response(answer, status_code=status, headers=headers)


class _ClientAuthentication(RequestValidator):
    """oauthlib's questions about the client, answered for one confidential client."""

    def __init__(self, server: StandInAuthorizationServer) -> None:
        self.server = server

    def client_authentication_required(self, request: Any, *args: Any, **kwargs: Any) -> bool:
        return True

    def authenticate_client(self, request: Any, *args: Any, **kwargs: Any) -> bool:
        accepted, header = self.server.accepted(), request.headers.get("Authorization")
        body_secret = request.client_secret
        if header and body_secret is not None:
            raise oauth_errors.InvalidRequestError(
                description="more than one client authentication method", request=request
            )
        if header:
            if "client_secret_basic" not in accepted:
                raise oauth_errors.InvalidClientError(
                    description="client_secret_basic is not accepted", request=request
                )
            try:
                client_id, secret = basic_credentials(header)
            except ValueError as exc:
                raise oauth_errors.InvalidClientError(description=str(exc)) from None
            if request.client_id not in (None, client_id):
                raise oauth_errors.InvalidClientError(description="client_id mismatch")
        elif body_secret is not None and "client_secret_post" in accepted:
            client_id, secret = request.client_id or "", body_secret
        else:
            raise oauth_errors.InvalidClientError(
                description=f"authenticate with {' or '.join(accepted)}", request=request
            )
        if not (
            hmac.compare_digest(client_id.encode(), self.server.client_id.encode())
            and hmac.compare_digest(secret.encode(), self.server.client_secret.encode())
        ):
            described = self.server.echo_secret_in_errors
            raise oauth_errors.InvalidClientError(
                description=f"bad client {client_id}:{secret}" if described else "bad client"
            )
        request.client_id, request.client = client_id, SimpleNamespace(client_id=client_id)
        return True

    def validate_grant_type(self, client_id: str, grant_type: str, *args: Any, **kw: Any) -> bool:
        return grant_type == "client_credentials"

    def get_default_scopes(self, client_id: str, request: Any, *args: Any, **kw: Any) -> list[str]:
        return list(self.server.scopes)

    def validate_scopes(
        self, client_id: str, scopes: list[str], client: Any, request: Any, *args: Any, **kw: Any
    ) -> bool:
        allowed = [scope for scope in scopes if scope in self.server.scopes]
        if self.server.narrow_scopes and allowed:
            request.scopes = allowed  # oauthlib then names the granted scope in the answer
            return True
        return len(allowed) == len(scopes)

    def save_bearer_token(self, token: dict[str, Any], request: Any, *args: Any, **kw: Any) -> None:
        self.server.tokens[token["access_token"]] = {
            "scope": token.get("scope", ""),
            "resource": getattr(request, "resource", None),
            "expires_at": time.time() + token["expires_in"],
        }


@dataclass
class StandInVerifier:
    """The resource server's view of the stand-in's tokens (the SDK's TokenVerifier): an
    unknown, expired or (``honoured=False``) any token is refused."""

    issuer: StandInAuthorizationServer

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = self.issuer.tokens.get(token)
        if grant is None or not self.issuer.honoured or time.time() >= grant["expires_at"]:
            return None
        return AccessToken(
            token=token,
            client_id=self.issuer.client_id,
            scopes=grant["scope"].split(),
            expires_at=int(grant["expires_at"]),
            resource=grant["resource"],
        )


def client_credentials_server(
    base_url: str,
    issuer: StandInAuthorizationServer,
    scopes: list[str] | None = None,
    tools: Callable[[MCPServer], MCPServer] | None = None,
) -> Any:
    """The SDK's MCP server at ``base_url``/mcp; the stand-in is issuer ``base_url``/as.
    ``tools`` registers the server's tools (default: ``whoami``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auth = AuthSettings(
            issuer_url=issuer.base_url,
            resource_server_url=f"{base_url}/mcp",
            validate_token_resource=True,
            required_scopes=scopes,
        )
    server = MCPServer(
        "cc-demo", auth=auth, token_verifier=StandInVerifier(issuer), log_level="WARNING"
    )
    app = (tools or _tools)(server).streamable_http_app()
    return Starlette(
        routes=[
            # RFC 8414 §3.1: the issuer's path goes after the well-known suffix.
            Route("/.well-known/oauth-authorization-server/as", issuer.metadata),
            Route("/as/token", issuer.token, methods=["POST"]),
            Mount("/", app=_recording(app, issuer.presented)),
        ],
        lifespan=lambda _: app.router.lifespan_context(app),
    )


def _recording(app: Any, presented: list[str]) -> Any:
    """``app``, noting each HTTP request: method, path and Authorization header if any."""

    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            bearer = dict(scope["headers"]).get(b"authorization", b"").decode()
            presented.append(f"{scope['method']} {scope['path']} {bearer}".rstrip())
        await app(scope, receive, send)

    return asgi
