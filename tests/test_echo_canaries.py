"""No channel repeats a credential a server echoes, and none writes its terminal controls raw.

The servers are :class:`tests.test_schema_sync_redaction.Echo`, a hostile STAND-IN that
repeats every header it got: in 401 bodies and ``WWW-Authenticate``, in 500 pages, and
(``listing``) in its ``serverInfo`` and tool list, with ESC, CSI (C1) and a bidi override in
a tool name. Channels: the CLI's stderr, its table and ``--json``; the schema-sync state and
preview (through the SDK's servicer); the ``schemas`` lock file and output.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langop_infra.cli.main import main
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, Secret, shown
from tests.test_schema_sync_redaction import (
    API_KEY,
    HEADER_TOKEN,
    HEADERS,
    PROJECT_DIR,
    STACK,
    Echo,
    assert_no_canary,
)

RAW_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
FLAGS = ["-H", f"Authorization: Bearer {HEADER_TOKEN}", "-H", f"X-Api-Key: {API_KEY}"]


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with serve(Echo()) as base:
        yield base


def _tools(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["tools", *argv, *FLAGS, "--timeout", "3"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("fault", ["e401", "e500", "e403", "rpc-error"])
def test_cli_stderr_never_shows_an_echoed_header(
    echo: str, fault: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _tools([f"{echo}/{fault}/mcp"], capsys)
    assert code == 1
    assert err.startswith("langop-infra tools: error: http://127.0.0.1:")
    assert_no_canary(out, err)
    assert "[secret]" in err  # the echo was there, and was removed
    assert not RAW_CONTROLS.search(err)


def test_cli_table_scrubs_and_escapes_what_the_server_listed(
    echo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _tools([f"{echo}/listing/mcp"], capsys)
    assert code == 0, err
    assert_no_canary(out, err)
    assert "\\u001b[2J\\u009b31m\\u202e" in out
    assert "[secret]" in out and not RAW_CONTROLS.search(out)


def test_cli_json_is_valid_scrubbed_and_has_no_raw_controls(
    echo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _tools([f"{echo}/listing/mcp", "--json"], capsys)
    assert code == 0, err
    assert_no_canary(out, err)
    assert not RAW_CONTROLS.search(out)
    document = json.loads(out)
    (tool,) = document["tools"]
    # Escaped on the wire, the same characters once decoded.
    assert tool["name"].startswith("t\x1b[2J\x9b31m\u202e")
    assert "[secret]" in tool["description"] and "[secret]" in document["server"]["name"]


def _inputs(base: str) -> dict[str, Any]:
    return {
        "endpoint": base,
        "mcp_path": "/mcp",
        "access": "direct",
        "sync_url": f"{base}/listing/mcp",
        "namespace": "apps",
        "service": "memory",
        "port": 8080,
        "timeout": 3,
        "required": True,
        "headers": Secret(HEADERS),
    }


def test_state_and_preview_hold_no_echoed_header(echo: str) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    assert host.up(_inputs(echo)) == "create"
    outs = host.plain_outputs()
    assert outs["phase"] == "Registered"
    stored = json.dumps([outs["tool_schemas"], outs["server_info"], outs["tool_names"]])
    assert "[secret]" in stored
    assert_no_canary(stored, host.state_text())
    # The preview's probe scrubs the same way, so an unchanged server shows no change.
    preview = host.preview(_inputs(echo))
    assert preview.op == "same"
    assert_no_canary(json.dumps(preview.failures), json.dumps(shown(preview.checked)))


def test_schemas_lock_and_output_hold_no_echoed_header_or_control(
    echo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "Pulumi.ci.yaml"
    config.write_text(STACK.format(token=HEADER_TOKEN))
    lock = tmp_path / "schemas.lock.yaml"
    argv = ["schemas", "--config", str(config), "--project-dir", str(PROJECT_DIR)]
    argv += ["--lock", str(lock), "--url", f"memory={echo}/listing/mcp"]
    capsys.readouterr()
    assert main([*argv, "--update"]) == 0
    lock.write_text(lock.read_text().replace("sent ", "said "))  # a changed description
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    assert_no_canary(out, err, lock.read_text())
    assert "[secret]" in lock.read_text()
    assert not RAW_CONTROLS.search(out + err)
    assert "\\u001b[2J" in out


def token_echoing_app(issuer: Any, base: str) -> Any:
    """STAND-IN resource server: demands a token of ``issuer`` (the client-credentials
    stand-in), then echoes the token and the client secret it never saw into its listing."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from tests import faultservers

    async def resource_metadata(request: Request) -> JSONResponse:
        return JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [f"{base}/as"]})

    async def mcp(request: Request) -> Response:
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        if token not in issuer.tokens:
            challenge = f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource"'
            return Response(status_code=401, headers={"www-authenticate": challenge})
        message = faultservers.parse_message(await request.body())
        if "id" not in message:
            return Response(status_code=202)
        if message["method"] != "tools/list":
            info = {**faultservers.INIT_RESULT, "serverInfo": {"name": f"for {token}"}}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": info})
        tool = {"name": "t", "description": f"token {token}", "inputSchema": {"type": "object"}}
        return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [tool]}})

    return Starlette(
        routes=[
            Route("/.well-known/oauth-protected-resource", resource_metadata),
            Route("/.well-known/oauth-authorization-server/as", issuer.metadata),
            Route("/as/token", issuer.token, methods=["POST"]),
            Route("/mcp", mcp, methods=["POST", "DELETE"]),
        ]
    )


def test_state_holds_no_oauth_token_the_tool_echoed() -> None:
    from tests.mcp.conftest import load_server_module
    from tests.support.loopback import free_port

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    servers = load_server_module("oauth_servers")
    issuer = servers.StandInAuthorizationServer(f"{base}/as", "sync-client", "oauth-canary-3b9e")
    with serve(token_echoing_app(issuer, base), port=port):
        host = EngineHost(ToolSchemaSyncProvider())
        oauth = {"client_id": "sync-client", "client_secret": "oauth-canary-3b9e"}
        inputs = {**_inputs(base), "sync_url": f"{base}/mcp", "headers": Secret({})}
        inputs["oauth"] = Secret({**oauth, "scopes": [], "issuer": f"{base}/as"})
        assert host.up(inputs) == "create"
    (token,) = issuer.tokens
    outs = host.plain_outputs()
    assert outs["phase"] == "Registered", outs["last_error"]
    assert outs["tool_schemas"][0]["description"] == "token [secret]"
    assert outs["server_info"]["name"] == "for [secret]"
    assert token not in host.state_text() and "oauth-canary-3b9e" not in host.state_text()
