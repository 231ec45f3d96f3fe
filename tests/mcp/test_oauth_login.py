"""A login before the first request (a person may approve) starts from the server's own
challenge, so the scope its 401 names leads, as it would in the middle of a session.

The server is a STAND-IN (a raw ASGI app): it only answers 401 with a challenge naming a
scope and records what reached it; the authorization that follows is recorded, not run.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langop_infra.mcp.oauth import FollowRedirect, OAuth2Auth
from tests.faultservers import lifespan, read_body


def test_login_uses_the_scope_of_the_servers_challenge(
    serve_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    received: list[tuple[str, str, bytes]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        received.append((scope["method"], scope["path"], await read_body(receive)))
        challenge = b'Bearer error="invalid_token", scope="files:read files:write"'
        headers = [(b"www-authenticate", challenge), (b"content-length", b"0")]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    auth = OAuth2Auth(redirect=FollowRedirect())
    authorized: list[Any] = []

    async def authorize(state: Any, url: str, challenge: Any, sent: Any, step_up: bool) -> Any:
        authorized.append((url, challenge, step_up))

    monkeypatch.setattr(auth, "_authorize", authorize)
    with serve_app(app) as base:
        assert asyncio.run(auth.login(f"{base}/mcp")) is True
    ((url, challenge, step_up),) = authorized
    assert (url, challenge.scope, step_up) == (f"{base}/mcp", ("files:read", "files:write"), False)
    # One token-less ping, and nothing else, before authorizing.
    assert [(m, p) for m, p, _ in received] == [("POST", "/mcp")]
    assert b'"method": "ping"' in received[0][2]
