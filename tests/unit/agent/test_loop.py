"""``agent/_loop.py``: the ReAct loop's turns, tool calls, approvals, history and records.

The tools are a real MCP SDK server called in this process (:class:`SdkTools`); the model is
:class:`Scripted`, a stand-in (no model runs in unit tests), answering from its script."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timezone
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from langop_infra.agent import _turn_context as turn_context
from langop_infra.agent._loop import (
    MAX_CONVERSATIONS,
    TOTAL_HISTORY_BYTES,
    AgentLoop,
    TurnOutcome,
)
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ModelError, ModelReply, RequestedCall
from langop_infra.mcp._session import ToolCallResult

pytestmark = pytest.mark.anyio
PROMPT = "You are a helpful assistant. Use the tools you have."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def calc_server() -> MCPServer:
    server = MCPServer(name="calc")

    @server.tool()
    async def add(a: int, b: int) -> dict[str, int]:
        return {"sum": a + b}

    @server.tool(structured_output=False)
    async def echo(text: str) -> list[str]:
        return [text, "again"]

    @server.tool()
    async def broken() -> str:
        raise ToolError("broken on purpose")

    @server.tool()
    async def refuse() -> dict[str, object]:
        return {"success": False, "error": "no quota"}

    @server.tool()
    async def refuse_quietly() -> dict[str, object]:
        return {"success": False}

    @server.tool()
    async def wait() -> str:
        await anyio.Event().wait()
        return "never"

    return server


class SdkTools:
    """The loop's tools: an MCP SDK server in this process, its tools offered to the model
    as ``calc_<tool>`` and named ``calc__<tool>`` in the registry (as the registry does)."""

    def __init__(
        self, tools: tuple[str, ...] = ("add", "echo", "broken", "refuse", "refuse_quietly", "wait")
    ) -> None:
        self.server = calc_server()
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.names = {f"calc_{t}": f"calc__{t}" for t in tools}

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        assert format == "openai"
        definitions = [{"type": "function", "function": {"name": n}} for n in self.names]
        return definitions, dict(self.names)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        self.calls.append((name, dict(arguments or {})))
        try:
            result: Any = await self.server.call_tool(name.split("__", 1)[1], dict(arguments or {}))
        except ToolError as exc:
            return ToolCallResult([{"type": "text", "text": str(exc)}], True)
        content = [c.model_dump(by_alias=True) for c in result.content]
        return ToolCallResult(content, bool(result.is_error), result.structured_content)


class Scripted:
    """Stands in for the model: each call answers with the next reply of the script (or
    raises it, a :class:`ModelError`), and records the messages, tools and deadline given."""

    model = "scripted-model"

    def __init__(self, *replies: ModelReply | ModelError) -> None:
        self.replies = list(replies)
        self.seen: list[tuple[list[dict[str, Any]], list[dict[str, Any]], float | None]] = []

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        deadline: float | None = None,
    ) -> ModelReply:
        self.seen.append((json.loads(json.dumps(messages)), tools, deadline))
        reply = self.replies.pop(0) if self.replies else answer("done")
        if isinstance(reply, ModelError):
            raise reply
        return reply


def answer(text: str) -> ModelReply:
    return ModelReply(text, (), {})


def asks(*calls: tuple[str, str, str], content: str = "") -> ModelReply:
    return ModelReply(content, tuple(RequestedCall(i, n, a) for i, n, a in calls), {})


def spans() -> tuple[InMemorySpanExporter, Any]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return exporter, provider.get_tracer("test")


def sample(metrics: RuntimeMetrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


def loop_of(model: Scripted, **options: Any) -> tuple[AgentLoop, SdkTools, RuntimeMetrics]:
    tools, metrics = SdkTools(), RuntimeMetrics()
    return AgentLoop(model, tools, metrics, **options), tools, metrics


async def test_a_turn_without_tools_answers_and_keeps_the_history() -> None:
    exporter, tracer = spans()
    model = Scripted(answer("Paris."))
    loop, _, metrics = loop_of(model, tracer=tracer, agent_name="geo", turn_timeout=50.0)
    before = anyio.current_time()
    outcome = await loop.run("Capital of France?", "c1")
    assert outcome == TurnOutcome("Paris.", "c1", iterations=1)
    assert outcome.ok and outcome.to_dict() == {
        "answer": "Paris.",
        "conversation": "c1",
        "error": None,
        "iterations": 1,
        "tool_calls": [],
        "tool_results": [],
        "steps": [],
    }
    [(messages, tools, deadline)] = model.seen
    assert messages == [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert tools == SdkTools().llm_definitions("openai")[0]
    assert deadline is not None and before + 49 < deadline <= anyio.current_time() + 50
    assert loop.history("c1") == [
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
    ]
    assert sample(metrics, "langop_agent_turns_total", outcome="ok") == 1
    assert sample(metrics, "langop_agent_turn_seconds_count") == 1
    chat, turn = exporter.get_finished_spans()
    assert (turn.name, dict(turn.attributes or {})) == (
        "invoke_agent geo",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "geo",
            "gen_ai.conversation.id": "c1",
        },
    )
    assert (chat.name, dict(chat.attributes or {})) == (
        "chat scripted-model",
        {"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted-model"},
    )
    assert turn.status.status_code == StatusCode.UNSET


async def test_the_system_prompt_and_a_new_conversation() -> None:
    model = Scripted(answer("a"), answer("b"))
    loop, _, _ = loop_of(model, system_prompt="Be brief.")
    first = await loop.run("q")
    second = await loop.run("q")
    assert len(first.conversation) == 32 and first.conversation != second.conversation
    assert model.seen[0][0][0] == {"role": "system", "content": "Be brief."}


async def test_tool_calls_run_and_are_recorded_in_order() -> None:
    exporter, tracer = spans()
    model = Scripted(
        asks(
            ("k1", "calc_add", '{"a": 2, "b": 3}'),
            ("k2", "calc_echo", '{"text": "hi"}'),
            content="Let me compute.",
        ),
        answer("5 and hi"),
    )
    seen: list[tuple[str, dict[str, Any]]] = []

    async def observe(name: str, arguments: dict[str, Any]) -> None:
        seen.append((name, arguments))

    loop, tools, metrics = loop_of(model, tracer=tracer)
    outcome = await loop.run("add and echo", "c", observe=observe)
    assert (outcome.answer, outcome.iterations, outcome.error) == ("5 and hi", 2, None)
    assert seen == [("calc__add", {"a": 2, "b": 3}), ("calc__echo", {"text": "hi"})]
    assert tools.calls == seen
    assert [(c.tool_name, c.tool_args, c.call_id) for c in outcome.tool_calls] == [
        ("calc__add", {"a": 2, "b": 3}, "k1"),
        ("calc__echo", {"text": "hi"}, "k2"),
    ]
    assert all(c.timestamp is not None for c in outcome.tool_calls)
    add, echo = outcome.tool_results
    assert (add.tool_name, add.success, add.result, add.error, add.call_id) == (
        "calc__add",
        True,
        {"sum": 5},
        None,
        "k1",
    )
    assert (echo.success, echo.result) == (True, {"text": "hi\nagain"})
    assert add.timestamp is not None and add.timestamp.tzinfo is timezone.utc
    assert [
        (s.step_number, s.tool_name, s.tool_args, s.result, s.reasoning) for s in outcome.steps
    ] == [
        (1, "calc__add", {"a": 2, "b": 3}, {"sum": 5}, "Let me compute."),
        (2, "calc__echo", {"text": "hi"}, {"text": "hi\nagain"}, "Let me compute."),
    ]
    second = model.seen[1][0]
    assert second[2] == {
        "role": "assistant",
        "content": "Let me compute.",
        "tool_calls": [
            {
                "id": "k1",
                "type": "function",
                "function": {"name": "calc_add", "arguments": '{"a": 2, "b": 3}'},
            },
            {
                "id": "k2",
                "type": "function",
                "function": {"name": "calc_echo", "arguments": '{"text": "hi"}'},
            },
        ],
    }
    assert second[3:] == [
        {"role": "tool", "tool_call_id": "k1", "content": '{"sum": 5}'},
        {"role": "tool", "tool_call_id": "k2", "content": '{"text": "hi\\nagain"}'},
    ]
    assert sample(metrics, "langop_agent_tool_invocations_total", tool="calc__add") == 1
    assert sample(metrics, "langop_agent_tool_errors_total", tool="calc__add") is None
    assert sample(metrics, "langop_agent_tool_call_seconds_count", tool="calc__echo") == 1
    tool_spans = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert [(s.name, dict(s.attributes or {})) for s in tool_spans] == [
        (
            "execute_tool calc__add",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "calc__add",
                "gen_ai.tool.call.id": "k1",
            },
        ),
        (
            "execute_tool calc__echo",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "calc__echo",
                "gen_ai.tool.call.id": "k2",
            },
        ),
    ]
    assert outcome.steps[0].to_dict()["reasoning"] == "Let me compute."


async def test_a_reply_without_text_has_no_reasoning_and_null_content() -> None:
    model = Scripted(asks(("k1", "calc_add", '{"a": 1, "b": 1}')), answer("2"))
    loop, _, _ = loop_of(model)
    outcome = await loop.run("q", "c")
    assert outcome.steps[0].reasoning is None
    assert model.seen[1][0][2]["content"] is None


async def test_calls_without_ids_get_one() -> None:
    model = Scripted(asks(("", "calc_add", '{"a": 1, "b": 1}'), ("k2", "calc_add", "{}")))
    loop, _, _ = loop_of(model)
    outcome = await loop.run("q", "c")
    first, second = (c.call_id for c in outcome.tool_calls)
    assert first.startswith("call_") and len(first) == 17 and second == "k2"
    assert model.seen[1][0][2]["tool_calls"][0]["id"] == first


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (
            ("k", "calc_nope", "{}"),
            "no tool named 'calc_nope'; the tools are: calc_add, calc_broken, calc_echo, "
            "calc_refuse, calc_refuse_quietly, calc_wait",
        ),
        (
            ("k", "calc_add", "{not json"),
            "the arguments are not JSON: '{not json'; send a JSON object",
        ),
        (("k", "calc_add", "[1]"), "the arguments must be a JSON object, got list"),
        (("k", "calc_broken", ""), "Error executing tool broken: broken on purpose"),
        (("k", "calc_refuse", "{}"), "no quota"),
        (("k", "calc_refuse_quietly", "{}"), '{\n  "success": false\n}'),
    ],
)
async def test_a_failed_call_is_an_error_result_the_model_reads(
    call: tuple[str, str, str], error: str
) -> None:
    exporter, tracer = spans()
    model = Scripted(asks(call), answer("sorry"))
    loop, _, metrics = loop_of(model, tracer=tracer)
    outcome = await loop.run("q", "c")
    [result] = outcome.tool_results
    assert (result.success, result.result, result.error) == (False, {"error": error}, error)
    assert (result.tool_name, result.call_id) == (outcome.tool_calls[0].tool_name, "k")
    assert result.timestamp is not None and result.timestamp.tzinfo is timezone.utc
    assert model.seen[1][0][-1] == {"role": "tool", "tool_call_id": "k", "content": error}
    label = "_unknown" if call[1] == "calc_nope" else f"calc__{call[1][5:]}"
    assert sample(metrics, "langop_agent_tool_errors_total", tool=label) == 1
    assert sample(metrics, "langop_agent_tool_invocations_total", tool=label) == 1
    assert sample(metrics, "langop_agent_tool_call_seconds_count", tool=label) == 1
    [span] = [s for s in exporter.get_finished_spans() if s.name.startswith("execute_tool")]
    assert (span.status.status_code, span.status.description) == (StatusCode.ERROR, error)
    assert (span.attributes or {})["error.type"] == "_OTHER"
    assert outcome.ok  # the turn itself went on


async def test_a_long_bad_argument_is_quoted_cut_at_200() -> None:
    raw = "x" * 300
    model = Scripted(asks(("k", "calc_add", raw)))
    loop, _, _ = loop_of(model)
    outcome = await loop.run("q", "c")
    assert outcome.tool_results[0].error == (
        f"the arguments are not JSON: {raw[:200]!r}; send a JSON object"
    )


async def test_a_tool_that_outlives_its_bound_is_an_error_result() -> None:
    model = Scripted(asks(("k", "calc_wait", "{}")), asks(("k2", "calc_wait", "{}")))
    loop, _, _ = loop_of(model, tool_timeout=0.05, tool_timeouts={"calc__other": 9.0})
    outcome = await loop.run("q", "c")
    assert outcome.tool_results[0].error == "tool calc__wait did not answer within 0.05 s"
    own, _, _ = loop_of(
        Scripted(asks(("k", "calc_wait", "{}"))), tool_timeouts={"calc__wait": 0.02}
    )
    outcome = await own.run("q", "c")
    assert outcome.tool_results[0].error == "tool calc__wait did not answer within 0.02 s"


async def test_a_model_error_ends_the_turn_with_an_error_answer() -> None:
    exporter, tracer = spans()
    model = Scripted(ModelError("the model is down"))
    loop, _, metrics = loop_of(model, tracer=tracer)
    outcome = await loop.run("q", "c")
    assert (outcome.answer, outcome.error, outcome.ok) == (
        "I could not finish: the model is down",
        "the model is down",
        False,
    )
    assert sample(metrics, "langop_agent_turns_total", outcome="error") == 1
    chat, turn = exporter.get_finished_spans()
    assert chat.status.status_code == turn.status.status_code == StatusCode.ERROR
    assert (chat.attributes or {})["error.type"] == "_OTHER"
    assert turn.status.description == "the model is down"
    assert loop.history("c") == [{"role": "user", "content": "q"}]


async def test_a_span_keeps_the_first_500_characters_of_an_error() -> None:
    exporter, tracer = spans()
    loop, _, _ = loop_of(Scripted(ModelError("e" * 600)), tracer=tracer)
    await loop.run("q", "c")
    assert exporter.get_finished_spans()[-1].status.description == "e" * 500


async def test_max_iterations_bounds_the_model_calls() -> None:
    model = Scripted(*[asks((f"k{i}", "calc_add", '{"a": 1, "b": 1}')) for i in range(5)])
    loop, _, _ = loop_of(model, max_iterations=2)
    outcome = await loop.run("q", "c")
    assert len(model.seen) == 2
    assert (outcome.iterations, outcome.error, outcome.answer) == (
        2,
        "no final answer after maxIterations=2 model calls",
        "I could not finish: no final answer after maxIterations=2 model calls",
    )


async def test_calls_run_together_up_to_the_concurrency() -> None:
    """Two ``wait`` calls with one slot: the second starts only after the first's bound."""
    calls = [(f"k{i}", "calc_add", '{"a": 1, "b": 2}') for i in range(3)]
    model = Scripted(asks(*calls))
    loop, tools, _ = loop_of(model, tool_concurrency=1)
    outcome = await loop.run("q", "c")
    assert [r.result for r in outcome.tool_results] == [{"sum": 3}] * 3
    assert len(tools.calls) == 3


async def test_approval_is_asked_once_at_a_time_and_its_answer_kept() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def approve(name: str, arguments: dict[str, Any]) -> bool:
        asked.append((name, arguments))
        return arguments["a"] == 1

    calls = [("k1", "calc_add", '{"a": 1, "b": 1}'), ("k2", "calc_add", '{"a": 2, "b": 2}')]
    model = Scripted(asks(*calls), answer("ok"))
    loop, tools, _ = loop_of(model, require_approval=["calc__add"])
    outcome = await loop.run("q", "c", approve=approve)
    assert asked == [("calc__add", {"a": 1, "b": 1}), ("calc__add", {"a": 2, "b": 2})]
    assert tools.calls == [("calc__add", {"a": 1, "b": 1})]
    assert [r.error for r in outcome.tool_results] == [
        None,
        "the person asked rejected this call of calc__add; do not call it again with these "
        "arguments unless they ask",
    ]
    assert loop.require_approval == frozenset({"calc__add"})


async def test_without_an_approver_a_call_needing_one_does_not_run() -> None:
    model = Scripted(asks(("k", "calc_add", '{"a": 1, "b": 1}')), answer("ok"))
    loop, tools, _ = loop_of(model, require_approval=("calc__add",))
    outcome = await loop.run("q", "c")
    assert tools.calls == []
    assert outcome.tool_results[0].error == (
        "tool calc__add runs only once a person approves the call, and no one can be asked here"
    )
    bad = Scripted(asks(("k", "calc_add", "[]")), answer("ok"))
    loop, tools, _ = loop_of(bad, require_approval=("calc__add",))
    asked: list[str] = []

    async def approve(name: str, arguments: dict[str, Any]) -> bool:
        asked.append(name)
        return True

    outcome = await loop.run("q", "c", approve=approve)
    assert asked == [] and outcome.tool_results[0].error == (
        "the arguments must be a JSON object, got list"
    )


async def test_the_turn_runs_in_its_conversations_context() -> None:
    seen: list[str | None] = []

    class Watching(Scripted):
        async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
            seen.append(turn_context.conversation())
            return await super().complete(messages, tools, deadline)

    loop, _, _ = loop_of(Watching(answer("a")))
    await loop.run("q", "conv-7")
    assert seen == ["conv-7"]


async def test_history_continues_and_is_cut_at_a_user_message() -> None:
    model = Scripted(asks(("k1", "calc_add", '{"a": 1, "b": 1}')), answer("2"), answer("second"))
    loop, _, _ = loop_of(model, history_messages=3)
    await loop.run("first", "c")
    # the last 3 of user, assistant(call), tool, assistant: a tool result cannot start it
    assert loop.history("c") == []
    await loop.run("again", "c")
    assert model.seen[-1][0] == [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "again"},
    ]
    assert loop.history("c") == [
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "second"},
    ]


async def test_history_is_bounded_in_bytes_and_preloaded() -> None:
    loop, _, _ = loop_of(Scripted(answer("ok")), history_bytes=120)
    loop.preload(
        "c",
        [
            {"role": "system", "content": "dropped"},
            {"role": "user", "content": "x" * 100},
            {"role": "assistant", "content": "y"},
            {"role": "user", "content": "short"},
            {"role": "assistant", "content": "z"},
        ],
    )
    kept = loop.history("c")
    assert kept == [{"role": "user", "content": "short"}, {"role": "assistant", "content": "z"}]
    size = sum(len(json.dumps(m).encode()) for m in kept)
    assert loop.kept_bytes == size
    loop.preload("d", [{"role": "user", "content": "q"}])
    assert loop.kept_bytes == size + len(json.dumps({"role": "user", "content": "q"}).encode())


async def test_the_least_recent_conversations_go_past_the_limits() -> None:
    assert (MAX_CONVERSATIONS, TOTAL_HISTORY_BYTES) == (1000, 32 * 1024 * 1024)
    loop, _, _ = loop_of(Scripted())
    for i in range(MAX_CONVERSATIONS + 1):
        loop.preload(f"c{i}", [{"role": "user", "content": "q"}])
    assert loop.history("c0") == [] and loop.history("c1") != []
    loop.preload("c1", [{"role": "user", "content": "again"}])  # now the most recent
    loop.preload("new", [{"role": "user", "content": "q"}])
    assert loop.history("c1") != [] and loop.history("c2") == []
    big, _, _ = loop_of(Scripted(), history_bytes=TOTAL_HISTORY_BYTES)
    half = {"role": "user", "content": "x" * (TOTAL_HISTORY_BYTES // 2 - 100)}
    for name in ("a", "b", "c"):
        big.preload(name, [half])
    assert (big.history("a"), len(big.history("b")), len(big.history("c"))) == ([], 1, 1)
    assert big.kept_bytes <= TOTAL_HISTORY_BYTES
    loop, _, _ = loop_of(Scripted(answer("ok")))
    await loop.run("q", "c0")
    assert "c0" in loop._locks  # pyright: ignore[reportPrivateUsage]
    for i in range(MAX_CONVERSATIONS):
        loop.preload(f"x{i}", [{"role": "user", "content": "q"}])
    assert "c0" not in loop._locks  # pyright: ignore[reportPrivateUsage]


async def test_memory_is_recalled_on_a_conversations_first_turn_only(tmp_path: Any) -> None:
    from langop_infra.agent._memory import Memory
    from tests.unit.agent.test_memory import InProcess, memory_server

    store = InProcess(memory_server(tmp_path / "memory.db"))
    memory = Memory(store, "memory__remember", "memory__recall")
    model = Scripted(asks(("k1", "calc_add", '{"a": 2, "b": 2}')), answer("4"))
    first, _, _ = loop_of(model, memory=memory)
    await first.run("add", "c")
    assert [n for n, _ in store.calls] == ["memory__recall"] + ["memory__remember"] * 2
    assert [a["tags"] for _, a in store.calls[1:]] == [["is_tool_call", "conversation:c"]] * 2
    model = Scripted(answer("again"), answer("later"))
    fresh, _, _ = loop_of(model, memory=memory)
    await fresh.run("sum", "c")
    recalled = model.seen[0][0][1]
    assert recalled["role"] == "user" and recalled["content"].startswith("## Recalled context\n")
    assert '\\"call_id\\": \\"k1\\"' in recalled["content"]
    store.calls.clear()
    await fresh.run("sum again", "c")  # the history holds the context now
    assert store.calls == []
    # the recalled records stay in the history, as the first turn saw them
    assert [m["role"] for m in model.seen[1][0]] == ["system", "user", "user", "assistant", "user"]
    quiet = Scripted(answer("x"))
    nothing, _, _ = loop_of(quiet, memory=memory)
    await nothing.run("sum", "other")  # c's records are not this conversation's
    assert [m["role"] for m in quiet.seen[0][0]] == ["system", "user"]


async def test_a_made_up_tool_keeps_its_name_in_the_records() -> None:
    seen: list[str] = []

    async def observe(name: str, arguments: dict[str, Any]) -> None:
        seen.append(name)

    loop, _, _ = loop_of(Scripted(asks(("k", "calc_nope", "{}")), answer("ok")))
    outcome = await loop.run("q", "c", observe=observe)
    assert seen == ["calc_nope"]
    assert (outcome.tool_calls[0].tool_name, outcome.tool_results[0].tool_name) == (
        "calc_nope",
        "calc_nope",
    )
    assert outcome.tool_calls[0].timestamp is not None
    assert outcome.tool_calls[0].timestamp.tzinfo is timezone.utc


async def test_with_no_tools_the_error_says_so() -> None:
    model = Scripted(asks(("k", "calc_add", "{}")), answer("ok"))
    loop = AgentLoop(model, SdkTools(tools=()), RuntimeMetrics())
    outcome = await loop.run("q", "c")
    assert outcome.tool_results[0].error == "no tool named 'calc_add'; the tools are: none"


def test_the_defaults() -> None:
    loop = AgentLoop(Scripted(), SdkTools(), RuntimeMetrics())
    assert (loop.max_iterations, loop.history_messages, loop.history_bytes) == (10, 40, 256 * 1024)
    assert (loop.tool_timeout, loop.turn_timeout, loop.tool_concurrency) == (30.0, 600.0, 4)
    assert (loop.agent_name, loop.system_prompt, loop.memory, loop.tool_timeouts) == (
        "agent",
        "",
        None,
        {},
    )


async def test_a_model_without_a_name_names_its_chat_span_plainly() -> None:
    class Nameless:
        async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
            return answer("hi")

    exporter, tracer = spans()
    loop = AgentLoop(Nameless(), SdkTools(), RuntimeMetrics(), tracer=tracer)
    await loop.run("q", "c")
    chat = exporter.get_finished_spans()[0]
    assert (chat.name, (chat.attributes or {})["gen_ai.request.model"]) == ("chat ", "")


def test_preloading_drops_system_messages_anywhere() -> None:
    loop, _, _ = loop_of(Scripted())
    loop.preload(
        "c",
        [
            {"role": "user", "content": "q"},
            {"role": "system", "content": "s"},
            {"role": "assistant", "content": "a"},
        ],
    )
    assert [m["role"] for m in loop.history("c")] == ["user", "assistant"]


def test_a_history_of_exactly_the_byte_limit_is_kept() -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    exact = sum(len(json.dumps(m).encode()) for m in messages)
    loop, _, _ = loop_of(Scripted(), history_bytes=exact)
    loop.preload("c", messages)
    assert loop.history("c") == messages
    loop, _, _ = loop_of(Scripted(), history_bytes=exact - 1)
    loop.preload("c", messages)
    assert loop.history("c") == []


def user(size: int) -> dict[str, str]:
    """A user message of ``size`` bytes as JSON."""
    return {
        "role": "user",
        "content": "x" * (size - len(json.dumps({"role": "user", "content": ""}))),
    }


def test_conversations_go_until_the_rest_fit_and_exactly_full_is_kept() -> None:
    loop, _, _ = loop_of(Scripted(), history_bytes=TOTAL_HISTORY_BYTES)
    loop.preload("a", [user(100)])
    loop.preload("b", [user(TOTAL_HISTORY_BYTES - 100)])
    assert loop.kept_bytes == TOTAL_HISTORY_BYTES
    assert (len(loop.history("a")), len(loop.history("b"))) == (1, 1)
    loop, _, _ = loop_of(Scripted(), history_bytes=TOTAL_HISTORY_BYTES)
    loop.preload("a", [user(100)])
    loop.preload("b", [user(100)])
    loop.preload("c", [user(TOTAL_HISTORY_BYTES - 10)])
    assert (loop.history("a"), loop.history("b"), len(loop.history("c"))) == ([], [], 1)
    assert loop.kept_bytes == TOTAL_HISTORY_BYTES - 10
