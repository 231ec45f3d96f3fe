"""The built-in agent's ReAct loop: the model decides, the registry's tools act, until the
model answers or ``maxIterations`` model calls have been made.

Each turn yields the answer and AgentLab's records (:class:`ToolCall`, :class:`ToolResult`,
:class:`AgentStep`). Nothing in a turn raises: an unknown tool, arguments that are not a JSON
object, a tool error or a tool that outlives its timeout is an error *result* the model reads;
a model that is down or answers garbage ends the turn with an error answer. Each conversation
keeps a bounded history (the last ``history_messages`` messages, cut at a user message).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol, cast

from opentelemetry.trace import Span, StatusCode, Tracer

import langop_infra._json as _json
from langop_infra.agent import _turn_context as turn_context
from langop_infra.agent._memory import Memory, recalled_message
from langop_infra.agent._metrics import UNKNOWN_TOOL, RuntimeMetrics
from langop_infra.agent._model_client import ModelError, ModelReply, RequestedCall
from langop_infra.agent._output_check import failed
from langop_infra.agent._settings import DEFAULT_HISTORY_BYTES
from langop_infra.agent._tracing import default_tracer
from langop_infra.mcp._session import ToolCallResult
from langop_infra.toolkit._models import AgentStep, ToolCall, ToolResult

__all__ = ["AgentLoop", "Approver", "Model", "Observer", "Tools", "TurnOutcome"]

MAX_CONVERSATIONS = 1000
TOTAL_HISTORY_BYTES = 32 * 1024 * 1024  # every conversation's together: the pod's memory


Observer = Callable[[str, dict[str, Any]], Awaitable[None]]
# Asks a person whether a tool call may run (its registry name and arguments): True approves.
Approver = Callable[[str, dict[str, Any]], Awaitable[bool]]


class Model(Protocol):
    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        deadline: float | None = None,
    ) -> ModelReply: ...


class Tools(Protocol):
    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]: ...

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult: ...


@dataclass
class TurnOutcome:
    """One turn: the answer, the records of its tool use, and the error that ended it."""

    answer: str
    conversation: str
    tool_calls: list[ToolCall] = field(default_factory=list[ToolCall])
    tool_results: list[ToolResult] = field(default_factory=list[ToolResult])
    steps: list[AgentStep] = field(default_factory=list[AgentStep])
    error: str | None = None
    iterations: int = 0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "conversation": self.conversation,
            "error": self.error,
            "iterations": self.iterations,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "tool_results": [r.to_dict() for r in self.tool_results],
            "steps": [s.to_dict() for s in self.steps],
        }


class AgentLoop:
    """Turns of conversations, each a bounded ReAct loop."""

    def __init__(
        self,
        model: Model,
        tools: Tools,
        metrics: RuntimeMetrics,
        *,
        system_prompt: str = "",
        max_iterations: int = 10,
        history_messages: int = 40,
        history_bytes: int = DEFAULT_HISTORY_BYTES,
        tool_timeout: float = 30.0,
        memory: Memory | None = None,
        tool_timeouts: Mapping[str, float] | None = None,
        turn_timeout: float = 600.0,
        tool_concurrency: int = 4,
        tracer: Tracer | None = None,
        agent_name: str = "agent",
        require_approval: Collection[str] = (),
    ) -> None:
        self.model, self.tools, self.metrics, self.memory = model, tools, metrics, memory
        self.tracer, self.agent_name = tracer or default_tracer(), agent_name
        self.require_approval = frozenset(require_approval)  # registry names
        self.system_prompt = system_prompt
        self.max_iterations = max_iterations
        self.history_messages = history_messages
        self.history_bytes = history_bytes
        self._sizes: dict[str, int] = {}  # bytes of each kept history
        self.tool_timeout = tool_timeout
        self.tool_timeouts = dict(tool_timeouts or {})  # a tool's own bound (an A2A peer's)
        self.turn_timeout = turn_timeout
        self.tool_concurrency = tool_concurrency
        self._histories: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._locks: dict[str, asyncio.Lock] = {}

    def preload(self, conversation: str, messages: list[dict[str, object]]) -> None:
        """Start ``conversation`` with earlier ``messages`` (user and assistant turns)."""
        self._remember(conversation, [m for m in messages if m.get("role") != "system"])

    @property
    def kept_bytes(self) -> int:
        """The bytes (as JSON) of every conversation's kept history together."""
        return sum(self._sizes.values())

    def history(self, conversation: str) -> list[dict[str, Any]]:
        return list(self._histories.get(conversation, []))

    async def run(
        self,
        text: str,
        conversation: str | None = None,
        observe: Observer | None = None,
        approve: Approver | None = None,
    ) -> TurnOutcome:
        """Answer ``text`` in ``conversation`` (a new one when None); ``observe`` is told of
        each tool call (its registry name and arguments) before it runs; ``approve`` is asked
        before each call of a tool in ``require_approval`` (without it, such a call is an
        error result: no one can approve it)."""
        conversation = conversation or uuid.uuid4().hex
        lock = self._locks.setdefault(conversation, asyncio.Lock())
        started = time.perf_counter()
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.agent_name,
            "gen_ai.conversation.id": conversation,
        }
        name = f"invoke_agent {self.agent_name}"
        async with lock:
            with (
                turn_context.turn(conversation),
                self.tracer.start_as_current_span(name, attributes=attributes) as span,
            ):
                outcome = await self._turn(text, conversation, _Hooks(observe, approve))
                _status(span, outcome.error)
        self.metrics.turns.labels("ok" if outcome.ok else "error").inc()
        self.metrics.turn_seconds.observe(time.perf_counter() - started)
        return outcome

    async def _recalled(self, text: str, conversation: str) -> list[dict[str, Any]]:
        """What memory recalls for a conversation's first turn, as a user-role message of
        data (never in the system prompt: recalled text is not the operator's)."""
        if self.memory is None:
            return []
        recalled = await self.memory.recall(text, conversation)
        return [recalled_message(recalled)] if recalled else []

    async def _turn(self, text: str, conversation: str, hooks: _Hooks) -> TurnOutcome:
        history = self.history(conversation)
        prompt = self.system_prompt or "You are a helpful assistant. Use the tools you have."
        messages: list[dict[str, Any]] = [{"role": "system", "content": prompt}, *history]
        if not history:
            messages += await self._recalled(text, conversation)
        messages.append({"role": "user", "content": text})
        outcome = TurnOutcome("", conversation)
        definitions, names = self.tools.llm_definitions("openai")
        deadline = asyncio.get_running_loop().time() + self.turn_timeout
        for iteration in range(1, self.max_iterations + 1):
            outcome.iterations = iteration
            try:
                reply = await self._chat(messages, definitions, deadline)
            except ModelError as exc:
                outcome.error = str(exc)
                outcome.answer = f"I could not finish: {exc}"
                break
            reply = _with_ids(reply)
            messages.append(_assistant(reply))
            if not reply.calls:
                outcome.answer = reply.content
                break
            calls = reply.calls
            messages += await self._act_all(calls, names, reply.content, outcome, hooks)
        else:
            outcome.error = f"no final answer after maxIterations={self.max_iterations} model calls"
            outcome.answer = f"I could not finish: {outcome.error}"
        self._remember(conversation, messages[1:])
        return outcome

    async def _chat(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], deadline: float
    ) -> ModelReply:
        """One model call (its retries included), in a ``chat`` span."""
        model = str(getattr(self.model, "model", ""))
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": model}
        with self.tracer.start_as_current_span(f"chat {model}", attributes=attributes) as span:
            try:
                return await self.model.complete(messages, tools, deadline)
            except ModelError as exc:
                _status(span, str(exc))
                raise

    async def _act_all(
        self,
        calls: tuple[RequestedCall, ...],
        names: Mapping[str, str],
        reasoning: str,
        outcome: TurnOutcome,
        hooks: _Hooks,
    ) -> list[dict[str, Any]]:
        """Run the calls of one reply at once (at most ``tool_concurrency`` at a time: the
        model asked for them together, so none waits on another's result); record them and
        answer them in the order they were asked."""
        gate = asyncio.Semaphore(self.tool_concurrency)

        async def gated(call: RequestedCall) -> tuple[ToolCall, ToolResult]:
            async with gate:
                if hooks.observe is not None:
                    arguments = _arguments(call.arguments)[0]
                    await hooks.observe(names.get(call.name, call.name), arguments)
                return await self._act(call, names, hooks)

        if len(calls) == 1:  # the usual reply: no task to run it in
            done = [await gated(calls[0])]
        else:
            done = await asyncio.gather(*(gated(call) for call in calls))
        answers: list[dict[str, Any]] = []
        for record, result in done:
            outcome.tool_calls.append(record)
            outcome.tool_results.append(result)
            step = len(outcome.steps) + 1
            outcome.steps.append(
                AgentStep(
                    step, record.tool_name, record.tool_args, result.result, reasoning or None
                )
            )
            if self.memory is not None:
                await self.memory.store(outcome.conversation, record, result)
            content = result.error if result.error else json.dumps(result.result, default=str)
            answers.append({"role": "tool", "tool_call_id": record.call_id, "content": content})
        return answers

    async def _act(
        self, call: RequestedCall, names: Mapping[str, str], hooks: _Hooks
    ) -> tuple[ToolCall, ToolResult]:
        name = names.get(call.name, call.name)
        arguments, problem = _arguments(call.arguments)
        record = ToolCall(name, arguments, call.call_id, datetime.now(timezone.utc))
        if call.name not in names:
            known = ", ".join(sorted(names)) or "none"
            problem = f"no tool named {call.name!r}; the tools are: {known}"
        if problem is None and name in self.require_approval:
            problem = await hooks.approval(name, arguments)
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call.call_id,
        }
        with self.tracer.start_as_current_span(
            f"execute_tool {name}", attributes=attributes
        ) as span:
            label = name if call.name in names else UNKNOWN_TOOL
            result = await self._result(name, arguments, problem, call.call_id, label)
            _status(span, result.error)
        return record, result

    async def _result(
        self, name: str, arguments: dict[str, Any], problem: str | None, call_id: str, label: str
    ) -> ToolResult:
        """The tool's result, or the error result of ``problem``; counted under ``label``
        (the registry name, or :data:`UNKNOWN_TOOL` for a name the model made up)."""
        self.metrics.tool_invocations.labels(label).inc()
        started = time.perf_counter()
        if problem is None:
            bound = self.tool_timeouts.get(name, self.tool_timeout)
            try:
                called = await asyncio.wait_for(self.tools.call_tool(name, arguments), bound)
            except asyncio.TimeoutError:
                problem = f"tool {name} did not answer within {bound:g} s"
            else:
                text = "\n".join(str(c.get("text", "")) for c in called.content if "text" in c)
                structured: Any = called.structured_content
                data: dict[str, Any] = (
                    cast("dict[str, Any]", structured)
                    if isinstance(structured, dict)
                    else {"text": text}
                )
                if failed(called):
                    problem = str(data.get("error") or text or f"tool {name} failed")
                else:
                    self.metrics.tool_seconds.labels(label).observe(time.perf_counter() - started)
                    return ToolResult(
                        name,
                        True,
                        dict(data),
                        call_id=call_id,
                        timestamp=datetime.now(timezone.utc),
                    )
        self.metrics.tool_errors.labels(label).inc()
        self.metrics.tool_seconds.labels(label).observe(time.perf_counter() - started)
        return ToolResult(
            name,
            False,
            {"error": problem},
            problem,
            call_id=call_id,
            timestamp=datetime.now(timezone.utc),
        )

    def _remember(self, conversation: str, messages: list[dict[str, object]]) -> None:
        """Keep the last ``history_messages`` messages within ``history_bytes``, starting
        at a user message (a tool result without the call that asked for it is refused by
        chat APIs); the least recent conversations go when all of them pass
        :data:`TOTAL_HISTORY_BYTES` or :data:`MAX_CONVERSATIONS`."""
        kept, size = _last_within(messages[-self.history_messages :], self.history_bytes)
        self._histories[conversation] = kept
        self._sizes[conversation] = size
        self._histories.move_to_end(conversation)
        total = self.kept_bytes
        while len(self._histories) > MAX_CONVERSATIONS or total > TOTAL_HISTORY_BYTES:
            old, _ = self._histories.popitem(last=False)
            total -= self._sizes.pop(old, 0)
            self._locks.pop(old, None)


@dataclass
class _Hooks:
    """What a turn's caller wants to hear of, or be asked: each tool call, and approvals
    (one question at a time, though calls run at once)."""

    observe: Observer | None = None
    approve: Approver | None = None
    asking: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def approval(self, name: str, arguments: dict[str, Any]) -> str | None:
        """None when the call of ``name`` was approved; else why it may not run."""
        if self.approve is None:
            return (
                f"tool {name} runs only once a person approves the call, and no one can be "
                "asked here"
            )
        async with self.asking:
            approved = await self.approve(name, arguments)
        if approved:
            return None
        return (
            f"the person asked rejected this call of {name}; do not call it again with these "
            "arguments unless they ask"
        )


def _status(span: Span, error: str | None) -> None:
    """Mark ``span`` failed with ``error`` (its ``error.type`` the GenAI conventions' catch-all)."""
    if error:
        span.set_status(StatusCode.ERROR, error[:500])
        span.set_attribute("error.type", "_OTHER")


def _with_ids(reply: ModelReply) -> ModelReply:
    """``reply`` with an id on every tool call (the tool result must name it)."""
    if all(call.call_id for call in reply.calls):
        return reply
    calls = tuple(
        call if call.call_id else replace(call, call_id=f"call_{uuid.uuid4().hex[:12]}")
        for call in reply.calls
    )
    return replace(reply, calls=calls)


def _assistant(reply: ModelReply) -> dict[str, Any]:
    message: dict[str, object] = {"role": "assistant", "content": reply.content or None}
    if reply.calls:
        message["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
            }
            for call in reply.calls
        ]
    return message


def _arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    try:
        value: object = _json.read(raw or "{}")
    except ValueError:
        return {}, f"the arguments are not JSON: {raw[:200]!r}; send a JSON object"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, got {type(value).__name__}"
    return dict(value), None  # pyright: ignore[reportUnknownArgumentType]


def _last_within(messages: list[dict[str, Any]], limit: int) -> tuple[list[dict[str, Any]], int]:
    """The longest tail of ``messages`` that starts at a user message and is at most
    ``limit`` bytes as JSON, and its size."""
    sizes = [len(json.dumps(m, default=str).encode()) for m in messages]
    size = sum(sizes)
    start = 0
    while start < len(messages) and (size > limit or messages[start].get("role") != "user"):
        size -= sizes[start]
        start += 1
    return messages[start:], size
