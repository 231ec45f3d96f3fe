"""The client credentials grant against a strict authorization server (oauthlib's token
endpoint with RFC 6749 client authentication, servers/oauth_servers.py) in front of the
official SDK's MCP server: how the client authenticates, which scopes it asks for, and what
it does when a token expires."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from langop_infra.mcp import ClientOptions, Session, fetch_tool_listing_sync
from langop_infra.mcp.oauth import OAuth2Auth, OAuthError
from tests.support.loopback import free_port

# Each character here is one a client that does not form-encode (RFC 6749 §2.3.1) mangles.
CLIENT_ID = "ci client:7"
SECRET = "s3cr%2Bt+/x:y ü€ 100%"


@pytest.fixture
def cc(server_module: Any, serve_app: Any) -> Iterator[tuple[str, Any]]:
    """The SDK's MCP server with the client-credentials stand-in; yields (MCP URL, issuer)."""
    servers = server_module("oauth_servers")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    issuer = servers.StandInAuthorizationServer(f"{base}/as", CLIENT_ID, SECRET)
    with serve_app(servers.client_credentials_server(base, issuer, ["tools"]), port=port):
        yield f"{base}/mcp", issuer


def auth(**more: Any) -> OAuth2Auth:
    return OAuth2Auth(client_id=CLIENT_ID, client_secret=SECRET, **more)


@pytest.mark.parametrize(
    ("methods", "in_body"),
    [
        (("client_secret_basic",), False),
        (("client_secret_post",), True),
        (("client_secret_post", "client_secret_basic"), False),  # both: Basic, RFC's default
        (None, False),  # not advertised: RFC 8414 says client_secret_basic
    ],
)
def test_the_secret_goes_the_way_the_server_advertises(
    cc: tuple[str, Any], methods: tuple[str, ...] | None, in_body: bool
) -> None:
    url, issuer = cc
    issuer.methods = methods
    listing = fetch_tool_listing_sync(url, ClientOptions(auth=auth()))
    assert [tool["name"] for tool in listing.tools] == ["whoami"]
    assert issuer.refusals == []  # the server would refuse any other method, or a mangled secret
    (form,) = issuer.requests
    assert form.get("client_secret") == (SECRET if in_body else None)
    assert form["client_id"] == CLIENT_ID


def test_a_server_that_takes_no_secret_method_gets_no_secret(cc: tuple[str, Any]) -> None:
    url, issuer = cc
    issuer.methods = ("private_key_jwt",)
    with pytest.raises(OAuthError) as caught:
        fetch_tool_listing_sync(url, ClientOptions(auth=auth()))
    assert str(caught.value) == (
        f"{issuer.base_url} accepts client authentication by private_key_jwt only "
        "(token_endpoint_auth_methods_supported), not by client secret; give the client a "
        "private key (private_key_jwt) or ask for a client_secret_basic or client_secret_post "
        "client"
    )
    assert issuer.requests == []  # the secret was never sent


def test_a_scope_the_client_may_not_have_is_refused_by_name(cc: tuple[str, Any]) -> None:
    url, issuer = cc
    with pytest.raises(OAuthError) as caught:
        fetch_tool_listing_sync(url, ClientOptions(auth=auth(scopes=["admin"])))
    assert "refused the client credentials token request with HTTP 400: invalid_scope" in str(
        caught.value
    )
    assert [form["scope"] for form in issuer.requests] == ["admin tools"]
    assert issuer.refusals == ["invalid_scope"]


def test_a_narrowed_grant_is_used_while_it_has_what_the_server_needs(
    cc: tuple[str, Any],
) -> None:
    url, issuer = cc
    issuer.narrow_scopes = True
    listing = fetch_tool_listing_sync(url, ClientOptions(auth=auth(scopes=["admin"])))
    assert [tool["name"] for tool in listing.tools] == ["whoami"]
    ((_, grant),) = issuer.tokens.items()
    assert grant["scope"] == "tools"  # "admin" was asked for and not granted

    issuer.scopes = ("reports",)  # now "tools" is not the client's: 403 insufficient_scope
    with pytest.raises(OAuthError) as caught:
        fetch_tool_listing_sync(url, ClientOptions(auth=auth(scopes=["reports"])))
    assert "still demands tools (HTTP 403 insufficient_scope)" in str(caught.value)
    assert [form["scope"] for form in issuer.requests] == ["admin tools", "reports tools"]


def test_an_expired_token_is_replaced_before_it_is_sent(cc: tuple[str, Any]) -> None:
    url, issuer = cc
    issuer.token_lifetime = 1  # the client renews at half of it

    async def scenario() -> list[str]:
        async with Session(url, ClientOptions(auth=auth())) as session:
            names = [tool["name"] for tool in await session.list_tools()]
            await asyncio.sleep(1.05)  # past the token's expiry on both sides
            del issuer.presented[:]
            # two requests at once find the token expired: one new token for both
            result, again = await asyncio.gather(session.call_tool("whoami"), session.list_tools())
        return [*names, result.content[0]["text"], *(tool["name"] for tool in again)]

    assert asyncio.run(scenario()) == ["whoami", "authorized", "whoami"]
    first, second = issuer.tokens
    assert [form["scope"] for form in issuer.requests] == ["tools", "tools"]
    # each went once, with the new token: neither the expired one nor none (and a 401)
    assert issuer.presented[:2] == [f"POST /mcp Bearer {second}"] * 2
    assert f"Bearer {first}" not in " ".join(issuer.presented)


def _basic(client_id: str, secret: str, *, encode: bool = True) -> str:
    pair = (
        f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        if encode
        else f"{client_id}:{secret}"
    )
    return "Basic " + base64.b64encode(pair.encode()).decode()


@pytest.mark.parametrize(
    ("headers", "form", "status", "error"),
    [
        ({"Authorization": _basic(CLIENT_ID, SECRET, encode=False)}, {}, 401, "invalid_client"),
        (
            {"Authorization": _basic(CLIENT_ID, SECRET)},
            {"client_id": "other"},
            401,
            "invalid_client",
        ),
        (
            {"Authorization": _basic(CLIENT_ID, SECRET)},
            {"client_secret": SECRET},
            400,
            "invalid_request",
        ),
        (
            {},
            {"client_id": CLIENT_ID, "client_secret": SECRET},
            401,
            "invalid_client",
        ),  # not advertised
        (
            {"Authorization": _basic(CLIENT_ID, SECRET)},
            {"grant_type": "password"},
            400,
            "unsupported_grant_type",
        ),
        (
            {"Authorization": _basic(CLIENT_ID, SECRET)},
            {"scope": "tools admin"},
            400,
            "invalid_scope",
        ),
    ],
    ids=[
        "basic-not-form-encoded",
        "client-id-mismatch",
        "two-methods",
        "post-not-advertised",
        "other-grant",
        "unknown-scope",
    ],
)
def test_the_stand_in_refuses_as_rfc_6749_says(
    cc: tuple[str, Any], headers: dict[str, str], form: dict[str, str], status: int, error: str
) -> None:
    """The stand-in is no kinder than a real server: each of these is refused, by name."""
    _, issuer = cc
    answer = httpx.post(
        f"{issuer.base_url}/token",
        data={"grant_type": "client_credentials", **form},
        headers=headers,
    )
    assert (answer.status_code, answer.json()["error"]) == (status, error)
    assert answer.headers["cache-control"] == "no-store"
    if status == 401:
        assert answer.headers["www-authenticate"] == 'Basic realm="token"'
    assert issuer.tokens == {}
