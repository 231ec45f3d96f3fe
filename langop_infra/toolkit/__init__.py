"""AgentLab's tool kit for tool authors: pydantic-typed tools (:class:`MCPToolBase`), a
registry, LangChain tools, and :func:`serve`, which serves a registry as a LanguageTool (MCP on
the official SDK, ``/health``, AgentLab's ``/mpc/tools`` REST endpoints, and ``/llm/chat`` when
given an LLM). Also the records of a chat and an agent's turn (:class:`ChatMessage`,
:class:`ToolCall`, :class:`ToolResult`, :class:`AgentStep`), which the built-in agent runtime
yields, and AgentLab's chat: :class:`LLM`, :class:`LangChainLLM`, :func:`chat_with_tools`.
Imports nothing of ours but pydantic models; ``serve`` needs ``langop-infra[toolkit]``;
``get_langchain_tools`` and the chat need ``langop-infra[langchain]`` (imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langop_infra.toolkit._base import MCPToolBase, MCPToolInput, MCPToolOutput
from langop_infra.toolkit._models import AgentStep, ChatMessage, ToolCall, ToolResult
from langop_infra.toolkit._registry import MCPToolRegistry, get_registry, reset_registry

if TYPE_CHECKING:
    from langop_infra.toolkit._llm import LLM, LangChainLLM, chat_with_tools
    from langop_infra.toolkit._openai_chat import OpenAICompatibleChat

__all__ = [
    "LLM",
    "AgentStep",
    "ChatMessage",
    "LangChainLLM",
    "MCPToolBase",
    "MCPToolInput",
    "MCPToolOutput",
    "MCPToolRegistry",
    "OpenAICompatibleChat",
    "ToolCall",
    "ToolResult",
    "chat_with_tools",
    "get_registry",
    "reset_registry",
    "serve",
]


_CHAT = {
    "LLM": "_llm",
    "LangChainLLM": "_llm",
    "chat_with_tools": "_llm",
    "OpenAICompatibleChat": "_openai_chat",
}


def __getattr__(name: str) -> Any:
    # The chat needs langchain-core: imported when first asked for, not with the tool kit.
    if name in _CHAT:
        import importlib

        return getattr(importlib.import_module(f"{__name__}.{_CHAT[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def serve(
    registry: MCPToolRegistry | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    llm: LLM | None = None,
) -> None:
    """Serve ``registry`` (default: the global one) as an MCP tool server, with AgentLab's
    ``/llm/chat`` when given ``llm``; see :mod:`langop_infra.toolkit._server`."""
    from langop_infra.toolkit._server import serve as run

    run(registry, host=host, port=port, llm=llm)
