"""MCP servers that demand OAuth, for the client's OAuth tests.

``sdk_server``: the official SDK's ``MCPServer`` as resource server *and* authorization
server (its real metadata, registration, authorize and token handlers, PKCE and client
authentication). The SDK leaves storage to a provider: ``MemoryProvider`` keeps clients,
codes and tokens in dicts and approves every authorization at once (no consent page).

``client_credentials_server``: the SDK's ``MCPServer`` as resource server, with a small
authorization server of our own, because the SDK's has no client credentials grant. That
stand-in serves RFC 8414 metadata and a token endpoint; it is no full implementation.
"""

from __future__ import annotations

import base64
import secrets
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

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
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route


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
    """Client credentials only: metadata and a token endpoint (see the module docstring)."""

    base_url: str
    client_id: str
    client_secret: str
    methods: tuple[str, ...] = ("client_secret_basic",)
    echo_secret_in_errors: bool = False  # a careless server, for the leak canary
    honoured: bool = True  # False: the resource server refuses every token it issued
    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[dict[str, str]] = field(default_factory=list)

    async def metadata(self, request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "issuer": self.base_url,
                "token_endpoint": f"{self.base_url}/token",  # base_url is the issuer
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": list(self.methods),
                "response_types_supported": [],
            }
        )

    async def token(self, request: Request) -> JSONResponse:
        form = {k: str(v) for k, v in (await request.form()).items()}
        self.requests.append(form)
        client_id, secret = form.get("client_id"), form.get("client_secret")
        header = request.headers.get("authorization", "")
        if header.startswith("Basic "):
            decoded = base64.b64decode(header[6:]).decode()
            client_id, _, secret = (unquote(part) for part in decoded.partition(":"))
        if (client_id, secret) != (self.client_id, self.client_secret):
            description = f"bad client {client_id}:{secret}" if self.echo_secret_in_errors else ""
            return JSONResponse(
                {"error": "invalid_client", "error_description": description}, status_code=401
            )
        access = f"cc-{secrets.token_urlsafe(24)}"
        self.tokens[access] = {"scope": form.get("scope", ""), "resource": form.get("resource")}
        return JSONResponse({"access_token": access, "token_type": "Bearer", "expires_in": 600})


@dataclass
class StandInVerifier:
    """The resource server's view of the stand-in's tokens (the SDK's TokenVerifier)."""

    issuer: StandInAuthorizationServer

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = self.issuer.tokens.get(token)
        if grant is None or not self.issuer.honoured:
            return None
        return AccessToken(
            token=token,
            client_id=self.issuer.client_id,
            scopes=grant["scope"].split(),
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
            Mount("/", app=app),
        ],
        lifespan=lambda _: app.router.lifespan_context(app),
    )
