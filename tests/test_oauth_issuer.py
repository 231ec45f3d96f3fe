"""The OAuth client secret goes only to the pinned issuer (#28 §3).

Real parts on two loopback ports, that is two origins: the official SDK's MCP server as
resource server on one, whose protected resource metadata names an authorization server on
the other (the client-credentials stand-in of ``tests/mcp/servers/oauth_servers.py``, since
the SDK's own has no such grant). Before the pin, the secret went to whatever server the
tool's metadata named, on any origin and over plain http.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from langop_infra.cli.main import main
from langop_infra.mcp import ClientOptions, fetch_tool_listing_sync
from langop_infra.mcp.oauth import OAuth2Auth, OAuthError
from langop_infra.sync.provider import sync_schema
from tests.faultservers import lifespan, read_body
from tests.mcp.conftest import load_server_module
from tests.support.loopback import free_port, serve

SECRET = "pin-canary-5e0c2b7d"


@dataclass
class Origins:
    mcp: str  # the tool's MCP URL (origin A)
    issuer: str  # the authorization server it names (origin B)
    server: Any  # the stand-in authorization server: its requests and tokens


def authorization_server_app(issuer: Any) -> Starlette:
    """The stand-in authorization server alone, at its own origin."""
    return Starlette(
        routes=[
            Route("/.well-known/oauth-authorization-server/as", issuer.metadata),
            Route("/as/token", issuer.token, methods=["POST"]),
        ]
    )


@pytest.fixture
def origins() -> Iterator[Origins]:
    servers = load_server_module("oauth_servers")
    port_a, port_b = free_port(), free_port()
    issuer_url = f"http://127.0.0.1:{port_b}/as"
    issuer = servers.StandInAuthorizationServer(issuer_url, "ci-client", SECRET)
    mcp_app = servers.client_credentials_server(f"http://127.0.0.1:{port_a}", issuer, ["tools"])
    with ExitStack() as stack:
        stack.enter_context(serve(authorization_server_app(issuer), port_b))
        base = stack.enter_context(serve(mcp_app, port_a))
        yield Origins(f"{base}/mcp", issuer_url, issuer)


def _auth(issuer: str | None) -> OAuth2Auth:
    return OAuth2Auth(client_id="ci-client", client_secret=SECRET, issuer=issuer)


def test_the_pinned_issuer_on_another_origin_gets_the_secret(origins: Origins) -> None:
    listing = fetch_tool_listing_sync(origins.mcp, ClientOptions(auth=_auth(origins.issuer)))
    assert [tool["name"] for tool in listing.tools] == ["whoami"]
    assert [form["grant_type"] for form in origins.server.requests] == ["client_credentials"]


def test_another_issuer_never_sees_the_secret(origins: Origins) -> None:
    pinned = f"http://127.0.0.1:{free_port()}/as"
    with pytest.raises(OAuthError) as caught:
        fetch_tool_listing_sync(origins.mcp, ClientOptions(auth=_auth(pinned), timeout=5))
    message = str(caught.value)
    assert f"names the authorization server {origins.issuer}" in message
    assert f"pinned to {pinned}" in message and "refusing to send it elsewhere" in message
    assert origins.server.requests == []  # no token request reached it
    assert SECRET not in message


def test_cli_needs_an_issuer_with_a_secret_and_refuses_another(
    origins: Origins, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIN_SECRET", SECRET)
    argv = ["tools", origins.mcp, "--client-id", "ci-client", "--client-secret-env", "PIN_SECRET"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--client-secret-env needs --oauth-issuer URL" in err
    assert main([*argv, "--oauth-issuer", "http://auth.example.com"]) == 2
    assert "must be an https URL (http only on loopback)" in capsys.readouterr().err
    other = f"http://127.0.0.1:{free_port()}/as"
    assert main([*argv, "--oauth-issuer", other]) == 1
    out, err = capsys.readouterr()
    assert f"pinned to {other}" in err and SECRET not in out + err
    assert origins.server.requests == []
    assert main([*argv, "--oauth-issuer", origins.issuer]) == 0
    assert "whoami" in capsys.readouterr().out


def test_schema_sync_refuses_an_unpinned_issuer(origins: Origins) -> None:
    base = origins.mcp.removesuffix("/mcp")
    inputs = {
        "endpoint": base,
        "mcp_path": "/mcp",
        "access": "direct",
        "namespace": "apps",
        "service": "memory",
        "timeout": 5,
        "oauth": {
            "client_id": "ci-client",
            "client_secret": SECRET,
            "scopes": [],
            "issuer": f"http://127.0.0.1:{free_port()}/as",
        },
    }
    outs = sync_schema(inputs)
    assert outs["phase"] == "Error"
    assert "refusing to send it elsewhere" in outs["last_error"]
    assert origins.server.requests == []
    outs = sync_schema({**inputs, "oauth": {**inputs["oauth"], "issuer": origins.issuer}})
    assert (outs["phase"], outs["tool_names"]) == ("Registered", ["whoami"])


def test_resource_metadata_on_another_origin_over_http_is_refused() -> None:
    """The tool's challenge points at metadata on another origin, over plain http."""
    seen: list[str] = []

    async def elsewhere(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        seen.append(scope["path"])
        await send({"type": "http.response.start", "status": 404, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    with serve(elsewhere) as other:

        async def tool(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] == "lifespan":
                await lifespan(receive, send)
                return
            await read_body(receive)
            challenge = f'Bearer resource_metadata="{other}/.well-known/oauth-protected-resource"'
            headers = [(b"www-authenticate", challenge.encode()), (b"content-length", b"0")]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": b""})

        with serve(tool) as base:
            auth = _auth(f"{other}/as")
            with pytest.raises(OAuthError, match="neither HTTPS nor on the server's own origin"):
                asyncio.run(
                    _listing(
                        f"{base}/mcp", ClientOptions(auth=auth, timeout=5, protocol="2025-11-25")
                    )
                )
    assert seen == []


async def _listing(url: str, options: ClientOptions) -> Any:
    from langop_infra.mcp import fetch_tool_listing

    return await fetch_tool_listing(url, options)


@pytest.mark.parametrize(
    ("auth", "said"),
    [
        ({}, "set schemaSync.auth.issuer to that server's issuer URL"),
        ({"issuer": "http://auth.example.com"}, "must be an https URL (http only on loopback)"),
    ],
)
def test_the_spec_asks_for_an_https_issuer(auth: dict[str, str], said: str) -> None:
    from langop_infra import LanguageCluster, SpecError
    from langop_infra.offline._mock_engine import run_program

    document = {
        "namespace": "apps",
        "secrets": {"sync-oauth": {"secret": SECRET}},
        "tools": [
            {
                "name": "memory",
                "image": "m:1",
                "schemaSync": {
                    "auth": {
                        "clientId": "c",
                        "clientSecret": {"secretKeyRef": {"name": "sync-oauth", "key": "secret"}},
                        **auth,
                    }
                },
            }
        ],
    }
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster("apps", document))
    [problem] = caught.value.problems
    assert problem.path == "tools[0].schemaSync.auth"
    assert said in problem.message and SECRET not in str(caught.value)


def test_the_provider_checks_an_unpinned_secret_before_any_request() -> None:
    from langop_infra.sync.provider import ToolSchemaSyncProvider

    oauth = {"client_id": "c", "client_secret": SECRET, "scopes": []}
    news = {"endpoint": "http://127.0.0.1:9", "access": "direct", "oauth": oauth}
    result = ToolSchemaSyncProvider().check({}, news)
    assert [(f.property, f.reason) for f in result.failures] == [
        ("oauth", "a client secret needs its issuer (schemaSync.auth.issuer) to be sent to")
    ]
    pinned = {**news, "oauth": {**oauth, "issuer": "https://auth.example.com"}}
    assert ToolSchemaSyncProvider().check({}, pinned).failures == []
