"""The agent's memory through its memory tool (language-operator's ``remember`` and ``recall``).

Tool calls and their results are stored as AgentLab stores them: a message with
``metadata.is_tool_call = true`` (tags ``is_tool_call`` and ``conversation:<id>``); what
``recall`` finds for the user's first message of a conversation goes into that turn's
system message. A memory that fails never fails the turn: the problem is logged.
"""

from __future__ import annotations

import json
import logging
from typing import Protocol

from langop_infra.mcp._session import ToolCallResult
from langop_infra.toolkit._models import ToolCall, ToolResult

__all__ = ["Memory", "ToolCaller"]

logger = logging.getLogger(__name__)
RECALL_LIMIT = 5


class ToolCaller(Protocol):
    async def call_tool(
        self, name: str, arguments: dict[str, object] | None = None
    ) -> ToolCallResult: ...


class Memory:
    """``remember`` and ``recall`` of one memory tool, by their registry names."""

    def __init__(self, tools: ToolCaller, remember: str, recall: str) -> None:
        self._tools, self.remember_tool, self.recall_tool = tools, remember, recall

    async def store(self, conversation: str, call: ToolCall, result: ToolResult) -> None:
        """Store a tool call and its result (two messages, AgentLab's storage format)."""
        messages = [
            {
                "role": "assistant",
                "content": "",
                "metadata": {
                    "is_tool_call": True,
                    "tool_name": call.tool_name,
                    "tool_args": call.tool_args,
                    "call_id": call.call_id,
                },
            },
            {
                "role": "system",
                "content": f"Tool result: {json.dumps(result.result, default=str)}",
                "metadata": {
                    "is_tool_call": True,
                    "tool_result": result.result,
                    "tool_success": result.success,
                    "call_id": result.call_id,
                },
            },
        ]
        for message in messages:
            await self._call(
                self.remember_tool,
                {
                    "content": json.dumps(message, default=str),
                    "tags": ["is_tool_call", f"conversation:{conversation}"],
                },
            )

    async def recall(self, query: str) -> list[str]:
        """What memory holds about ``query`` (each memory's content), or [] on failure."""
        result = await self._call(self.recall_tool, {"query": query[:1000], "limit": RECALL_LIMIT})
        if result is None:
            return []
        found: object = (result.structured_content or {}).get("memories")
        if isinstance(found, list):
            return [str(m.get("content", "")) for m in found if isinstance(m, dict)]  # pyright: ignore
        return [str(c.get("text", "")) for c in result.content if c.get("type") == "text"]

    async def _call(self, tool: str, arguments: dict[str, object]) -> ToolCallResult | None:
        result = await self._tools.call_tool(tool, arguments)
        if result.is_error:
            text = " ".join(str(c.get("text", "")) for c in result.content)
            logger.warning("memory tool %s failed: %s", tool, text[:300])
            return None
        return result
