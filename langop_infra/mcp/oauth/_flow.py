"""``OAuth2Auth``: an ``httpx2.Auth`` that answers an MCP server's 401 and 403 with OAuth 2.1.

Spec: modelcontextprotocol.io, "Authorization" (2025-11-25; 2025-03-26 fallback), with RFC
9728, 8414, 7591, 7636 (PKCE S256), 8707 and the client ID metadata documents draft.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import weakref
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager, nullcontext
from dataclasses import InitVar, dataclass, field
from typing import Literal
from urllib.parse import urlencode, urlsplit

import httpx2
from mcp.client.auth.utils import is_valid_client_metadata_url

from langop_infra.mcp._decoding import client_settings
from langop_infra.mcp._http import display_url, tls_context
from langop_infra.mcp._timeouts import timeout_after
from langop_infra.mcp.oauth._discovery import (
    AuthorizationServer,
    Challenge,
    challenge_of,
    discover,
    find_resource_metadata,
    is_loopback,
    same_issuer,
)
from langop_infra.mcp.oauth._errors import OAuthError
from langop_infra.mcp.oauth._redirect import LoopbackRedirect, RedirectHandler, code_from_redirect
from langop_infra.mcp.oauth._tokens import (
    PKCE,
    Client,
    Token,
    choose_auth_method,
    register,
    request_token,
)

log = logging.getLogger("langop_infra.mcp.oauth")

Grant = Literal["auto", "client_credentials", "authorization_code"]
GRANTS: tuple[str, ...] = ("auto", "client_credentials", "authorization_code")
_MAX_AUTHORIZATIONS = 3  # per request: one on 401 and at most two scope step-ups


@dataclass
class Budget:
    """``seconds`` to share between one authorization's requests (None: unbounded).

    Each request is bounded by httpx's timeout, but a server sending a byte a second never
    trips it; the budget bounds them all together. A person's time at a login page is not
    counted (the redirect handler bounds that itself).
    """

    seconds: float | None
    url: str
    used: float = 0.0

    def spent(self) -> bool:
        """Whether the budget has run out."""
        return self.seconds is not None and self.used >= self.seconds

    @asynccontextmanager
    async def spend(self) -> AsyncGenerator[None, None]:
        """Run the block within what is left; raise :class:`OAuthError` when it runs out."""
        started = time.monotonic()
        left = None if self.seconds is None else max(self.seconds - self.used, 0.0)
        try:
            async with timeout_after(left):
                yield
        except TimeoutError:
            shown = display_url(self.url)
            raise OAuthError(
                f"authorizing for {shown} did not finish within the {self.seconds:g}s "
                "deadline: its resource metadata, authorization server or token endpoint "
                "is too slow; check them, or raise the deadline (--timeout)",
                target=shown,
            ) from None
        finally:
            self.used += time.monotonic() - started


@dataclass
class _Resource:
    """What one MCP server origin has given us; tokens are never shared across origins."""

    server: AuthorizationServer | None = None
    hint: str | None = None
    client: Client | None = None
    token: Token | None = None
    requested: tuple[str, ...] = ()
    grant: str = ""
    locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock]
    )

    def lock(self) -> asyncio.Lock:
        """This origin's lock on the running event loop."""
        return self.locks.setdefault(asyncio.get_running_loop(), asyncio.Lock())


@dataclass(kw_only=True, eq=False, repr=False)
class OAuth2Auth(httpx2.Auth):
    """OAuth 2.1 for MCP: discovery on 401, step-up on 403 ``insufficient_scope``, refresh.

    ``grant="auto"``: client credentials when a secret or key is given and the server offers
    that grant, else the authorization code through ``redirect`` (default: print the URL,
    listen on loopback). Without ``client_id``: ``client_metadata_url`` where supported, else
    dynamic registration. ``timeout`` bounds each request, ``deadline`` one authorization's
    requests together. ``issuer`` pins the server the secret or key may go to; give it with
    every secret. Put it in ``ClientOptions(auth=...)``.
    """

    client_id: str | None = None
    client_secret: str | None = None
    private_key: str | None = None
    signing_algorithm: str = "ES256"
    scopes: Sequence[str] = ()
    grant: Grant = "auto"
    redirect: InitVar[RedirectHandler | None] = None
    client_metadata_url: str | None = None
    client_name: str = "langop-infra"
    issuer: str | None = None
    verify: bool | str = True
    timeout: float = 10.0
    deadline: float | None = 30.0
    transport: httpx2.AsyncBaseTransport | None = None
    _handler: RedirectHandler = field(init=False)  # default: print, listen on loopback
    _resources: dict[str, _Resource] = field(default_factory=dict[str, _Resource], init=False)
    _registered: dict[str, tuple[Client, frozenset[str]]] = field(
        default_factory=dict[str, tuple[Client, frozenset[str]]], init=False
    )

    def __post_init__(self, redirect: RedirectHandler | None) -> None:
        problems: list[str] = []
        if self.grant not in GRANTS:
            problems.append(f"grant must be one of {', '.join(GRANTS)}, got {self.grant!r}")
        secret, url = self.client_secret or self.private_key, self.client_metadata_url
        if secret and not self.client_id:
            problems.append("a client secret or private key needs its client_id")
        if self.grant == "client_credentials" and not (self.client_id and secret):
            problems.append("the client_credentials grant needs client_id and a secret or key")
        if not (url is None or is_valid_client_metadata_url(url)):
            problems.append("client_metadata_url must be an https URL with a path")
        if any(not s or any(c.isspace() for c in s) for s in self.scopes):
            problems.append("scopes must be non-empty words without spaces")
        if problems:
            raise ValueError("invalid OAuth2Auth: " + "; ".join(problems))
        self.scopes = tuple(self.scopes)
        self._handler = redirect or LoopbackRedirect()

    def __repr__(self) -> str:
        return f"OAuth2Auth(client_id={self.client_id!r}, grant={self.grant!r})"

    def held_secrets(self) -> list[str]:
        """The client secret and every token held: what a caller scrubs from stored output."""
        held = [self.client_secret or ""]
        for state in self._resources.values():
            if state.token is not None:
                held += [state.token.access_token, state.token.refresh_token or ""]
        held += [c.client_secret or "" for c, _ in self._registered.values()]
        return [value for value in held if value]

    async def login(self, url: str) -> bool:
        """Authorize for the MCP server at ``url`` now, so no request timeout runs while a
        person approves. A ``ping`` without a token first, so its 401 challenge leads as it
        would mid-session. False when it demands no token and names no authorization server.
        """
        state = self._resources.setdefault(_origin(url), _Resource())
        budget = Budget(self.deadline, url)
        try:
            async with budget.spend(), self._http() as http:
                challenge = await challenge_of(http, url)
                found = challenge or await find_resource_metadata(http, _resource_url(url), None)
                if found is None:
                    return False
        except OAuthError:
            if budget.spent():
                raise  # too slow: asking again on the first 401 would only wait as long
            return False  # unreachable: the session's own error will say so better
        await self._authorize(state, url, challenge or Challenge(), state.token, step_up=False)
        return True

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        url, shown = str(request.url), display_url(request.url)
        state = self._resources.setdefault(_origin(url), _Resource())
        token = await self._usable_token(state, url)
        authorizations, refreshed = 0, False
        while True:
            if token is not None:
                request.headers["Authorization"] = f"Bearer {token.access_token}"
            response = yield request
            if response.status_code not in (401, 403):
                return
            challenge = Challenge.parse(response.headers.get("www-authenticate"))
            step_up = response.status_code == 403
            if step_up and challenge.error != "insufficient_scope":
                return  # forbidden for good: no scope will help
            if not step_up and token is not None and not refreshed and authorizations == 0:
                refreshed = True
                token = await self._refresh(state, url, token)
                if token is not None:
                    continue
            elif not step_up and authorizations:
                raise OAuthError(
                    f"{shown} refused the access token it was just "
                    "issued (HTTP 401); the authorization server issues tokens this server "
                    "does not accept: check its resource and audience settings",
                    target=shown,
                )
            needed = challenge.scope or (state.server.scopes_supported if state.server else ())
            if step_up and set(needed) <= set(state.requested):
                wanted = " ".join(needed) or "more scopes"
                raise OAuthError(
                    f"{shown} still demands {wanted} (HTTP 403 "
                    "insufficient_scope) after authorization asked for it; the authorization "
                    "server does not grant it to this client",
                    target=shown,
                )
            if authorizations >= _MAX_AUTHORIZATIONS:
                return
            authorizations += 1
            token = await self._authorize(state, url, challenge, token, step_up)

    async def _usable_token(self, state: _Resource, url: str) -> Token | None:
        token = state.token
        if token is None or not token.expired():
            return token
        if state.grant == "client_credentials":
            # No refresh token (RFC 6749 §4.4.3) and no person: a new token now, not a 401. The
            # expired one stays meanwhile, so concurrent requests wait for this new one.
            return await self._authorize(
                state, url, Challenge(scope=state.requested), token, step_up=False
            )
        return await self._refresh(state, url, token)

    async def _refresh(self, state: _Resource, url: str, sent: Token) -> Token | None:
        """A new token from the refresh token, or None (the caller authorizes again)."""
        async with state.lock():
            if state.token is not None and state.token is not sent and not state.token.expired():
                return state.token  # another request refreshed it meanwhile
            if not (sent.refresh_token and state.server and state.client):
                state.token = None
                return None
            form = {"grant_type": "refresh_token", "refresh_token": sent.refresh_token}
            try:
                async with Budget(self.deadline, url).spend(), self._http() as http:
                    token = await request_token(http, state.server, state.client, form)
            except OAuthError as exc:
                log.info(
                    "token refresh for %s failed, authorizing again: %s", display_url(url), exc
                )
                state.token = None
                return None
            token.refresh_token = token.refresh_token or sent.refresh_token
            token.scopes = token.scopes or sent.scopes
            state.token = token
            log.debug("refreshed the access token for %s", display_url(url))
            return token

    async def _authorize(
        self,
        state: _Resource,
        url: str,
        challenge: Challenge,
        sent: Token | None,
        step_up: bool,
    ) -> Token:
        async with state.lock():
            if not step_up and state.token is not None and state.token is not sent:
                return state.token  # another request authorized meanwhile
            budget = Budget(self.deadline, url)
            async with self._http() as http:
                async with budget.spend():
                    hint = challenge.resource_metadata
                    if state.server is None or hint not in (None, state.hint):
                        state.server = await discover(
                            http, _resource_url(url), challenge, self.issuer
                        )
                        state.hint = hint
                server = state.server
                _check_https(server.endpoint("token_endpoint"), "token endpoint")
                grant = self._choose_grant(server)
                previous = state.requested if step_up else ()
                scopes = self._select_scopes(server, challenge, previous, grant)
                log.debug(
                    "authorizing with %s for %s (grant %s, scope %r)",
                    display_url(server.issuer),
                    display_url(url),
                    grant,
                    " ".join(scopes),
                )
                async with budget.spend():
                    state.client = await self._client_for(http, server, scopes)
                if grant == "client_credentials":
                    form = {"grant_type": grant, "scope": " ".join(scopes)}
                else:
                    form = await self._authorization_code(
                        http, server, state.client, scopes, budget
                    )
                async with budget.spend():
                    token = await request_token(http, server, state.client, form)
            state.token, state.requested, state.grant = token, scopes, grant
            return token

    async def _authorization_code(
        self,
        http: httpx2.AsyncClient,
        server: AuthorizationServer,
        client: Client,
        scopes: tuple[str, ...],
        budget: Budget,
    ) -> dict[str, str]:
        """The person's authorization code (PKCE S256), as the token request's form."""
        endpoint = server.endpoint("authorization_endpoint")
        if not endpoint:
            raise OAuthError(
                f"{display_url(server.issuer)} has no authorization endpoint; use the client "
                "credentials grant (--grant client-credentials)",
                target=display_url(server.issuer),
            )
        if not server.legacy and not server.supports("code_challenge_methods_supported", "S256"):
            raise OAuthError(
                f"{display_url(server.issuer)} does not advertise PKCE S256 "
                "(code_challenge_methods_supported); MCP forbids authorizing without it",
                target=display_url(server.issuer),
            )
        _check_https(endpoint, "authorization endpoint")
        pkce, state = PKCE.generate(), secrets.token_urlsafe(32)
        redirect_uri = self._handler.redirect_uri
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": redirect_uri,
            "code_challenge": pkce.code_challenge,
            "code_challenge_method": "S256",
            "state": state,
            "resource": server.resource,
            "scope": " ".join(scopes),
        }
        query = urlencode({k: v for k, v in params.items() if v})
        url = endpoint + ("&" if "?" in endpoint else "?") + query
        person = isinstance(self._handler, LoopbackRedirect)  # a person: its own timeout
        async with nullcontext() if person else budget.spend():
            location = await self._handler.authorize(url, http)
        code = code_from_redirect(
            location,
            state,
            issuer=None if server.legacy else server.metadata.get("issuer"),
            iss_required=server.metadata.get("authorization_response_iss_parameter_supported")
            is True,
        )
        return {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.code_verifier,
        }

    def _choose_grant(self, server: AuthorizationServer) -> str:
        if self.grant != "auto":
            return self.grant
        confidential = self.client_id and (self.client_secret or self.private_key)
        if confidential and server.supports("grant_types_supported", "client_credentials"):
            return "client_credentials"
        return "authorization_code"

    def _select_scopes(
        self,
        server: AuthorizationServer,
        challenge: Challenge,
        previous: tuple[str, ...],
        grant: str,
    ) -> tuple[str, ...]:
        # The spec's order: the challenge's scope, else everything the resource supports;
        # the user's own scopes come on top, and a step-up keeps those asked for before.
        base = challenge.scope or server.scopes_supported
        scopes = [*self.scopes, *base, *previous]
        if (
            scopes
            and grant == "authorization_code"
            and server.supports("scopes_supported", "offline_access")
        ):
            scopes.append("offline_access")  # a refresh token spares the user a second login
        return tuple(dict.fromkeys(scopes))

    def _check_pin(self, server: AuthorizationServer) -> None:
        """Refuse to authenticate with our secret or key to any issuer but the pinned one."""
        if self.issuer is None or not (self.client_secret or self.private_key):
            return
        if not same_issuer(self.issuer, [server.issuer]):
            raise OAuthError(
                f"the MCP server names the authorization server {display_url(server.issuer)}, "
                f"but the client secret is pinned to {display_url(self.issuer)} "
                "(schemaSync.auth.issuer, --oauth-issuer); refusing to send it elsewhere. "
                "If that server is trusted, pin its issuer URL instead",
                target=display_url(server.issuer),
            )

    def _configured_client(self, server: AuthorizationServer) -> Client:
        """The pre-registered client, after the pin (a public one, without a secret, too)."""
        assert self.client_id is not None
        self._check_pin(server)
        secret, key = self.client_secret, self.private_key
        method = choose_auth_method(server, secret=bool(secret), key=bool(key))
        return Client(self.client_id, secret, key, self.signing_algorithm, method)

    async def _client_for(
        self, http: httpx2.AsyncClient, server: AuthorizationServer, scopes: tuple[str, ...]
    ) -> Client:
        """A pre-registered client, a client ID metadata document URL, or a registered one."""
        if self.client_id:
            return self._configured_client(server)
        url = self.client_metadata_url
        if url and server.metadata.get("client_id_metadata_document_supported"):
            return Client(url)
        known = self._registered.get(server.issuer)
        if known is None or not known[1].issuperset(scopes):
            # Registered anew when a step-up needs scopes the registration did not name.
            _check_https(server.endpoint("registration_endpoint"), "registration endpoint")
            client = await register(
                http,
                server,
                client_name=self.client_name,
                redirect_uri=self._handler.redirect_uri,
                scopes=scopes,
            )
            known = self._registered[server.issuer] = (client, frozenset(scopes))
            log.debug("registered as a client of %s", display_url(server.issuer))
        return known[0]

    def _http(self) -> httpx2.AsyncClient:
        verify = True if self.verify is True else tls_context(self.verify, None)
        return httpx2.AsyncClient(
            verify=verify,
            timeout=httpx2.Timeout(self.timeout),
            follow_redirects=False,
            transport=self.transport,
            **client_settings(),  # type: ignore[arg-type]
        )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _resource_url(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _check_https(url: str, what: str) -> None:
    if url and urlsplit(url).scheme != "https" and not is_loopback(url):
        raise OAuthError(
            f"the {what} {display_url(url)} is not HTTPS; OAuth for MCP requires HTTPS for "
            "every authorization server endpoint except on loopback",
            target=display_url(url),
        )
