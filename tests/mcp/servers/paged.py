"""An official-SDK (low-level ``Server``) app whose tools/list pages: 7 tools, 3 per page.

``MCPServer`` returns every tool on one page, so this handler slices the list and sets
``nextCursor`` itself, as a server with many tools would.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from starlette.applications import Starlette

PAGE_SIZE = 3
TOOLS = [
    types.Tool(
        name=f"tool_{index:02d}",
        description=f"Paged tool number {index}.",
        input_schema={
            "type": "object",
            "properties": {"x": {"type": "integer"}},
            "required": ["x"],
        },
    )
    for index in range(7)
]


async def _list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    return types.ListToolsResult(
        tools=TOOLS[start:end], next_cursor=f"{end}" if end < len(TOOLS) else None
    )


def build_app() -> Starlette:
    """The paged server as a streamable HTTP (stateful, SSE) app at /mcp."""
    return Server("paged", version="1.0.0", on_list_tools=_list_tools).streamable_http_app()
