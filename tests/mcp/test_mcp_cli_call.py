"""``langop-infra tools call``: one tool call over the same transports, auth and caps, and
``notifications/cancelled`` when a call times out.

Servers: the official SDK's (``servers/sdk_tools.py``) over HTTP and stdio; for the
cancellation, a STAND-IN (a raw ASGI app, since no real server can be told to stall one
call and report what it was sent) that answers the handshake and never answers the call.
"""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from langop_infra.cli.main import main
from langop_infra.mcp import ClientOptions, Session
from langop_infra.mcp._errors import MCPTimeout
from tests.faultservers import SyncFaults, lifespan, parse_message, read_body, respond
from tests.support.startup import HUNG_AFTER


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_call_prints_the_tool_text(stateful_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tools", "call", stateful_url, "echo", "--arguments", '{"text": "hi", "repeat": 3}']
    code, out, err = _cli(argv, capsys)
    assert (code, err) == (0, "")
    assert out == "hi hi hi\n"


def test_call_json_and_a_tool_error(json_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["tools", "call", json_url, "add", "--arguments", '{"a": 2, "b": 40}', "-o", "json"]
    code, out, _ = _cli(argv, capsys)
    assert code == 0
    document = json.loads(out)
    assert document["isError"] is False
    assert document["content"] == [{"type": "text", "text": "42"}]
    assert document["structuredContent"] == {"result": 42}
    argv = ["tools", "call", json_url, "fail", "--arguments", '{"reason": "broken \\u001b[2J"}']
    code, out, err = _cli(argv, capsys)
    assert code == 1
    assert "broken \\u001b[2J" in out and "\x1b" not in out
    assert err == "langop-infra tools: error: tool fail reported an error (isError)\n"


@pytest.mark.slow  # the SDK's stdio server takes seconds to import
def test_call_over_stdio(stdio_command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    guard = ["--timeout", str(HUNG_AFTER)]  # the server's start-up is part of the request
    argv = ["tools", *guard, "--arguments", '{"text": "over stdio"}', "call", "echo", "--"]
    argv += stdio_command
    code, out, err = _cli(argv, capsys)
    assert code == 0, err
    assert out == "over stdio\n"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["call", "http://127.0.0.1:9/mcp"], "give `tools call URL TOOL"),
        (["call", "http://127.0.0.1:9/mcp", "t", "--arguments", "{"], "--arguments is not JSON"),
        (["call", "http://127.0.0.1:9/mcp", "t", "--arguments", "[1]"], "must be a JSON object"),
        (["http://127.0.0.1:9/mcp", "--max-response-bytes", "lots"], "--max-response-bytes"),
    ],
)
def test_call_usage_errors(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _cli(["tools", *argv], capsys)
    assert code == 2
    assert said in err


def test_max_response_bytes_caps_each_response(
    stateful_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tools", "call", stateful_url, "echo", "--arguments", json.dumps({"text": "x" * 4000})]
    code, _, err = _cli([*argv, "--max-response-bytes", "2KiB"], capsys)
    assert code == 1
    assert "sent more than 2048 bytes for tools/call" in err
    assert "Traceback" not in err


class StallingServer:
    """STAND-IN: answers the handshake and tools/list, never a tools/call; records the rest."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        message = parse_message(await read_body(receive))
        self.received.append(message)
        if message.get("method") == "tools/call":
            await asyncio.sleep(5)
            await respond(send, 500, b"")
        elif not await SyncFaults.handshake(message, send):
            await respond(send, 404, b"")


@pytest.fixture
def stalling(serve_app: Any) -> Iterator[tuple[str, StallingServer]]:
    app = StallingServer()
    with serve_app(app) as base:
        yield base + "/mcp", app


@pytest.mark.anyio
async def test_a_timed_out_call_is_cancelled(stalling: tuple[str, StallingServer]) -> None:
    url, app = stalling
    async with Session(url, ClientOptions(timeout=0.5, connect_retries=0)) as session:
        with pytest.raises(MCPTimeout, match="no answer to tools/call"):
            await session.call_tool("slow", {})
    (call,) = [m for m in app.received if m.get("method") == "tools/call"]
    cancelled = [m for m in app.received if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancelled] == [call["id"]]
    assert "timeout" in cancelled[0]["params"]["reason"]


def test_many_operations_in_one_session_from_stdin(
    stateful_url: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [
        '{"list": true}',
        '{"name": "add", "arguments": {"a": 1, "b": 2}}',
        '{"name": "nope"}',
        "[1]",
    ]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, err = _cli(["tools", "call", stateful_url, "-"], capsys)
    assert code == 1, err
    listed, added, unknown, bad = (json.loads(line) for line in out.splitlines())
    assert "add" in [tool["name"] for tool in listed["tools"]]
    assert added["content"] == [{"type": "text", "text": "3"}]
    assert unknown["isError"] is True
    assert unknown["content"] == [{"text": "Unknown tool: nope", "type": "text"}]
    assert bad == {"error": "a stdin line must be a JSON object"}
