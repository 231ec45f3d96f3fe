"""An official-SDK server that talks to the client outside any request's own stream.

``later`` schedules, after it returns, a ping and an elicitation on the session (which the
2025 era sends on the GET stream) and records what became of them; ``report`` returns
that record. ``grow`` adds a tool and announces it: ``notifications/tools/list_changed``
on the GET stream (2025 era) and on ``subscriptions/listen`` streams (2026-07-28).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcp.server.mcpserver import Context, MCPServer


def build_server() -> MCPServer:
    server = MCPServer("channel", version="1.0.0", log_level="WARNING")
    outcome: dict[str, str] = {}
    background: set[asyncio.Task[None]] = set()

    @server.tool()
    async def later(ctx: Context) -> str:
        """Pings and elicits after returning, outside this request's stream."""
        session = ctx.session
        outcome.clear()

        async def run() -> None:
            await asyncio.sleep(0.05)
            for name, call in (
                ("ping", session.send_ping),
                ("elicit", lambda: session.elicit_form("name?", {"type": "object"})),
            ):
                try:
                    await asyncio.wait_for(call(), 3)
                    outcome[name] = "answered"
                except Exception as exc:  # what the client answered, as the tool sees it
                    outcome[name] = f"{type(exc).__name__}: {exc}"

        task = asyncio.get_running_loop().create_task(run())
        background.add(task)
        task.add_done_callback(background.discard)
        return "scheduled"

    @server.tool()
    def report() -> str:
        """What became of ``later``'s requests so far."""
        return json.dumps(outcome, sort_keys=True)

    @server.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Adds a tool called ``name`` and tells listening clients."""

        def added() -> str:
            return "new"

        server.add_tool(added, name=name, description="Added at run time.")
        await ctx.notify_tools_changed()  # subscriptions/listen streams (2026-07-28)
        await ctx.session.send_tool_list_changed()  # the GET stream (2025 era)
        return "grown"

    return server


def build_app(**options: Any) -> Any:
    return build_server().streamable_http_app(**options)
