"""The test template for a tool: copy it with ``server.py`` and keep its three layers.

1. the logic alone (``current_datetime``): fast, no server;
2. the tool through a real MCP client over HTTP on loopback: arguments, ``structuredContent``
   against the output model, an error *result* for bad input;
3. the LanguageTool contract (``langop-infra tools check``).

Run: ``python -m pytest examples/datetime_tool/test_server.py``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("datetime_tool_server", HERE / "server.py")
assert spec is not None and spec.loader is not None
server = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = server
spec.loader.exec_module(server)

MOMENT = datetime(2026, 1, 31, 8, 30, tzinfo=timezone.utc)


# 1. The logic alone ---------------------------------------------------------------------------
def test_formats_and_time_zones() -> None:
    paris = server.DateTimeInput(timezone="Europe/Paris")
    assert server.current_datetime(paris, MOMENT).model_dump() == {
        "datetime": "2026-01-31T09:30:00+01:00",
        "timezone": "Europe/Paris",
        "utc_offset": "+01:00",
    }
    unix = server.DateTimeInput(format="unix")
    assert server.current_datetime(unix, MOMENT).datetime == "1769848200"


def test_a_bad_time_zone_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="unknown time zone 'Mars/Base'"):
        server.current_datetime(server.DateTimeInput(timezone="Mars/Base"), MOMENT)


# 2. Through a real MCP client ------------------------------------------------------------------
@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    import threading
    import time

    import uvicorn

    config = uvicorn.Config(server.build_app(), host="127.0.0.1", port=0, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.01)
    port = running.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(10)


def call(url: str, arguments: dict[str, Any]) -> Any:
    from mcp.client import Client

    async def go() -> Any:
        async with Client(f"{url}/mcp") as client:
            return await client.call_tool("get_current_datetime", arguments)

    return asyncio.run(go())


def test_the_tool_answers_with_structured_content(url: str) -> None:
    result = call(url, {"timezone": "Asia/Tokyo", "format": "iso"})
    assert result.is_error is False
    output = server.DateTimeOutput.model_validate(result.structured_content)
    assert output.timezone == "Asia/Tokyo" and output.utc_offset == "+09:00"


def test_bad_input_comes_back_as_an_error_result(url: str) -> None:
    result = call(url, {"timezone": "Mars/Base"})
    assert result.is_error is True
    assert "unknown time zone 'Mars/Base'" in result.content[0].text
    rejected = call(url, {"format": "roman"})  # the input model refuses it before the tool runs
    assert rejected.is_error is True


# 3. The LanguageTool contract ------------------------------------------------------------------
def test_the_contract(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from langop_infra.cli.main import main

    assert main(["tools", "check", url]) == 0, capsys.readouterr().out
