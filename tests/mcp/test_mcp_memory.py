"""Peak memory stays bounded against a hostile server that pages tools without end.

The hostile server is a fake (no real server misbehaves like this on purpose): every
``tools/list`` page is one tool with a 6.7 MB description and a fresh ``nextCursor``, just
under the 8 MiB per-response cap. Before the total caps, ``tools --json`` grew to 7.9 GB on
it. The CLI runs in a child process; its peak RSS comes from ``getrusage`` of the child.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.faultservers import lifespan, read_body

PAGE_DESCRIPTION = 6_700_000
# The interpreter with httpx loaded is ~40 MiB; a listing capped at 32 MiB of JSON (plus one
# 8 MiB response in flight) must stay well below what the uncapped client reached.
RSS_LIMIT = 400 * 1024 * 1024


def hostile_app() -> Any:
    description = "x" * PAGE_DESCRIPTION
    served = {"pages": 0}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        body = await read_body(receive)
        message = json.loads(body) if body else {}
        if "id" not in message:
            await _respond(send, 202, b"")
            return
        if message["method"] == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        elif message["method"] == "tools/list":
            served["pages"] += 1
            page = served["pages"]
            tool = {"name": f"t{page}", "description": description, "inputSchema": {}}
            result = {"tools": [tool], "nextCursor": str(page)}
        else:
            error = {"code": -32601, "message": "Method not found"}
            await _respond(
                send,
                200,
                json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode(),
            )
            return
        payload = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        await _respond(send, 200, payload.encode())

    app.served = served  # type: ignore[attr-defined]
    return app


async def _respond(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def hostile(serve_app: Any) -> Iterator[tuple[str, Any]]:
    app = hostile_app()
    with serve_app(app) as base:
        yield base + "/mcp", app


@pytest.mark.slow
def test_tools_json_against_endless_huge_pages_stays_bounded(hostile: tuple[str, Any]) -> None:
    url, app = hostile
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so it would include the size
    # of the (large) test process the child was forked from; VmHWM belongs to the new image.
    probe = (
        "import sys\n"
        "from langop_infra.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "print('PEAK', hwm.split()[1], file=sys.stderr)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "tools", url, "-o", "json", "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    error, peak_line = done.stderr.strip().splitlines()[-2:]
    assert "sent more than 33554432 bytes of tools/list pages" in error
    assert "Traceback" not in done.stderr
    peak = int(peak_line.split()[1]) * 1024  # VmHWM is in kB
    print(f"peak RSS {peak / 2**20:.0f} MiB after {app.served['pages']} pages")
    assert peak < RSS_LIMIT
    # Five pages are 33.5 MB, just under 32 MiB (33.55 MB): the sixth crosses the cap.
    assert app.served["pages"] == 6
