"""Mimics the seed's simple MCP tool server (shared/seeds/000, the memory tool).

Plain JSON-RPC on ``POST /mcp``: no initialize, no session, no SSE; every unknown method
(``initialize`` included) gets JSON-RPC "method not found". ``GET /health`` answers ok.
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

TOOLS: list[dict[str, Any]] = [
    {
        "name": "remember",
        "description": "Store information in long-term memory",
        "inputSchema": {
            "type": "object",
            "properties": {
                "content": {"type": "string", "description": "Information to remember"},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["content"],
        },
    },
    {
        "name": "recall",
        "description": "Retrieve information from long-term memory",
        "inputSchema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What to search for"}},
            "required": ["query"],
        },
    },
]


def build_app() -> Starlette:
    """A fresh seed-style server with an empty memory."""
    memory: list[str] = []

    async def mcp(request: Request) -> JSONResponse:
        message = await request.json()
        method, request_id = message.get("method"), message.get("id")
        params = message.get("params") or {}
        if method == "tools/list":
            return _result(request_id, {"tools": TOOLS})
        if method == "tools/call" and params.get("name") == "remember":
            memory.append(params["arguments"]["content"])
            return _result(
                request_id, {"content": [{"type": "text", "text": "Stored successfully."}]}
            )
        if method == "tools/call" and params.get("name") == "recall":
            query = params["arguments"]["query"].lower()
            found = [item for item in memory if query in item.lower()]
            return _result(
                request_id, {"content": [{"type": "text", "text": text} for text in found]}
            )
        if method == "tools/call":
            error = {"code": -32602, "message": f"Unknown tool: {params.get('name')}"}
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error})

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[Route("/mcp", mcp, methods=["POST"]), Route("/health", health, methods=["GET"])]
    )


def _result(request_id: Any, result: dict[str, Any]) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})
