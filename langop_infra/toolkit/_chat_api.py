"""AgentLab's ``POST /llm/chat``: a chat turn of an :class:`LLM`, with the registry's tools when
``use_tools`` (default false, as AgentLab's backward-compatible default) and the session's
history when ``use_memory``. The answer carries ``response``, ``tools_used``, ``tool_calls``,
``tool_results`` and ``agent_steps``. A session's history keeps tool calls and results as
AgentLab stores them (``metadata.is_tool_call``), so a follow-up question sees them; it lives
in this process, bounded (oldest sessions and messages dropped first)."""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.toolkit._llm import LLM
from langop_infra.toolkit._models import AgentStep, ChatMessage, ToolCall, ToolResult
from langop_infra.toolkit._registry import MCPToolRegistry

__all__ = ["ChatRequest", "Sessions", "chat_route"]

MAX_SESSIONS = 1000
MAX_SESSION_MESSAGES = 200


class Message(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str = Field(max_length=200_000)


class ChatRequest(BaseModel):
    """The body of ``POST /llm/chat``, as AgentLab's API takes it."""

    messages: list[Message] = Field(min_length=1, max_length=500)
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    use_tools: bool = False
    use_memory: bool = False
    available_tools: list[str] | None = None
    max_iterations: int = Field(default=5, ge=1, le=50)


class Sessions:
    """Each session's history, newest sessions kept: at most ``MAX_SESSIONS`` sessions of
    ``MAX_SESSION_MESSAGES`` messages."""

    def __init__(self) -> None:
        self._kept: OrderedDict[str, list[ChatMessage]] = OrderedDict()

    def history(self, session_id: str) -> list[ChatMessage]:
        return list(self._kept.get(session_id, []))

    def add(self, session_id: str, messages: list[ChatMessage]) -> None:
        kept = [*self._kept.pop(session_id, []), *messages][-MAX_SESSION_MESSAGES:]
        self._kept[session_id] = kept
        while len(self._kept) > MAX_SESSIONS:
            self._kept.popitem(last=False)


def chat_route(llm: LLM, registry: MCPToolRegistry, sessions: Sessions | None = None) -> Route:
    """``POST /llm/chat`` answered by ``llm`` with ``registry``'s tools."""
    memory = sessions if sessions is not None else Sessions()

    async def chat(request: Request) -> JSONResponse:
        try:
            body = ChatRequest.model_validate(_json.read(await request.body()))
        except (ValueError, ValidationError) as exc:
            return JSONResponse({"detail": str(exc)}, status_code=400)
        unknown = sorted(set(body.available_tools or []) - set(registry.list_tools()))
        if unknown:
            known = ", ".join(registry.list_tools()) or "none"
            detail = f"unknown tools {unknown}; the tools are: {known}"
            return JSONResponse({"detail": detail}, status_code=400)
        try:
            return JSONResponse(await _turn(llm, registry, memory, body))
        except LangopError as exc:  # the model failed: a gateway error, with its reason
            return JSONResponse({"detail": str(exc)}, status_code=502)

    return Route("/llm/chat", chat, methods=["POST"])


async def _turn(
    llm: LLM, registry: MCPToolRegistry, memory: Sessions, body: ChatRequest
) -> dict[str, Any]:
    now = datetime.now(timezone.utc)
    given = [ChatMessage(m.role, m.content, now) for m in body.messages]
    remembered = body.use_memory and body.session_id is not None
    past = memory.history(body.session_id or "") if remembered else []
    messages = [m for m in past if m.content] + given
    steps: list[AgentStep] = []
    results: list[ToolResult] = []
    if body.use_tools:
        tools = registry.get_langchain_tools(body.available_tools)
        answer, steps, results = await llm.chat_with_tools(messages, tools, body.max_iterations)
    else:
        answer = await llm.chat(messages)
    paired = zip(steps, results, strict=True)  # a step per tool result
    calls = [ToolCall(r.tool_name, s.tool_args, r.call_id, r.timestamp) for s, r in paired]
    if remembered and body.session_id is not None:
        records = [m for c, r in zip(calls, results, strict=True) for m in _stored(c, r)]
        memory.add(body.session_id, [*given, *records, ChatMessage("assistant", answer, now)])
    return {
        "response": answer,
        "session_id": body.session_id,
        "tools_used": bool(results),
        "tool_calls": [c.to_dict() for c in calls],
        "tool_results": [r.to_dict() for r in results],
        "agent_steps": [s.to_dict() for s in steps],
    }


def _stored(call: ToolCall, result: ToolResult) -> list[ChatMessage]:
    """A tool call and its result as AgentLab keeps them in a session's history."""
    asked = ChatMessage(
        "assistant",
        "",
        call.timestamp,
        {
            "is_tool_call": True,
            "tool_name": call.tool_name,
            "tool_args": call.tool_args,
            "call_id": call.call_id,
        },
    )
    text = json.dumps(result.result, default=str, ensure_ascii=False)
    answered = ChatMessage(
        "system",
        f"Tool result: {call.tool_name}: {text}",
        result.timestamp,
        {
            "is_tool_call": True,
            "tool_result": result.result,
            "tool_success": result.success,
            "call_id": call.call_id,
        },
    )
    return [asked, answered]
