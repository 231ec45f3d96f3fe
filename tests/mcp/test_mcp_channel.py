"""The server-to-client channel against the official SDK server (``servers/channel.py``).

In the 2025 era a stateful server sends its own requests and notifications on the GET
stream the client opens; the client answers ``ping``, refuses what it cannot serve
(elicitation) at once, and hands notifications on. In 2026-07-28 notifications come on a
``subscriptions/listen`` stream. The agent registry relists a server whose tools changed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from langop_infra.agent.runtime import ServerEntry, connect_tool_registry
from langop_infra.mcp import ClientOptions, Session

pytestmark = pytest.mark.anyio

HANDSHAKE = ClientOptions(timeout=5, deadline=10, protocol="2025-11-25")


@pytest.fixture
def channel_url(serve_app: Any, server_module: Any) -> Iterator[str]:
    with serve_app(server_module("channel").build_app()) as base:
        yield base + "/mcp"


async def _until(condition: Any, what: str) -> None:
    for _ in range(300):  # bounded: 3 s
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"gave up waiting for {what}")


async def _report(session: Session, key: str) -> dict[str, str]:
    for _ in range(100):
        report = json.loads((await session.call_tool("report")).content[0]["text"])
        if key in report:
            return report
        await asyncio.sleep(0.03)
    raise AssertionError(f"the server never recorded {key}")


async def test_answers_ping_and_refuses_elicitation_on_the_get_stream(channel_url: str) -> None:
    async with Session(channel_url, HANDSHAKE) as session:
        await _until(lambda: session.listening, "the GET stream")
        await session.call_tool("later")
        report = await _report(session, "elicit")
    assert report["ping"] == "answered"
    # Refused at once, with a reason, rather than left waiting for the 3 s timeout.
    assert report["elicit"] == (
        "MCPError: Method not found: this client does not support elicitation/create"
    )


@pytest.mark.slow
async def test_without_the_get_stream_the_server_waits(channel_url: str) -> None:
    """What the GET stream is for: with it closed, the server's ping goes unanswered."""
    options = ClientOptions(timeout=5, deadline=10, protocol="2025-11-25", listen=False)
    async with Session(channel_url, options) as session:
        await session.call_tool("later")
        report = await _report(session, "ping")
    assert report["ping"].startswith("TimeoutError")


@pytest.mark.parametrize("protocol", ["2025-11-25", "auto"])
async def test_list_changed_reaches_the_session(channel_url: str, protocol: str) -> None:
    seen: list[dict[str, Any]] = []
    options = ClientOptions(timeout=5, deadline=10, protocol=protocol)
    async with Session(channel_url, options, on_notification=seen.append) as session:
        await _until(lambda: session.listening, "the server's stream")
        await session.call_tool("grow", {"name": "fresh"})
        await _until(
            lambda: any(m["method"] == "notifications/tools/list_changed" for m in seen),
            "tools/list_changed",
        )
        assert "fresh" in {tool["name"] for tool in await session.list_tools()}


@pytest.mark.parametrize("protocol", ["2025-11-25", "auto"])
async def test_the_agent_registry_relists_a_server_whose_tools_changed(
    channel_url: str, protocol: str
) -> None:
    options = ClientOptions(timeout=5, deadline=10, protocol=protocol)
    registry = await connect_tool_registry([ServerEntry("chan", channel_url)], options)
    async with registry:
        assert "chan__added_later" not in registry.tools
        await _until(lambda: registry.sessions["chan"].listening, "the server's stream")
        grown = await registry.call_tool("chan__grow", {"name": "added_later"})
        assert grown.is_error is False
        await _until(lambda: "chan__added_later" in registry.tools, "the relisting")
        assert (await registry.call_tool("chan__added_later")).content[0]["text"] == "new"
