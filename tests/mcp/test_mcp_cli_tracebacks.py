"""After a correct one-line error, the CLI prints nothing else: no stray traceback.

Before: a server whose SSE answer dribbled comment lines got the right timeout error, then
"Task exception was never retrieved" and a traceback; a stdio server that wrote a line over
the cap and then flooded its stdout got the right error, then "Exception ignored in
BaseSubprocessTransport.__del__ ... Event loop is closed". Both servers are STAND-INs: no
real server misbehaves like this on purpose.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import pytest

from tests.faultservers import SyncFaults, lifespan, parse_message, read_body, respond
from tests.mcp.conftest import SERVERS


async def dribbling_sse(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers tools/list with an event stream that only ever sends comments."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["method"] != "POST":
        await respond(send, 405, b"")
        return
    message = parse_message(await read_body(receive))
    if message.get("method") != "tools/list":
        if not await SyncFaults.handshake(message, send):
            await respond(send, 404, b"")
        return
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": b"id: 1\ndata: \n\n", "more_body": True})
    for _ in range(20):
        await send({"type": "http.response.body", "body": b": still here\n", "more_body": True})
        await asyncio.sleep(0.2)
    await send({"type": "http.response.body", "body": b""})


def _cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "langop_infra", "tools", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_slow_sse_ends_in_one_line(serve_app: Any) -> None:
    with serve_app(dribbling_sse) as base:
        done = _cli(f"{base}/mcp", "--timeout", "1")
    assert done.returncode == 1
    assert done.stderr.startswith("langop-infra tools: error: no answer to tools/list from ")
    assert done.stderr.count("\n") == 1, done.stderr


@pytest.mark.slow
def test_a_too_long_stdio_line_ends_in_one_line() -> None:
    server = SERVERS / "flooding_stdio_server.py"
    done = _cli("--transport", "stdio", "--", sys.executable, str(server))
    assert done.returncode == 1
    assert "wrote a line over 8388608 bytes" in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
