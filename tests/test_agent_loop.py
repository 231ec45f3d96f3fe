"""The built-in runtime's loop (langop_infra.agent._loop) with real parts: tool kit tools on
the official MCP SDK through the agent's registry, and the model over HTTP (the scripted
fake of tests/fake_openai.py: no real model runs here). Faults: a model that is down or
answers garbage, an unknown tool, bad arguments, a tool that hangs, a model that never stops;
bounded history; memory through examples/memory_tool."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._memory import Memory
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent.runtime import ServerEntry, connect_tool_registry
from langop_infra.mcp import ClientOptions
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import (
    HangTool,
    MultiplyTool,
    PopulationTool,
    call,
    named,
    tool_app,
    tool_results,
    twice_the_population,
)
from tests.support.loopback import free_port, serve

pytestmark = pytest.mark.anyio
FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
MEMORY_SERVER = Path(__file__).resolve().parents[1] / "examples" / "memory_tool" / "server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def tools() -> Iterator[list[ServerEntry]]:
    with (
        serve(tool_app(PopulationTool())) as geo,
        serve(tool_app(MultiplyTool(), HangTool())) as calc,
    ):
        yield [ServerEntry("geo", f"{geo}/mcp"), ServerEntry("calc", f"{calc}/mcp")]


def model_at(url: str, metrics: RuntimeMetrics) -> ChatModel:
    return ChatModel(url, "scripted", "sk-test", 10, metrics)


async def run_loop(
    servers: list[ServerEntry], model_url: str, text: str, **options: Any
) -> tuple[Any, RuntimeMetrics, AgentLoop]:
    metrics = RuntimeMetrics()
    async with await connect_tool_registry(servers, FAST) as registry:
        loop = AgentLoop(model_at(model_url, metrics), registry, metrics, **options)
        outcome = await loop.run(text, "c1")
    return outcome, metrics, loop


def sample(metrics: RuntimeMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


async def test_two_tools_two_steps_and_the_right_answer(tools: list[ServerEntry]) -> None:
    fake = FakeOpenAI(script=twice_the_population)
    with serve(fake.app()) as url:
        outcome, metrics, _ = await run_loop(tools, url, "What is twice the population of Lyon?")
    assert outcome.answer == "Twice the population of Lyon is 1044500."
    assert outcome.error is None
    assert [(s.step_number, s.tool_name, s.tool_args) for s in outcome.steps] == [
        (1, "geo__population", {"city": "Lyon"}),
        (2, "calc__multiply", {"a": 522250, "b": 2}),
    ]
    assert outcome.steps[1].result == {"success": True, "product": 1044500.0}
    assert [r.success for r in outcome.tool_results] == [True, True]
    assert [c.call_id for c in outcome.tool_calls] == [r.call_id for r in outcome.tool_results]
    assert fake.requests[0]["authorization"] == "Bearer sk-test"
    assert set(named(fake.requests[0]["body"], s) for s in ("population", "multiply")) == {
        "geo__population",
        "calc__multiply",
    }
    assert sample(metrics, "langop_agent_tool_invocations_total", tool="geo__population") == 1
    assert sample(metrics, "langop_agent_tool_invocations_total", tool="calc__multiply") == 1
    assert sample(metrics, "langop_agent_model_requests_total", outcome="ok") == 3


async def test_a_model_that_is_down_gives_an_error_answer(tools: list[ServerEntry]) -> None:
    outcome, metrics, _ = await run_loop(tools, f"http://127.0.0.1:{free_port()}", "hi")
    assert outcome.error is not None and "cannot be reached: ConnectError" in outcome.error
    assert outcome.answer.startswith("I could not finish: the model at http://127.0.0.1:")
    assert sample(metrics, "langop_agent_model_requests_total", outcome="error") == 1


def garbage_model() -> Starlette:
    """A FAKE model that answers HTML and then JSON that is no chat completion (no real
    model does this on purpose; a misrouted proxy does)."""
    answers = iter(["<html>502 Bad Gateway</html>", '{"choices": []}'])

    async def chat(_request: Any) -> PlainTextResponse:
        return PlainTextResponse(next(answers), media_type="application/json")

    return Starlette(routes=[Route("/chat/completions", chat, methods=["POST"])])


async def test_a_model_answering_garbage_gives_an_error_answer(tools: list[ServerEntry]) -> None:
    with serve(garbage_model()) as url:
        first, _, loop = await run_loop(tools, url, "hi")
        second = await loop.run("again", "c1")
    assert first.error == (
        "the model answered something that is not JSON: <html>502 Bad Gateway</html>"
    )
    assert (
        second.error == "the model's answer is not a chat completion (list index out of "
        'range): {"choices": []}'
    )


async def test_unknown_tools_and_bad_arguments_are_error_results(
    tools: list[ServerEntry],
) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if not results:
            return call("rm_rf")
        if len(results) == 1:
            bad = call(named(body, "multiply"))
            bad["tool_calls"][0]["function"]["arguments"] = "{not json"
            return bad
        if len(results) == 2:
            return call(named(body, "multiply"), a="x", b=2)
        return {"role": "assistant", "content": f"saw {len(results)} errors"}

    with serve(FakeOpenAI(script=script).app()) as url:
        outcome, metrics, _ = await run_loop(tools, url, "break things")
    assert outcome.answer == "saw 3 errors"
    errors = [r.error or "" for r in outcome.tool_results]
    assert errors[0].startswith("no tool named 'rm_rf'; the tools are: calc__hang, ")
    assert errors[1] == "the arguments are not JSON: '{not json'; send a JSON object"
    assert "Input validation failed: a: Input should be a valid number" in errors[2]
    assert [r.success for r in outcome.tool_results] == [False, False, False]
    assert sample(metrics, "langop_agent_tool_errors_total", tool="calc__multiply") == 2


async def test_a_hung_tool_is_bounded_by_its_timeout(tools: list[ServerEntry]) -> None:
    def script(body: dict[str, Any]) -> dict[str, Any]:
        if not tool_results(body):
            return call(named(body, "hang"))
        return {"role": "assistant", "content": str(tool_results(body)[0])}

    with serve(FakeOpenAI(script=script).app()) as url:
        outcome, _, _ = await run_loop(tools, url, "wait", tool_timeout=0.5)
    assert outcome.tool_results[0].error == "tool calc__hang did not answer within 0.5 s"
    assert outcome.answer == "tool calc__hang did not answer within 0.5 s"


async def test_max_iterations_bounds_a_model_that_never_stops(tools: list[ServerEntry]) -> None:
    fake = FakeOpenAI(script=lambda body: call(named(body, "population"), city="Paris"))
    with serve(fake.app()) as url:
        outcome, _, _ = await run_loop(tools, url, "loop", max_iterations=3)
    assert len(fake.requests) == 3
    assert len(outcome.steps) == 3
    assert outcome.error == "no final answer after maxIterations=3 model calls"


async def test_history_is_bounded_per_conversation(tools: list[ServerEntry]) -> None:
    fake = FakeOpenAI(script=lambda body: {"role": "assistant", "content": "ok"})
    with serve(fake.app()) as url:
        _, _, loop = await run_loop(tools, url, "turn 0", history_messages=4)
        for n in range(1, 6):
            await loop.run(f"turn {n}", "c1")
        await loop.run("elsewhere", "c2")
    kept = loop.history("c1")
    assert [m["content"] for m in kept] == ["turn 4", "ok", "turn 5", "ok"]
    assert [m["content"] for m in loop.history("c2")] == ["elsewhere", "ok"]
    last_c1 = fake.requests[-2]["body"]["messages"]
    assert [m["content"] for m in last_c1[1:]] == ["turn 3", "ok", "turn 4", "ok", "turn 5"]


def memory_module() -> Any:
    spec = importlib.util.spec_from_file_location("memory_tool_for_agent", MEMORY_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_tool_calls_go_to_memory_and_come_back_in_a_first_turn(
    tools: list[ServerEntry], tmp_path: Path
) -> None:
    fake = FakeOpenAI(script=twice_the_population)
    memory_app = memory_module().build_app(tmp_path / "memory.db")
    with serve(memory_app) as memory_url, serve(fake.app()) as url:
        servers = [*tools, ServerEntry("memory", f"{memory_url}/mcp")]
        metrics = RuntimeMetrics()
        async with await connect_tool_registry(servers, FAST) as registry:
            memory = Memory(registry, "memory__remember", "memory__recall")
            loop = AgentLoop(model_at(url, metrics), registry, metrics, memory=memory)
            await loop.run("What is twice the population of Lyon?", "first")
            stored = await registry.call_tool("memory__recall", {"query": "population"})
            fake.script = lambda body: {"role": "assistant", "content": "remembered"}
            await loop.run("population of Lyon again?", "second")
    memories = stored.structured_content["memories"]
    contents = [json.loads(m["content"]) for m in memories]
    assert all(m["tags"] == ["is_tool_call", "conversation:first"] for m in memories)
    calls = [c for c in contents if c["role"] == "assistant"]
    assert {c["metadata"]["tool_name"] for c in calls} >= {"geo__population"}
    assert all(c["metadata"]["is_tool_call"] is True for c in contents)
    system = fake.requests[-1]["body"]["messages"][0]["content"]
    assert "## Recalled context" in system and '"tool_name": "geo__population"' in system


async def test_chat_with_tools_runs_tool_kit_tools_in_process() -> None:
    """Seed 003's ``chat_with_tools(messages, tools, max_iterations)`` with its built-in
    ``get_current_datetime`` and a tool answering ``success: false``."""
    from langop_infra.agent._local_tools import chat_with_tools
    from langop_infra.toolkit import MCPToolRegistry

    registry = MCPToolRegistry()
    registry.register(PopulationTool())

    def script(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if not results:
            return call("get_current_datetime", format="date", timezone="Asia/Tokyo")
        if len(results) == 1:
            return call("population", city="Atlantis")
        return {"role": "assistant", "content": f"{results[0]['datetime']} / {results[1]}"}

    fake = FakeOpenAI(script=script)
    with serve(fake.app()) as url:
        messages = [
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "hi"},
            {"role": "user", "content": "What is the date in Tokyo?"},
        ]
        response, steps, results = await chat_with_tools(
            messages, registry, 5, model=model_at(url, RuntimeMetrics())
        )
    assert [s.tool_name for s in steps] == ["get_current_datetime", "population"]
    assert [r.success for r in results] == [True, False]
    assert results[1].error == "unknown city 'Atlantis'"
    assert response.endswith(" / unknown city 'Atlantis'")
    sent = fake.requests[0]["body"]["messages"]
    assert [m["content"] for m in sent[1:]] == ["hello", "hi", "What is the date in Tokyo?"]


async def test_chat_with_tools_takes_the_registrys_langchain_tools() -> None:
    """Seed 003 passes ``registry.get_langchain_tools()``; they used to fail on
    ``'StructuredTool' object has no attribute 'input_model'``."""
    from langop_infra.agent._local_tools import chat_with_tools
    from langop_infra.toolkit import MCPToolRegistry

    registry = MCPToolRegistry()
    registry.register(PopulationTool())

    def script(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if not results:
            return call("population", city="Lyon")
        return {"role": "assistant", "content": f"{results[0]}"}

    fake = FakeOpenAI(script=script)
    with serve(fake.app()) as url:
        messages = [{"role": "user", "content": "How many people live in Lyon?"}]
        response, steps, results = await chat_with_tools(
            messages, registry.get_langchain_tools(), 5, model=model_at(url, RuntimeMetrics())
        )
    offered = [t["function"] for t in fake.requests[0]["body"]["tools"]]
    assert [t["name"] for t in offered] == ["get_current_datetime", "population"]
    assert offered[1]["parameters"]["required"] == ["city"]
    assert [(s.tool_name, s.tool_args) for s in steps] == [("population", {"city": "Lyon"})]
    assert results[0].success is True
    assert response == str({"success": True, "city": "Lyon", "population": 522_250})
