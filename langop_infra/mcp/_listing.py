"""One-shot tool listing: connect, initialize, list every tool, close, within a deadline."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._session import DEFAULT_OPTIONS, Session
from langop_infra.mcp._timeouts import timeout_after

__all__ = ["ToolListing", "fetch_tool_listing", "fetch_tool_listing_sync"]


@dataclass(frozen=True)
class ToolListing:
    """A server's tools as it described them, and who described them."""

    tools: list[dict[str, Any]]
    server_info: dict[str, Any]
    protocol_version: str
    transport: str


async def fetch_tool_listing(
    target: str | Sequence[str], options: ClientOptions = DEFAULT_OPTIONS
) -> ToolListing:
    """List every tool of the server at ``target`` (URL or stdio command).

    Connecting, negotiating, listing every page and closing all run within
    ``options.deadline``; when it runs out, only a bounded cleanup follows. The server's
    GET stream is not opened: a one-shot listing has no use for it (a server's requests
    during ``tools/list`` arrive on that request's own stream and are answered there).
    """
    session = Session(target, replace(options, listen=False))
    try:
        async with timeout_after(options.deadline):
            await session.initialize()
            tools = await session.list_tools()
            return ToolListing(
                tools=tools,
                server_info=session.server_info,
                protocol_version=session.protocol_version,
                transport=session.transport_name,
            )
    except TimeoutError:
        raise session.deadline_error("listing tools") from None
    finally:
        # Outside the deadline, so that running out of time never skips stopping a stdio
        # server; closing is bounded on its own (terminate, then kill).
        await session.aclose()


def fetch_tool_listing_sync(
    target: str | Sequence[str], options: ClientOptions = DEFAULT_OPTIONS
) -> ToolListing:
    """:func:`fetch_tool_listing` from synchronous code, in a fresh event loop.

    From a thread whose event loop is running (``asyncio.run`` would refuse), the loop
    runs in a worker thread instead.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(fetch_tool_listing(target, options))
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mcp-listing") as pool:
        return pool.submit(lambda: asyncio.run(fetch_tool_listing(target, options))).result()
