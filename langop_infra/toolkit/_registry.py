"""AgentLab's tool registry: tools by name, their metadata, LangChain tools, and one global
registry (:func:`get_registry`, :func:`reset_registry` for tests).

Like AgentLab's, a registry starts with the built-in tools (``get_current_datetime``); pass
``builtins=False`` for a registry of your own tools only.
"""

from __future__ import annotations

import logging
from typing import Any

from langop_infra.toolkit._base import MCPToolBase

__all__ = ["MCPToolRegistry", "get_registry", "reset_registry"]

logger = logging.getLogger(__name__)


class MCPToolRegistry:
    """Tools by name. ``register`` refuses a second tool under a taken name."""

    def __init__(self, *, builtins: bool = True) -> None:
        self._tools: dict[str, MCPToolBase] = {}
        if builtins:
            self._register_builtin_tools()

    def _register_builtin_tools(self) -> None:
        """Register all built-in tools."""
        from langop_infra.toolkit.tools._datetime_tool import DateTimeTool

        self.register(DateTimeTool())
        logger.info("Registered built-in tools: datetime")

    def register(self, tool: MCPToolBase) -> None:
        """Add ``tool``; ``ValueError`` when its name is taken."""
        if not isinstance(tool, MCPToolBase):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise TypeError(f"register() takes an MCPToolBase, got {type(tool).__name__}")
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is registered already")
        self._tools[tool.name] = tool

    def unregister(self, name: str) -> None:
        """Remove the tool ``name``; ``KeyError`` when there is none."""
        if name not in self._tools:
            raise KeyError(f"Tool '{name}' not found")
        del self._tools[name]

    def list_tools(self) -> list[str]:
        """Every tool's name, in registration order."""
        return list(self._tools)

    def has_tool(self, name: str) -> bool:
        return name in self._tools

    def get_tool(self, name: str) -> MCPToolBase | None:
        """The tool ``name``, or None."""
        return self._tools.get(name)

    def get_tool_info(self, name: str) -> dict[str, Any] | None:
        """The tool's metadata (:meth:`MCPToolBase.get_metadata`), or None."""
        tool = self._tools.get(name)
        return None if tool is None else tool.get_metadata()

    def get_all_metadata(self) -> list[dict[str, Any]]:
        """Every tool's metadata (``GET /mpc/tools``)."""
        return [tool.get_metadata() for tool in self._tools.values()]

    def get_langchain_tools(self, names: list[str] | None = None) -> list[Any]:
        """LangChain ``StructuredTool``s for every tool, or for ``names`` (an unknown name is
        a ``KeyError``). Needs ``pip install 'langop-infra[langchain]'``."""
        from langop_infra.toolkit._langchain import to_langchain_tool

        chosen = list(self._tools) if names is None else names
        unknown = [name for name in chosen if name not in self._tools]
        if unknown:
            raise KeyError(
                f"no tools named {', '.join(unknown)}; the tools are: "
                f"{', '.join(self._tools) or 'none'}"
            )
        return [to_langchain_tool(self._tools[name]) for name in chosen]


_registry: MCPToolRegistry | None = None


def get_registry() -> MCPToolRegistry:
    """The global registry (always the same instance until :func:`reset_registry`)."""
    global _registry
    if _registry is None:
        _registry = MCPToolRegistry()
    return _registry


def reset_registry() -> None:
    """Drop the global registry; the next :func:`get_registry` builds a fresh one."""
    global _registry
    _registry = None
