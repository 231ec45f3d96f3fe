"""AgentLab's LLM interface: :class:`LLM` (``chat``, ``chat_with_tools``) and
:class:`LangChainLLM`, which runs AgentLab's ReAct loop on a LangChain chat model: the model is
offered the tools, each tool call is run and its result handed back, until an answer or
``max_iterations`` model calls. Tools are LangChain tools (``registry.get_langchain_tools()``,
as AgentLab writes them), tool kit tools, or a registry; a tool's failure is a result the
model reads, never an exception. Needs ``langop-infra[langchain]``."""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, cast

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool

from langop_infra._errors import LangopError
from langop_infra.toolkit._base import MCPToolBase
from langop_infra.toolkit._langchain import to_langchain_tool
from langop_infra.toolkit._models import AgentStep, ChatMessage, ToolResult
from langop_infra.toolkit._openai_chat import OpenAICompatibleChat
from langop_infra.toolkit._registry import MCPToolRegistry

__all__ = ["LLM", "LangChainLLM", "Messages", "Tools", "chat_with_tools"]

Messages = Sequence[ChatMessage | Mapping[str, Any]]
Tools = MCPToolRegistry | Sequence[BaseTool | MCPToolBase]
Turn = tuple[str, list[AgentStep], list[ToolResult]]


class LLM(ABC):
    """A chat model as AgentLab's chat system uses it."""

    @abstractmethod
    async def chat(self, messages: Messages) -> str:
        """The model's answer to ``messages`` (the last one is the question)."""

    @abstractmethod
    async def chat_with_tools(
        self, messages: Messages, tools: Tools, max_iterations: int = 5
    ) -> Turn:
        """``(response, agent_steps, tool_results)`` of one ReAct turn with ``tools``."""


class LangChainLLM(LLM):
    """:class:`LLM` on a LangChain chat model: ``chat_model`` (e.g. ``ChatOpenAI``), or an
    OpenAI-compatible endpoint: ``endpoint``, ``model`` and ``api_key``, each by default from
    the agent's env (``MODEL_ENDPOINT``, ``LLM_MODEL``, ``MODEL_API_KEY``)."""

    def __init__(
        self,
        chat_model: BaseChatModel | None = None,
        *,
        endpoint: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.chat_model = chat_model or _from_env(endpoint, model, api_key, timeout)

    async def chat(self, messages: Messages) -> str:
        reply = await self.chat_model.ainvoke(langchain_messages(messages))
        return _text(reply)

    async def chat_with_tools(
        self, messages: Messages, tools: Tools, max_iterations: int = 5
    ) -> Turn:
        offered = langchain_tools(tools)
        by_name = {t.name: t for t in offered}
        bound = self.chat_model.bind_tools(offered) if offered else self.chat_model
        history = langchain_messages(messages)
        steps: list[AgentStep] = []
        results: list[ToolResult] = []
        for _ in range(max_iterations):
            reply = await bound.ainvoke(history)
            history.append(reply)
            calls = reply.tool_calls
            if not calls:
                return _text(reply), steps, results
            for call in calls:
                result = await run_tool(by_name, call["name"], call["args"], str(call["id"]))
                results.append(result)
                steps.append(
                    AgentStep(len(steps) + 1, result.tool_name, call["args"], result.result)
                )
                content = result.error or json.dumps(result.result, default=str)
                history.append(ToolMessage(content=content, tool_call_id=str(call["id"])))
        return (
            f"I could not finish: no final answer after {max_iterations} model calls",
            steps,
            results,
        )


async def chat_with_tools(
    messages: Messages, tools: Tools, max_iterations: int = 5, *, llm: LLM | None = None
) -> Turn:
    """AgentLab's ``chat_with_tools``: one ReAct turn of ``llm`` (default: a
    :class:`LangChainLLM` from the agent's env) with ``tools``."""
    return await (llm or LangChainLLM()).chat_with_tools(messages, tools, max_iterations)


async def run_tool(
    tools: Mapping[str, BaseTool], name: str, args: dict[str, Any], call_id: str
) -> ToolResult:
    """One tool call as a :class:`ToolResult`; an unknown tool, bad arguments, an exception
    or ``success: false`` are failed results."""
    now = datetime.now(timezone.utc)
    tool = tools.get(name)
    if tool is None:
        problem = f"no tool named {name!r}; the tools are: {', '.join(sorted(tools)) or 'none'}"
        return ToolResult(name, False, {"error": problem}, problem, call_id=call_id, timestamp=now)
    try:
        output = await tool.ainvoke(args)
    except Exception as exc:  # AgentLab: errors are results the LLM can read
        problem = f"{name}: {type(exc).__name__}: {exc}"
        return ToolResult(name, False, {"error": problem}, problem, call_id=call_id, timestamp=now)
    data: dict[str, Any] = (
        dict(cast("Mapping[str, Any]", output))
        if isinstance(output, Mapping)
        else {"output": output}
    )
    if data.get("success") is False:
        problem = str(data.get("error") or f"tool {name} failed")
        return ToolResult(name, False, data, problem, call_id=call_id, timestamp=now)
    return ToolResult(name, True, data, call_id=call_id, timestamp=now)


def langchain_tools(tools: Tools) -> list[BaseTool]:
    """``tools`` as LangChain tools: a registry's every tool, tool kit tools converted,
    LangChain tools as given."""
    if isinstance(tools, MCPToolRegistry):
        return list(tools.get_langchain_tools())
    return [t if isinstance(t, BaseTool) else to_langchain_tool(t) for t in tools]


def langchain_messages(messages: Messages) -> list[BaseMessage]:
    """AgentLab's ``ChatMessage`` records (or ``{role, content}`` dicts) as LangChain's."""
    kinds = {"user": HumanMessage, "assistant": AIMessage, "system": SystemMessage}
    out: list[BaseMessage] = []
    for message in messages:
        role, content = (
            (str(message["role"]), str(message.get("content") or ""))
            if isinstance(message, Mapping)
            else (message.role, message.content)
        )
        if role not in kinds:
            raise ValueError(f"a message's role is one of user, assistant, system; got {role!r}")
        out.append(kinds[role](content=content))
    return out


def _text(reply: BaseMessage) -> str:
    return reply.content if isinstance(reply.content, str) else str(reply.text)


def _from_env(
    endpoint: str | None, model: str | None, api_key: str | None, timeout: float
) -> OpenAICompatibleChat:
    endpoint = endpoint or os.environ.get("MODEL_ENDPOINT")
    model = model or os.environ.get("LLM_MODEL")
    if not endpoint or not model:
        raise LangopError(
            "LangChainLLM needs a chat model, or an OpenAI-compatible endpoint and model: "
            "pass chat_model=, or endpoint= and model=, or set MODEL_ENDPOINT and LLM_MODEL"
        )
    key = api_key or os.environ.get("MODEL_API_KEY") or None
    return OpenAICompatibleChat(endpoint=endpoint, model=model, api_key=key, timeout=timeout)
