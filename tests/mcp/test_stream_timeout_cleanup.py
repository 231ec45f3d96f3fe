"""After a streamable-HTTP call times out, the stream reader left behind must not surface as
"Task exception was never retrieved" when the stream later breaks."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest

from langop_infra.mcp import ClientOptions
from langop_infra.mcp._errors import MCPTimeout
from langop_infra.mcp._session import Session
from tests.faultservers import TOOLS, SyncFaults, respond, result, start_truncated_sse
from tests.support.loopback import serve

pytestmark = pytest.mark.anyio


class LateDrop(SyncFaults):
    """STAND-IN: tools/call opens an SSE answer, then drops the connection after 0.5 s (a
    server that crashed mid-call behind a proxy); no official-SDK server does this on cue."""

    async def route_late_drop(self, scope: Any, message: dict, receive: Any, send: Any) -> None:
        if await self.handshake(message, send):
            return
        if message.get("method") == "tools/list":
            await respond(send, 200, result(message["id"], {"tools": TOOLS}))
            return
        await start_truncated_sse(send)
        await asyncio.sleep(0.5)  # then return with the body incomplete: the connection drops


async def test_a_timed_out_call_leaves_no_unretrieved_task_exception() -> None:
    reported: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(context))
    try:
        with serve(LateDrop()) as base:
            options = ClientOptions(timeout=0.2, deadline=10, connect_retries=0)
            async with Session(f"{base}/late-drop/mcp", options) as session:
                with pytest.raises(MCPTimeout, match="no answer to tools/call"):
                    await session.call_tool(TOOLS[0]["name"], {})
                await asyncio.sleep(0.6)  # the stream breaks meanwhile
                gc.collect()
            gc.collect()
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert [c.get("message") for c in reported] == []
