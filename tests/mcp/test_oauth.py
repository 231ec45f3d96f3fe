"""OAuth 2.1 against the official SDK's MCP server demanding tokens (see servers/oauth_servers)."""

from __future__ import annotations

import asyncio
import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from langop_infra.cli.main import main
from langop_infra.mcp import ClientOptions, Session, fetch_tool_listing, fetch_tool_listing_sync
from langop_infra.mcp.oauth import FollowRedirect, LoopbackRedirect, OAuth2Auth, OAuthError
from tests.support.loopback import free_port

SECRET = "s3cret-canary-4c8a1f"


@pytest.fixture
def servers(server_module: Any) -> Any:
    return server_module("oauth_servers")


@pytest.fixture
def sdk(servers: Any, serve_app: Any) -> Iterator[tuple[str, Any]]:
    """The SDK's MCP server, its own authorization server; yields (MCP URL, provider)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    provider = servers.MemoryProvider()
    with serve_app(servers.sdk_server(base, provider, ["tools"]), port=port):
        yield f"{base}/mcp", provider


@pytest.fixture
def cc(servers: Any, serve_app: Any) -> Iterator[tuple[str, Any]]:
    """The SDK's MCP server with the client-credentials stand-in; yields (MCP URL, issuer)."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    issuer = servers.StandInAuthorizationServer(f"{base}/as", "ci-client", SECRET)
    with serve_app(servers.client_credentials_server(base, issuer, ["tools"]), port=port):
        yield f"{base}/mcp", issuer


def test_authorization_code_with_dynamic_registration_lists_tools(
    sdk: tuple[str, Any],
) -> None:
    url, provider = sdk
    listing = fetch_tool_listing_sync(
        url, ClientOptions(auth=OAuth2Auth(redirect=FollowRedirect()))
    )
    assert [tool["name"] for tool in listing.tools] == ["whoami"]
    assert provider.grants == ["authorization_code"]
    (client,) = provider.clients.values()
    assert [str(uri) for uri in client.redirect_uris] == ["http://127.0.0.1:8976/callback"]
    token = provider.tokens[provider.issued[0]]
    assert (token.resource, token.scopes) == (url, ["tools"])


def test_a_refused_token_is_refreshed_not_authorized_again(sdk: tuple[str, Any]) -> None:
    url, provider = sdk

    async def scenario() -> list[str]:
        options = ClientOptions(auth=OAuth2Auth(redirect=FollowRedirect()))
        async with Session(url, options) as session:
            await session.list_tools()
            provider.tokens.clear()  # the server forgets the access token: 401 next time
            result = await session.call_tool("whoami")
        assert result.content[0]["text"] == "authorized"
        return provider.grants

    assert asyncio.run(scenario()) == ["authorization_code", "refresh_token"]


def test_loopback_redirect_receives_the_code_from_the_browser(sdk: tuple[str, Any]) -> None:
    """A person's browser is played by httpx: it opens the printed URL and follows it."""
    url, provider = sdk
    printed = io.StringIO()

    async def browser() -> None:
        for _ in range(500):
            found = re.search(r"http://\S+/authorize\?\S+", printed.getvalue())
            if found:
                async with httpx.AsyncClient(follow_redirects=True) as client:
                    page = await client.get(found.group(0))
                assert "Authorization received" in page.text
                return
            await asyncio.sleep(0.01)
        raise AssertionError("no authorization URL was printed")

    async def scenario() -> list[str]:
        auth = OAuth2Auth(redirect=LoopbackRedirect(out=printed, timeout=20))
        logged_in, _ = await asyncio.gather(auth.login(url), browser())
        assert logged_in
        async with Session(url, ClientOptions(auth=auth)) as session:
            return [tool["name"] for tool in await session.list_tools()]

    assert asyncio.run(scenario()) == ["whoami"]
    assert provider.grants == ["authorization_code"]


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_client_credentials_grant_authenticates_as_the_server_allows(
    cc: tuple[str, Any], method: str
) -> None:
    url, issuer = cc
    issuer.methods, issuer.scopes = (method,), ("tools", "extra")
    auth = OAuth2Auth(client_id="ci-client", client_secret=SECRET, scopes=["extra"])
    listing = fetch_tool_listing_sync(url, ClientOptions(auth=auth))
    assert [tool["name"] for tool in listing.tools] == ["whoami"]
    (form,) = issuer.requests
    assert form["grant_type"] == "client_credentials"
    assert form["resource"] == url
    assert form["scope"] == "extra tools"
    assert ("client_secret" in form) == (method == "client_secret_post")


def test_cli_lists_tools_with_client_credentials_and_never_prints_secrets(
    cc: tuple[str, Any],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, issuer = cc
    monkeypatch.setenv("LANGOP_TEST_SECRET", SECRET)
    caplog.set_level(logging.DEBUG)
    argv = ["tools", url, "--client-id", "ci-client", "--client-secret-env", "LANGOP_TEST_SECRET"]
    argv += ["--oauth-issuer", issuer.base_url]
    assert main([*argv, "-o", "json"]) == 0
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert '"name": "whoami"' in out
    assert len(issuer.tokens) == 2
    for canary in [SECRET, *issuer.tokens]:
        assert canary not in out + err
        assert canary not in caplog.text


def test_errors_and_logs_carry_no_secret_even_when_the_server_echoes_it(
    cc: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    url, issuer = cc
    issuer.echo_secret_in_errors = True
    issuer.client_secret = "the-right-one"
    caplog.set_level(logging.DEBUG)
    auth = OAuth2Auth(client_id="ci-client", client_secret=SECRET)
    with pytest.raises(OAuthError) as caught:
        fetch_tool_listing_sync(url, ClientOptions(auth=auth))
    message = str(caught.value)
    assert "refused the client credentials token request with HTTP 401: invalid_client" in message
    assert "bad client ci-client:[secret]" in message
    for text in (message, repr(caught.value), repr(auth), caplog.text):
        assert SECRET not in text


def test_a_token_the_server_refuses_ends_in_an_error_without_the_token(
    cc: tuple[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    url, issuer = cc
    issuer.honoured = False
    caplog.set_level(logging.DEBUG)
    auth = OAuth2Auth(client_id="ci-client", client_secret=SECRET)
    with pytest.raises(OAuthError, match="refused the access token it was just issued") as caught:
        fetch_tool_listing_sync(url, ClientOptions(auth=auth))
    (token,) = issuer.tokens
    for text in (str(caught.value), repr(caught.value), caplog.text):
        assert token not in text and SECRET not in text


def test_cli_names_an_unset_secret_variable(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tools", "http://127.0.0.1:9/mcp", "--client-id", "x", "--oauth-issuer", "http://[::1]"]
    assert main([*argv, "--client-secret-env", "LANGOP_TEST_UNSET_VAR"]) == 2
    assert "environment variable LANGOP_TEST_UNSET_VAR" in capsys.readouterr().err
    assert main(["tools", "http://127.0.0.1:9/mcp", "--grant", "client-credentials"]) == 2
    assert "needs --client-id and --client-secret-env" in capsys.readouterr().err


def test_cli_follow_redirect_logs_in_without_a_person(
    sdk: tuple[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    url, provider = sdk
    assert main(["tools", url, "--oauth-redirect", "follow", "--scope", "tools"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("NAME") and "whoami" in out
    assert provider.grants == ["authorization_code"]
    assert provider.issued[0] not in out + err


def test_concurrent_sessions_share_one_authorization(sdk: tuple[str, Any]) -> None:
    url, provider = sdk
    auth = OAuth2Auth(redirect=FollowRedirect())

    async def both() -> None:
        options = ClientOptions(auth=auth)
        await asyncio.gather(*(fetch_tool_listing(url, options) for _ in range(3)))

    asyncio.run(both())
    assert provider.grants == ["authorization_code"]
    assert len(provider.clients) == 1


def test_a_token_is_only_ever_sent_to_the_server_it_was_issued_for(
    servers: Any, serve_app: Any
) -> None:
    ports = free_port(), free_port()
    providers = servers.MemoryProvider(), servers.MemoryProvider()
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    auth = OAuth2Auth(redirect=FollowRedirect())
    with (
        serve_app(servers.sdk_server(bases[0], providers[0]), port=ports[0]),
        serve_app(servers.sdk_server(bases[1], providers[1]), port=ports[1]),
    ):
        for base in [*bases, *bases]:
            fetch_tool_listing_sync(f"{base}/mcp", ClientOptions(auth=auth))
    first, second = providers
    assert (first.grants, second.grants) == (["authorization_code"], ["authorization_code"])
    assert set(first.presented) == set(first.issued)
    assert set(second.presented) == set(second.issued)
