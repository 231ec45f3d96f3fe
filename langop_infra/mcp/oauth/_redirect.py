"""Getting the user's authorization code: print and listen on loopback, or follow redirects."""

from __future__ import annotations

import asyncio
import socket
import sys
import webbrowser
from dataclasses import dataclass, field
from typing import Protocol, TextIO
from urllib.parse import parse_qs, urlsplit

import httpx2

from langop_infra.mcp._http import display_url
from langop_infra.mcp.oauth._errors import OAuthError

_MAX_HOPS = 5
_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"<!doctype html><title>langop-infra</title><p>Authorization received. "
    b"You can close this window.</p>"
)
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class RedirectHandler(Protocol):
    """Takes the user through the authorization URL; returns the redirect back to us."""

    @property
    def redirect_uri(self) -> str: ...

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> str: ...


def code_from_redirect(
    location: str, state: str, *, issuer: str | None = None, iss_required: bool = False
) -> str:
    """The ``code`` of the redirect back to us, after checking ``iss``, ``state`` and ``error``.

    ``iss`` (RFC 9207) is compared with ``issuer`` exactly, before anything else of the
    response is believed; it must be there when the server advertises it.
    """
    query = parse_qs(urlsplit(location).query)
    iss = query.get("iss", [None])[0]
    if issuer is not None and (iss is not None or iss_required) and iss != issuer:
        raise OAuthError(
            "the authorization response comes from another issuer than "
            f"{display_url(issuer)} (RFC 9207 iss {'missing' if iss is None else 'mismatch'}); "
            "possible mix-up attack, authorization abandoned"
        )
    error = query.get("error", [""])[0]
    if error:
        description = query.get("error_description", [""])[0][:160]
        raise OAuthError(
            f"the authorization server refused authorization: {error[:60]}"
            + (f" ({description})" if description else "")
            + "; check the client id, redirect URI and scopes"
        )
    if query.get("state", [""])[0] != state:
        raise OAuthError(
            "the redirect from the authorization server carries the wrong state; possible "
            "request forgery, start the authorization again"
        )
    code = query.get("code", [""])[0]
    if not code:
        raise OAuthError("the redirect from the authorization server carries no authorization code")
    return code


@dataclass(frozen=True)
class FollowRedirect:
    """Fetch the authorization URL and take the code from its redirect, without a browser.

    For identity providers that redirect at once (no login or consent page), and for tests.
    Nothing listens on the redirect URI: the code is read from the ``Location`` header.
    """

    redirect_uri: str = "http://127.0.0.1:8976/callback"

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> str:
        target = url
        for _ in range(_MAX_HOPS):
            try:
                # Headers only: the page itself (a login form, say) is never needed.
                async with http.stream("GET", target) as response:
                    pass
            except httpx2.HTTPError as exc:
                raise OAuthError(
                    f"cannot fetch the authorization URL {display_url(target)}: "
                    f"{type(exc).__name__}; check that the authorization server is reachable",
                    target=display_url(target),
                ) from None
            location = response.headers.get("location")
            if response.status_code not in (301, 302, 303, 307, 308) or not location:
                raise OAuthError(
                    f"{display_url(target)} answered HTTP {response.status_code} instead of "
                    "redirecting back with a code: it wants a person (login or consent); "
                    "use --oauth-redirect print or browser",
                    target=display_url(target),
                )
            location = str(httpx2.URL(target).join(location))
            if location.split("?", 1)[0] == self.redirect_uri.split("?", 1)[0]:
                return location
            target = location
        raise OAuthError(
            f"{display_url(url)} redirected more than {_MAX_HOPS} times without coming back "
            "to the redirect URI; use --oauth-redirect print or browser",
            target=display_url(url),
        )


@dataclass(kw_only=True, eq=False)
class LoopbackRedirect:
    """Show the authorization URL (and open a browser if asked); receive the code on loopback.

    The listener binds 127.0.0.1 on a free port (RFC 8252 §7.3) when the redirect URI is
    first needed, and serves one callback at most ``timeout`` seconds later.
    """

    open_browser: bool = False
    timeout: float = 300.0
    out: TextIO | None = None
    _socket: socket.socket | None = field(default=None, init=False, repr=False)
    # kept: a registered redirect URI must stay valid for the next login
    _port: int = field(default=0, init=False, repr=False)

    @property
    def redirect_uri(self) -> str:
        if self._socket is None:
            self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self._socket.bind(("127.0.0.1", self._port))
            self._socket.listen(8)
            self._socket.setblocking(False)
            self._port = self._socket.getsockname()[1]
        return f"http://127.0.0.1:{self._port}/callback"

    async def authorize(self, url: str, http: httpx2.AsyncClient) -> str:
        redirect_uri = self.redirect_uri
        assert self._socket is not None
        received: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                line = await asyncio.wait_for(reader.readline(), 10)
                target = line.decode("latin-1").split(" ")[1] if line.count(b" ") >= 2 else ""
                if urlsplit(target).path != "/callback" or received.done():
                    writer.write(_NOT_FOUND)
                    return
                writer.write(_PAGE)
                received.set_result(redirect_uri + target[len("/callback") :])
            except (OSError, asyncio.TimeoutError, IndexError):
                pass  # a stray connection; keep waiting for the real callback
            finally:
                writer.close()

        server = await asyncio.start_server(handle, sock=self._socket)
        self._socket = None  # the server owns it now, and closes it
        out = self.out or sys.stderr
        print(f"Open this URL to authorize langop-infra:\n  {url}", file=out, flush=True)
        if self.open_browser:
            webbrowser.open(url)
        try:
            location = await asyncio.wait_for(received, self.timeout)
        except asyncio.TimeoutError:
            raise OAuthError(
                f"no authorization arrived at {redirect_uri} within {self.timeout:g}s; "
                "open the URL shown and approve, or use client credentials"
            ) from None
        finally:
            server.close()
            await server.wait_closed()
        return location
