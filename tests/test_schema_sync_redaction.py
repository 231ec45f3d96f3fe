"""No credential reaches an output, a failure or the ``schemas`` command, whatever the server
answers.

Canaries ride in every place a sync sends a credential: two headers, the sync URL's userinfo
and its query. :class:`Echo` is a hostile STAND-IN (no real MCP server echoes credentials on
demand) that puts everything it received into its error answers: bodies of 401, 403 and 500,
a ``WWW-Authenticate`` challenge, a JSON-RPC error, a malformed reply; plus a server that
never answers (timeout) and a plain-HTTP server asked for TLS. Each fault runs through the
SDK's servicer (outputs as the state and previews show them, and the failure the engine
prints for ``required``), and through ``langop-infra schemas`` (stdout and stderr).
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langop_infra.cli.main import main
from langop_infra.core._redact import redact, secret_strings
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests import faultservers
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, ProviderFailure, Secret, shown

HEADER_TOKEN = "canary-hdr-7f3a9c0e"
API_KEY = "canary-key-51be20aa"
PASSWORD = "canary-pw-0d9e11"
QUERY = "canary-q-88ad42"
BASIC = base64.b64encode(f"sync:{PASSWORD}".encode()).decode()
CANARIES = (HEADER_TOKEN, API_KEY, PASSWORD, QUERY, BASIC)
HEADERS = {"Authorization": f"Bearer {HEADER_TOKEN}", "X-Api-Key": API_KEY}
PROJECT_DIR = Path(__file__).resolve().parents[1]
SENSITIVE = (b"authorization", b"x-api-key")


class Echo:
    """STAND-IN: an MCP endpoint that repeats back every header and the query it got."""

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await faultservers.lifespan(receive, send)
            return
        body = await faultservers.read_body(receive)
        message = faultservers.parse_message(body)
        # Credentials first, so that the client's own truncation cannot hide them.
        headers = sorted(scope["headers"], key=lambda kv: kv[0] not in SENSITIVE)
        said = " ".join(f"{k.decode()}: {v.decode()}" for k, v in headers)
        said += f" query: {scope['query_string'].decode()} url: {scope['path']}"
        fault = scope["path"].strip("/").split("/")[0].removesuffix("-userinfo")
        if fault == "e401":
            challenge = f'Bearer realm="{said}", error="invalid_token"'.encode()
            await faultservers.respond(
                send,
                401,
                f"invalid token: {said}".encode(),
                "text/plain",
                [(b"www-authenticate", challenge)],
            )
        elif fault == "e403":
            await faultservers.respond(send, 403, json.dumps({"error": said}).encode())
        elif fault == "e500":
            page = f"<html><body><h1>oops</h1><pre>{said}</pre></body></html>".encode()
            await faultservers.respond(send, 500, page, "text/html")
        elif fault == "rpc-error":
            error = {"code": -32001, "message": f"denied {said}", "data": {"echo": said}}
            reply = {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
            await faultservers.respond(send, 200, json.dumps(reply).encode())
        elif fault == "malformed":
            if not await faultservers.SyncFaults.handshake(message, send):
                await faultservers.respond(send, 200, f"{{not json {said}".encode())
        elif fault == "listing":
            # Answers correctly, but echoes what it got (and terminal controls) in its
            # serverInfo and its tool list: what a sync stores and the CLI prints.
            if message.get("method") == "initialize":
                info = {**faultservers.INIT_RESULT, "serverInfo": {"name": f"echo {said}"}}
                await faultservers.respond(send, 200, faultservers.result(message["id"], info))
            elif not await faultservers.SyncFaults.handshake(message, send):
                tool = {
                    "name": f"t\x1b[2J\x9b31m\u202e{said[:60]}",
                    "description": f"sent {said}",
                    "inputSchema": {"type": "object", "properties": {said[:40]: {}}},
                }
                reply = faultservers.result(message["id"], {"tools": [tool]})
                await faultservers.respond(send, 200, reply)
        elif fault == "slow":
            await asyncio.sleep(3)
            await faultservers.respond(send, 500, said.encode(), "text/plain")
        else:
            await faultservers.respond(send, 404, said.encode(), "text/plain")


# "-userinfo": the URL carries user:password, which httpx sends as Basic auth instead.
FAULTS = [
    *["e401", "e403", "e500", "e500-userinfo", "rpc-error", "malformed", "tls"],
    pytest.param("slow", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def echo() -> Iterator[str]:
    with serve(Echo()) as base:
        yield base


def sync_url(base: str, fault: str) -> str:
    scheme = "https" if fault == "tls" else "http"
    host = base.removeprefix("http://")
    userinfo = f"sync:{PASSWORD}@" if fault.endswith("-userinfo") else ""
    return f"{scheme}://{userinfo}{host}/{fault}/mcp?token={QUERY}&plain=x"


def program_inputs(base: str, fault: str) -> dict[str, Any]:
    """As ToolSchemaSync registers them: credentials and a credential-bearing URL secret."""
    return {
        "endpoint": base,
        "mcp_path": "/mcp",
        "access": "direct",
        "sync_url": Secret(sync_url(base, fault)),
        "namespace": "apps",
        "service": "memory",
        "port": 8080,
        "timeout": 1 if fault == "slow" else 3,
        "required": False,
        "headers": Secret(HEADERS),
    }


def assert_no_canary(*texts: str) -> None:
    for text in texts:
        for canary in CANARIES:
            assert canary not in text, f"{canary!r} leaked into {text!r}"


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_no_canary_in_outputs_or_failures(echo: str, fault: str) -> None:
    host = EngineHost(ToolSchemaSyncProvider())
    inputs = program_inputs(echo, fault)
    assert host.up(inputs) == "create"
    outs = host.plain_outputs()
    assert outs["phase"] == "Error"
    assert 0 < len(outs["last_error"]) <= 300 and "\n" not in outs["last_error"]
    # Secret outputs are the credentials themselves, encrypted; nothing else may hold them.
    assert {k for k, v in host.outputs.items() if isinstance(v, Secret)} >= {
        "headers",
        "sync_url",
    }
    visible = {k: v for k, v in shown(host.outputs).items() if k != "__provider"}
    with pytest.raises(ProviderFailure) as caught:
        host.up({**inputs, "required": True})
    preview = host.preview({**inputs, "timeout": 2})
    assert_no_canary(
        json.dumps(visible), host.state_text(), caught.value.details, json.dumps(preview.failures)
    )
    assert "schema sync of memory failed: " in caught.value.details


@pytest.mark.parametrize("fault", ["e401", "e500", "e500-userinfo", "rpc-error"])
def test_the_echo_really_carries_the_canaries(echo: str, fault: str) -> None:
    """Control: the client's own message, before redaction, holds a canary."""
    from langop_infra.mcp import ClientOptions, MCPError, fetch_tool_listing_sync

    url = sync_url(echo, fault)
    with pytest.raises(MCPError) as caught:
        fetch_tool_listing_sync(url, ClientOptions(headers=HEADERS, timeout=3))
    raw = str(caught.value)
    assert any(c in raw for c in (HEADER_TOKEN, API_KEY, BASIC[:16])), raw


STACK = """
config:
  langop-infra:namespace: apps
  langop-infra:secrets:
    sync-credentials:
      token: Bearer {token}
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:main
      schemaSync:
        timeout: 2s
        headers:
          - name: Authorization
            valueFrom:
              secretKeyRef: {{name: sync-credentials, key: token}}
"""


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_no_canary_on_the_schemas_command_output(
    echo: str, fault: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "Pulumi.ci.yaml"
    config.write_text(STACK.format(token=HEADER_TOKEN))
    lock = tmp_path / "schemas.lock.yaml"
    argv = ["schemas", "--config", str(config), "--project-dir", str(PROJECT_DIR)]
    argv += ["--lock", str(lock), "--update", "--url", f"memory={sync_url(echo, fault)}"]
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 1
    assert err.startswith("langop-infra schemas: memory: ")
    assert_no_canary(out, err)


def test_redact_removes_sent_values_userinfo_queries_and_tokens() -> None:
    sent = secret_strings(HEADERS)
    text = (
        f"http://sync:{PASSWORD}@h/mcp?token={QUERY}&page=2 said invalid {HEADER_TOKEN}; "
        f'key {API_KEY}; Authorization: Basic {BASIC}; "access_token": "eyJx.eyJy.zzz"; '
        'WWW-Authenticate: Bearer error="invalid_token"'
    )
    line = redact(text, sent)
    assert_no_canary(line)
    assert "eyJ" not in line
    assert 'Bearer error="invalid_token"' in line  # a challenge's parameters stay readable
    assert line.startswith("http://[secret]@h/mcp?token=[secret]&page=[secret]")
    assert len(redact("x" * 1000)) == 300
    assert redact("a\x1b[31mred\x07 \u202etxt") == "a?[31mred? ?txt"
    cut = redact(f"invalid token {HEADER_TOKEN[:12]}... given", sent)
    assert cut == "invalid token [secret]... given"
