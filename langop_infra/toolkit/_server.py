"""Serve a tool kit registry as a LanguageTool: MCP (streamable HTTP, stateless, JSON responses,
on the official MCP SDK) at ``POST /mcp``, answering language-operator's discovery request without
``Accept`` (:mod:`langop_infra.toolkit._accept`), ``GET /health``, and AgentLab's REST endpoints
``GET /mpc/tools``, ``/mpc/tools/names`` and ``/mpc/tools/{name}`` (404 for an unknown name).

A tool's answer with ``success: false`` is an MCP error result (``isError``) carrying the
tool's dict as ``structuredContent``; bad arguments and an exception in ``execute`` are error
results too, so the LLM can read them; a tool that is not registered is an error result naming
the registered ones. Needs ``pip install 'langop-infra[toolkit]'``.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import langop_infra._json as _json
from langop_infra.toolkit._accept import JsonWhenUnasked
from langop_infra.toolkit._base import MCPToolBase
from langop_infra.toolkit._registry import MCPToolRegistry, get_registry

if TYPE_CHECKING:
    from langop_infra.toolkit._llm import LLM

__all__ = ["build_app", "call_result", "serve"]


def _listed(tool: MCPToolBase) -> types.Tool:
    output = tool.output_model
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_model.model_json_schema(),
        output_schema=None if output is None else output.model_json_schema(),
    )


async def call_result(
    registry: MCPToolRegistry, name: str, arguments: dict[str, object] | None
) -> types.CallToolResult:
    """Run one tool as an MCP ``tools/call`` would; never raises."""
    tool = registry.get_tool(name)
    if tool is None:
        known = ", ".join(registry.list_tools()) or "none"
        return _error(f"Tool '{name}' not found; the tools are: {known}")
    try:
        result = await tool.execute_with_validation(**(arguments or {}))
    except ValueError as exc:
        return _error(f"{name}: {exc}")
    except Exception as exc:  # AgentLab's "critical failure": still a result for the LLM
        return _error(f"{name} failed: {type(exc).__name__}: {exc}")
    failed = result.get("success") is False
    text = json.dumps(result, default=str, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=_json.read(text),
        is_error=failed,
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def build_app(
    registry: MCPToolRegistry | None = None,
    name: str = "langop-toolkit",
    *,
    llm: LLM | None = None,
) -> Starlette:
    """The ASGI app serving ``registry`` (default: the global one); with ``llm``, also
    AgentLab's ``POST /llm/chat`` (:mod:`langop_infra.toolkit._chat_api`)."""
    tools = registry if registry is not None else get_registry()

    async def list_tools(_ctx: object, _params: object) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_listed(tool) for tool in _present(tools)])

    async def call_tool(_ctx: object, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await call_result(tools, params.name, params.arguments)

    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def all_tools(_request: Request) -> JSONResponse:
        return JSONResponse(tools.get_all_metadata())

    async def names(_request: Request) -> JSONResponse:
        listed = tools.list_tools()
        return JSONResponse({"tools": listed, "count": len(listed)})

    async def one(request: Request) -> JSONResponse:
        tool_name = str(request.path_params["tool_name"])
        info = tools.get_tool_info(tool_name)
        if info is None:
            return JSONResponse({"detail": f"Tool '{tool_name}' not found"}, status_code=404)
        return JSONResponse(info)

    server: Server[object] = Server(
        name, version="1", on_list_tools=list_tools, on_call_tool=call_tool
    )
    app = server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        custom_starlette_routes=[
            Route("/health", health, methods=["GET"]),
            Route("/mpc/tools", all_tools, methods=["GET"]),
            Route("/mpc/tools/names", names, methods=["GET"]),
            Route("/mpc/tools/{tool_name}", one, methods=["GET"]),
            *([] if llm is None else [_chat_route(llm, tools)]),
        ],
    )
    app.add_middleware(JsonWhenUnasked)
    return app


def _chat_route(llm: LLM, registry: MCPToolRegistry) -> Route:
    # Imported here: /llm/chat needs langchain-core, serving tools does not.
    from langop_infra.toolkit._chat_api import chat_route

    return chat_route(llm, registry)


def _present(registry: MCPToolRegistry) -> list[MCPToolBase]:
    return [t for n in registry.list_tools() if (t := registry.get_tool(n)) is not None]


def serve(
    registry: MCPToolRegistry | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    llm: LLM | None = None,
) -> None:
    """Serve ``registry`` (and ``/llm/chat`` with ``llm``) until stopped: ``HOST`` (default
    0.0.0.0) and ``PORT`` (default 8080) from the environment unless given. This is a
    LanguageTool image's entry point."""
    import uvicorn

    uvicorn.run(
        build_app(registry, llm=llm),
        host=host or os.environ.get("HOST", "0.0.0.0"),
        port=port or int(os.environ.get("PORT", "8080")),
    )
