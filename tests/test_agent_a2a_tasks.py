"""The runtime's A2A task lifecycle, through ``a2a-sdk``'s own client: ``message/send``
answers with a Task whose artifact is the answer; ``message/stream`` streams ``working``
with one status per tool call, the artifact, then ``completed``; ``tasks/get`` returns the
task; ``tasks/cancel`` stops a running turn and cancels its tool call; the task store is
bounded. The model is the scripted fake of tests/fake_openai.py (no real model runs here)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

# isort: off
# First: the package keeps a2a-sdk's gRPC parts out, whose protobuf symbols clash with
# Pulumi's in one process (langop_infra/agent/__init__.py says why).
import langop_infra.agent  # noqa: F401

# isort: on
import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers import get_text_parts, new_text_part
from a2a.server.context import ServerCallContext
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
)

from langop_infra.agent._a2a_server import a2a_routes, build_app
from langop_infra.agent._a2a_tasks import BoundedTaskStore
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.mcp._session import ToolCallResult
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import call, tool_results
from tests.support.loopback import serve

GUARD = 30.0  # guards a hang only
LINGER = 2.0  # how long a turn that must run on is watched


class Tools:
    """A FAKE registry: ``lookup`` answers at once; ``hang`` waits until cancelled, and
    records that it was. It runs in the server's thread: ``hanging`` is a thread event."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.hanging = threading.Event()

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        names = ("lookup", "hang")
        return [{"type": "function", "function": {"name": n}} for n in names], {n: n for n in names}

    async def call_tool(self, name: str, arguments: Any = None) -> ToolCallResult:
        if name == "lookup":
            return ToolCallResult([{"type": "text", "text": "Lyon: 522250"}], False)
        self.events.append("hang started")
        self.hanging.set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.events.append("hang cancelled")
            raise
        return ToolCallResult([], False)


def script(body: dict[str, Any]) -> dict[str, Any]:
    """Calls the tool the user names, then answers with its result."""
    results = tool_results(body)
    if not results:
        return call(body["messages"][-1]["content"], city="Lyon")
    return {"role": "assistant", "content": f"found {results[0]['text']}"}


@asynccontextmanager
async def agent(streaming: bool) -> AsyncIterator[tuple[Client, Tools]]:
    tools, fake, metrics = Tools(), FakeOpenAI(script=script), RuntimeMetrics()
    with serve(fake.app()) as model_url:
        model = ChatModel(model_url, "m", None, 10, metrics)
        # no tool timeout within the test: only tasks/cancel ends the hanging call
        loop = AgentLoop(model, tools, metrics, tool_timeout=GUARD * 10)
        with serve(build_app(a2a_routes(None, "/", lambda: loop, "helper"))) as base:
            async with httpx.AsyncClient(timeout=GUARD) as http:
                card = parse_agent_card(
                    (await http.get(f"{base}/.well-known/agent-card.json")).json()
                )
                config = ClientConfig(streaming=streaming, httpx_client=http)
                yield ClientFactory(config).create(card), tools


def request(text: str) -> SendMessageRequest:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{text}", parts=[new_text_part(text)])
    return SendMessageRequest(message=message)


def state(task: Task) -> str:
    return TaskState.Name(task.status.state)


def test_message_send_answers_with_a_completed_task_that_tasks_get_returns() -> None:
    async def run() -> tuple[Task, Task]:
        async with agent(streaming=False) as (client, _):
            (event,) = [e async for e in client.send_message(request("lookup"))]
            got = await client.get_task(GetTaskRequest(id=event.task.id, history_length=1))
            return event.task, got

    task, got = asyncio.run(run())
    assert state(task) == "TASK_STATE_COMPLETED"
    (artifact,) = task.artifacts
    assert (artifact.name, get_text_parts(artifact.parts)) == ("answer", ["found Lyon: 522250"])
    assert (got.id, state(got), len(got.history)) == (task.id, "TASK_STATE_COMPLETED", 1)
    assert get_text_parts(got.artifacts[0].parts) == ["found Lyon: 522250"]


def describe(event: StreamResponse) -> tuple[str, ...]:
    if event.HasField("task"):
        return ("task", state(event.task))
    if event.HasField("status_update"):
        status = event.status_update.status
        return ("status", TaskState.Name(status.state), *get_text_parts(status.message.parts))
    if event.HasField("artifact_update"):
        return ("artifact", *get_text_parts(event.artifact_update.artifact.parts))
    return ("message",)


def test_message_stream_streams_a_status_per_tool_call_then_the_artifact() -> None:
    async def run() -> list[tuple[str, ...]]:
        async with agent(streaming=True) as (client, _):
            return [describe(e) async for e in client.send_message(request("lookup"))]

    assert asyncio.run(run()) == [
        ("task", "TASK_STATE_SUBMITTED"),
        ("status", "TASK_STATE_WORKING"),
        ("status", "TASK_STATE_WORKING", 'calling lookup {"city": "Lyon"}'),
        ("artifact", "found Lyon: 522250"),
        ("status", "TASK_STATE_COMPLETED"),
    ]


def test_tasks_cancel_stops_the_turn_and_its_tool_call() -> None:
    async def run() -> tuple[Task, list[str], Task]:
        async with agent(streaming=True) as (client, tools):
            stream = client.send_message(request("hang"))
            first = await anext(stream)
            assert await asyncio.to_thread(tools.hanging.wait, GUARD)
            canceled = await client.cancel_task(CancelTaskRequest(id=first.task.id))
            await stream.aclose()  # pyright: ignore[reportAttributeAccessIssue]  # an async generator
            got = await client.get_task(GetTaskRequest(id=first.task.id))
            return canceled, tools.events, got

    canceled, events, got = asyncio.run(run())
    assert state(canceled) == "TASK_STATE_CANCELED"
    assert events == ["hang started", "hang cancelled"]
    assert state(got) == "TASK_STATE_CANCELED"


async def leave_while_hanging(client: Client, tools: Tools, waits: bool) -> list[str]:
    """Send "hang" (waiting for the answer, or asking to return at once), and once the tool
    hangs, close the connection; the events once the call is cancelled, or after ``LINGER``
    (where it must not be: the positive case shows it takes a few milliseconds)."""
    message = request("hang")
    message.configuration.return_immediately = not waits
    sent = asyncio.ensure_future(anext(aiter(client.send_message(message))))
    assert await asyncio.to_thread(tools.hanging.wait, GUARD)
    if waits:
        sent.cancel()  # the caller gives up: httpx closes its connection
    else:
        await sent  # answered at once with the submitted task
    for _ in range(int((GUARD if waits else LINGER) / 0.05)):
        if "hang cancelled" in tools.events:
            break
        await asyncio.sleep(0.05)
    return list(tools.events)


def test_a_caller_that_leaves_message_send_cancels_its_turn_and_tool_call() -> None:
    """Issue 49 §2: a turn whose caller disconnected stops, and its tool call with it."""

    async def run() -> list[str]:
        async with agent(streaming=False) as (client, tools):
            return await leave_while_hanging(client, tools, waits=True)

    assert asyncio.run(run()) == ["hang started", "hang cancelled"]


def test_a_turn_the_caller_asked_not_to_wait_for_runs_on() -> None:
    async def run() -> list[str]:
        async with agent(streaming=False) as (client, tools):
            return await leave_while_hanging(client, tools, waits=False)

    assert asyncio.run(run()) == ["hang started"]


def test_a_burst_of_callers_that_give_up_leaves_no_turn_running() -> None:
    """100 callers (httpx's pool) each leave a hanging turn: every tool call is cancelled,
    and the next caller is answered as usual."""
    burst = 100

    async def run() -> tuple[int, int, str]:
        async with agent(streaming=False) as (client, tools):
            sent = [
                asyncio.ensure_future(anext(aiter(client.send_message(request("hang")))))
                for _ in range(burst)
            ]
            for _ in range(int(GUARD / 0.05)):
                if tools.events.count("hang started") == burst:
                    break
                await asyncio.sleep(0.05)
            for one in sent:
                one.cancel()
            for _ in range(int(GUARD / 0.05)):
                if tools.events.count("hang cancelled") == burst:
                    break
                await asyncio.sleep(0.05)
            started, cancelled = (
                tools.events.count("hang started"),
                tools.events.count("hang cancelled"),
            )
            (answer,) = [e async for e in client.send_message(request("lookup"))]
            return started, cancelled, state(answer.task)

    assert asyncio.run(run()) == (burst, burst, "TASK_STATE_COMPLETED")


def test_the_task_store_keeps_the_newest_tasks() -> None:
    async def run() -> list[bool]:
        store, context = BoundedTaskStore(max_tasks=2), ServerCallContext()
        for n in range(3):
            await store.save(Task(id=f"t{n}", context_id="c"), context)
        return [await store.get(f"t{n}", context) is not None for n in range(3)]

    assert asyncio.run(run()) == [False, True, True]
