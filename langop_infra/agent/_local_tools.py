"""AgentLab's ``chat_with_tools``: one ReAct turn over a message list, with tool kit tools run
in this process (or any registry of the agent's), returning AgentLab's triple
``(response, agent_steps, tool_results)``.

```python
model = ChatModel(endpoint, "gpt-4o-mini", api_key, 60, RuntimeMetrics())
response, steps, results = await chat_with_tools(
    [{"role": "user", "content": "What time is it in Tokyo?"}], get_registry(), 5, model=model
)
```
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.agent._loop import AgentLoop, Tools
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._naming import llm_name
from langop_infra.mcp._session import ToolCallResult
from langop_infra.toolkit import AgentStep, MCPToolBase, MCPToolRegistry, ToolResult

__all__ = ["LocalTools", "chat_with_tools"]


class LocalTools:
    """Tool kit tools as the loop's tools: offered under LLM-safe names, run in process with
    ``execute_with_validation``; every failure is an error result."""

    def __init__(self, tools: MCPToolRegistry | Sequence[MCPToolBase | Any]) -> None:
        listed = (
            [t for n in tools.list_tools() if (t := tools.get_tool(n)) is not None]
            if isinstance(tools, MCPToolRegistry)
            else list(tools)
        )
        # LangChain tools (registry.get_langchain_tools(), as AgentLab passes them) are run
        # through the tool kit tool they wrap when there is one, else through ainvoke.
        self.tools: dict[str, Any] = {tool.name: tool for tool in listed}

    def llm_definitions(
        self, format: object = "openai"
    ) -> tuple[list[dict[str, Any]], dict[str, str]]:
        definitions: list[dict[str, object]] = []
        names: dict[str, str] = {}
        for name, tool in self.tools.items():
            api_name = llm_name(name)
            names[api_name] = name
            definitions.append(
                {
                    "type": "function",
                    "function": {
                        "name": api_name,
                        "description": tool.description,
                        "parameters": _parameters(tool),
                    },
                }
            )
        return definitions, names

    async def call_tool(
        self, name: str, arguments: Mapping[str, object] | None = None
    ) -> ToolCallResult:
        tool = self.tools.get(name)
        if tool is None:
            return _text(f"Tool {name} not found", error=True)
        try:
            if isinstance(tool, MCPToolBase):
                result = await tool.execute_with_validation(**dict(arguments or {}))
            else:  # a LangChain tool
                output = await tool.ainvoke(dict(arguments or {}))
                result: dict[str, Any] = (
                    cast("dict[str, Any]", output)
                    if isinstance(output, dict)
                    else {"output": output}
                )
        except Exception as exc:  # AgentLab: errors are results the LLM can read
            return _text(f"{name}: {exc}", error=True)
        text = json.dumps(result, default=str)
        return ToolCallResult(
            content=[{"type": "text", "text": text}],
            structured_content=_json.read(text),
            is_error=result.get("success") is False,
        )


def _parameters(tool: Any) -> dict[str, Any]:
    """A tool's JSON Schema: a tool kit tool's input model, a LangChain tool's arguments."""
    if isinstance(tool, MCPToolBase):
        return tool.input_model.model_json_schema()
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return convert_to_openai_tool(tool)["function"]["parameters"]


def _text(text: str, error: bool) -> ToolCallResult:
    return ToolCallResult(content=[{"type": "text", "text": text}], is_error=error)


async def chat_with_tools(
    messages: Sequence[Mapping[str, Any] | Any],
    tools: MCPToolRegistry | Sequence[MCPToolBase | Any] | Tools,
    max_iterations: int = 5,
    *,
    model: ChatModel,
    system_prompt: str = "",
) -> tuple[str, list[AgentStep], list[ToolResult]]:
    """Answer the last user message of ``messages`` (dicts or objects with ``role`` and
    ``content``, e.g. AgentLab's ``ChatMessage``), the earlier ones as history; the answer
    (an error answer when the model fails), the steps and the tool results."""
    given = tools if hasattr(tools, "call_tool") else LocalTools(tools)  # pyright: ignore
    loop = AgentLoop(
        model,
        given,  # pyright: ignore[reportArgumentType]
        RuntimeMetrics(),
        system_prompt=system_prompt,
        max_iterations=max_iterations,
    )
    plain = [_plain(m) for m in messages]
    if not plain or plain[-1]["role"] != "user":
        raise ValueError("chat_with_tools needs messages that end with a user message")
    loop.preload("chat", plain[:-1])
    outcome = await loop.run(plain[-1]["content"], "chat")
    return outcome.answer, outcome.steps, outcome.tool_results


def _plain(message: Mapping[str, Any] | Any) -> dict[str, Any]:
    if isinstance(message, Mapping):
        return {"role": str(message["role"]), "content": str(message.get("content") or "")}  # pyright: ignore
    return {"role": str(message.role), "content": str(message.content or "")}
