"""``langop-infra tools check URL``: the example memory tool passes language-operator's contract; a
server that breaks it gets each failure named."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from langop_infra.cli.main import main
from tests.faultservers import INIT_RESULT
from tests.support.loopback import serve

SERVER_FILE = Path(__file__).resolve().parents[1] / "examples" / "memory_tool" / "server.py"


@pytest.fixture(scope="module")
def memory_tool_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    spec = importlib.util.spec_from_file_location("memory_tool_for_check", SERVER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    with serve(module.build_app(tmp_path_factory.mktemp("check") / "memory.db")) as url:
        yield url


def broken_tool() -> Starlette:
    """STAND-IN for a tool that breaks the contract in four ways at once (no real server
    does on purpose): plain-text health, a tool without inputSchema, HTTP 500 on a call."""

    async def health(request: Request) -> Response:
        return PlainTextResponse("OK")

    async def mcp(request: Request) -> Response:
        message = json.loads(await request.body())
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            return Response(status_code=202)
        if method == "initialize":
            return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": INIT_RESULT})
        if method == "tools/list":
            tools = [{"name": "lookup", "description": "looks things up"}]
            return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": {"tools": tools}})
        if method == "tools/call":
            return PlainTextResponse("Internal Server Error", status_code=500)
        error = {"code": -32601, "message": "Method not found"}
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error})

    return Starlette(routes=[Route("/health", health), Route("/mcp", mcp, methods=["POST"])])


def check(capsys: pytest.CaptureFixture[str], url: str) -> tuple[int, list[dict[str, Any]]]:
    code = main(["tools", "check", url, "-o", "json", "--timeout", "5"])
    return code, json.loads(capsys.readouterr().out)


def test_the_example_tool_passes(memory_tool_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, checks = check(capsys, memory_tool_url)
    assert code == 0, checks
    assert [(c["check"], c["passed"]) for c in checks] == [
        ("GET /health", True),
        ("language-operator discovery (tools/list, no initialize)", True),
        ("tools/list (MCP session)", True),
        ("MCP error format (unknown tool)", True),
    ]
    assert checks[1]["detail"].startswith("2 tools")


def test_a_broken_tool_gets_each_failure_named(capsys: pytest.CaptureFixture[str]) -> None:
    with serve(broken_tool()) as base:
        code = main(["tools", "check", base, "--timeout", "5"])
        table = capsys.readouterr().out
        _, checks = check(capsys, base)
    assert code == 1
    failed = {c["check"]: c["detail"] for c in checks if not c["passed"]}
    assert failed["GET /health"] == "200 but not JSON: 'OK'"
    assert failed["language-operator discovery (tools/list, no initialize)"] == (
        "tool 'lookup' has no inputSchema object"
    )
    assert "HTTP 500" in failed["MCP error format (unknown tool)"]
    assert "want a JSON-RPC error, not HTTP 5xx" in failed["MCP error format (unknown tool)"]
    assert set(failed) == {
        "GET /health",
        "language-operator discovery (tools/list, no initialize)",
        "MCP error format (unknown tool)",
    }  # our client lists a tool without inputSchema: the session check passes
    assert "FAIL  200 but not JSON: 'OK'" in table
    assert table.rstrip().endswith("checks passed")


def test_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tools", "check", "ftp://x"]) == 2
    assert "is not an http(s) URL" in capsys.readouterr().err


def event_stream_tool(seen: list[list[tuple[bytes, bytes]]]) -> Starlette:
    """STAND-IN for a server that answers every POST with an event stream whatever the request
    asks (the shape httpx's default ``Accept: */*`` got from an SSE-mode SDK server); it keeps
    each request's raw headers in ``seen``."""

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def mcp(request: Request) -> Response:
        seen.append(list(request.scope["headers"]))
        message = json.loads(await request.body())
        tools = [{"name": "lookup", "inputSchema": {"type": "object"}}]
        answer = {"jsonrpc": "2.0", "id": message.get("id"), "result": {"tools": tools}}
        text = f"event: message\ndata: {json.dumps(answer)}\n\n"
        return Response(text, media_type="text/event-stream")

    return Starlette(routes=[Route("/health", health), Route("/mcp", mcp, methods=["POST"])])


def test_discovery_is_gos_request_and_an_event_stream_fails_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[list[tuple[bytes, bytes]]] = []
    with serve(event_stream_tool(seen)) as base:
        code, checks = check(capsys, base)
    discovery = checks[1]
    assert (code, discovery["passed"]) == (1, False)
    assert discovery["detail"] == (
        "answered text/event-stream; language-operator reads the body with json.Unmarshal and "
        "needs one application/json document (serve with json_response=True)"
    )
    host = base.removeprefix("http://").encode()
    assert seen[0] == [  # net/http's Post, header for header: no Accept
        (b"host", host),
        (b"user-agent", b"Go-http-client/1.1"),
        (b"content-length", b"58"),
        (b"content-type", b"application/json"),
        (b"accept-encoding", b"gzip"),
    ]


def sse_mode_sdk_server() -> Starlette:
    """The official SDK in its default response mode (event streams), stateless."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.transport_security import TransportSecuritySettings

    server = MCPServer(name="sse-only")

    @server.tool(description="echo")
    def echo(text: str) -> str:
        return text

    return server.streamable_http_app(
        stateless_http=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )


def test_an_sdk_server_in_event_stream_mode_fails_discovery_with_the_reason(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serve(sse_mode_sdk_server()) as base:
        _code, checks = check(capsys, base)
    detail = checks[1]["detail"]
    assert checks[1]["passed"] is False
    assert detail.startswith("HTTP 406: ")
    assert "Not Acceptable: Client must accept both" in detail
    assert detail.endswith("without Accept (serve stateless, JSON responses)")
    assert checks[2]["passed"] is True  # a full MCP session (our client) is served
