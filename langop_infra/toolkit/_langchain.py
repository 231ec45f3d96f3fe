"""A toolkit tool as a LangChain ``StructuredTool`` (optional: ``langop-infra[langchain]``)."""

from __future__ import annotations

from typing import Any

from langop_infra.toolkit._base import MCPToolBase

__all__ = ["to_langchain_tool"]


def to_langchain_tool(tool: MCPToolBase) -> Any:
    """``tool`` as a ``StructuredTool`` whose coroutine runs ``execute_with_validation``."""
    try:
        from langchain_core.tools import StructuredTool
    except ImportError:
        raise ImportError(
            "get_langchain_tools() needs langchain-core: pip install 'langop-infra[langchain]'"
        ) from None

    async def run(**kwargs: object) -> dict[str, Any]:
        return await tool.execute_with_validation(**kwargs)

    return StructuredTool.from_function(
        coroutine=run,
        name=tool.name,
        description=tool.description,
        args_schema=tool.input_model,
    )
