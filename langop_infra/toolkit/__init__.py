"""AgentLab's tool kit for tool authors: pydantic-typed tools (:class:`MCPToolBase`), a
registry, LangChain tools, and :func:`serve`, which serves a registry as a LanguageTool (MCP on
the official SDK, ``/health``, AgentLab's ``/mpc/tools`` REST endpoints). Also the records of
an agent's turn (:class:`ToolCall`, :class:`ToolResult`, :class:`AgentStep`), which the
built-in agent runtime yields. Imports nothing of ours but pydantic models; ``serve`` needs
``langop-infra[toolkit]``, ``get_langchain_tools`` needs ``langop-infra[langchain]``."""

from __future__ import annotations

from langop_infra.toolkit._base import MCPToolBase, MCPToolInput, MCPToolOutput
from langop_infra.toolkit._models import AgentStep, ToolCall, ToolResult
from langop_infra.toolkit._registry import MCPToolRegistry, get_registry, reset_registry

__all__ = [
    "AgentStep",
    "MCPToolBase",
    "MCPToolInput",
    "MCPToolOutput",
    "MCPToolRegistry",
    "ToolCall",
    "ToolResult",
    "get_registry",
    "reset_registry",
    "serve",
]


def serve(
    registry: MCPToolRegistry | None = None, *, host: str | None = None, port: int | None = None
) -> None:
    """Serve ``registry`` (default: the global one) as an MCP tool server; see
    :mod:`langop_infra.toolkit._server`."""
    from langop_infra.toolkit._server import serve as run

    run(registry, host=host, port=port)
