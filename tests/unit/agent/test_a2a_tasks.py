"""A turn as an A2A Task (langop_infra.agent._a2a_tasks), in process: our routes behind
``httpx.ASGITransport``, asked by ``a2a-sdk``'s own client; the turn is scripted (it observes
tool calls and asks for approvals as the loop would, and answers at once)."""

from __future__ import annotations

import asyncio
import datetime
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

# isort: off
# First: the package keeps a2a-sdk's gRPC parts out, whose protobuf symbols clash with
# Pulumi's in one process (langop_infra/agent/__init__.py says why).
import langop_infra.agent  # noqa: F401

# isort: on

import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers import get_data_parts, get_text_parts, new_task, new_text_part
from a2a.server.agent_execution import RequestContext
from a2a.server.context import ServerCallContext
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)

from langop_infra.agent._a2a_server import CARD_PATH, a2a_routes, build_app
from langop_infra.agent._a2a_tasks import BoundedTaskStore, TurnTasks, abandoned, approves
from langop_infra.agent._caller_watch import CALLER, Caller
from langop_infra.agent._loop import AgentLoop, Approver, Observer, TurnOutcome

BASE = "http://agent.apps:8080"
WORKING = TaskState.TASK_STATE_WORKING
Script = Callable[[str, Observer, Approver], Awaitable[TurnOutcome]]


class Scripted:
    """Stands in for the agent loop: runs ``script`` with the turn's hooks."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def run(self, text: str, conversation: str, observe: Any, approve: Any) -> TurnOutcome:
        return await self.script(text, observe, approve)


@asynccontextmanager
async def _agent(script: Script, streaming: bool = False) -> AsyncIterator[Client]:
    loop = Scripted(script)
    routes = a2a_routes(None, "/rpc", cast("Callable[[], AgentLoop]", lambda: loop), "helper")
    transport = httpx.ASGITransport(app=build_app(routes))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        card = parse_agent_card((await http.get(CARD_PATH)).json())
        yield ClientFactory(ClientConfig(streaming=streaming, httpx_client=http)).create(card)


def _request(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=f"m-{text}",
        parts=[new_text_part(text)],
        task_id=task_id,
        context_id=context_id,
    )
    return SendMessageRequest(message=message)


async def _events(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return [event async for event in client.send_message(request)]


def _state(value: int) -> str:
    return TaskState.Name(value).removeprefix("TASK_STATE_")


async def _answer(text: str, *_: Any) -> TurnOutcome:
    return TurnOutcome(f"answer to {text}", "c")


def _task_of(script: Script, text: str) -> Any:
    """The Task one ``message/send`` of ``text`` answers with, the turn run by ``script``."""

    async def run() -> Any:
        async with _agent(script) as client:
            (event,) = await _events(client, _request(text))
            return event.task

    return asyncio.run(run())


def test_a_turn_completes_with_its_answer_as_an_artifact() -> None:
    task = _task_of(_answer, "hi")
    assert _state(task.status.state) == "COMPLETED"
    (artifact,) = task.artifacts
    assert artifact.name == "answer"
    assert get_text_parts(artifact.parts) == ["answer to hi"]
    [record] = get_data_parts(artifact.parts)
    assert (record["answer"], record["error"]) == ("answer to hi", None)


def test_a_turn_that_failed_ends_failed_with_the_answer_as_its_message() -> None:
    async def broken(text: str, *_: Any) -> TurnOutcome:
        return TurnOutcome("I could not finish: the model is down", "c", error="HTTP 503")

    task = _task_of(broken, "hi")
    assert _state(task.status.state) == "FAILED"
    assert get_text_parts(task.status.message.parts) == ["I could not finish: the model is down"]
    assert get_data_parts(task.artifacts[0].parts)[0]["error"] == "HTTP 503"


WHEN = datetime.date(2026, 11, 29)


async def _observing(text: str, observe: Observer, _approve: Approver) -> TurnOutcome:
    await observe("lookup", {"city": "Lyon"})
    await observe("bulk", {"rows": "x" * 600})
    await observe("when", {"day": WHEN})  # not JSON: shown as its str()
    return TurnOutcome("done", "c")


def test_a_stream_has_a_working_status_per_tool_call() -> None:
    async def run() -> list[StreamResponse]:
        async with _agent(_observing, streaming=True) as client:
            return await _events(client, _request("hi"))

    events = asyncio.run(run())
    working = [
        get_text_parts(e.status_update.status.message.parts)
        for e in events
        if e.HasField("status_update") and e.status_update.status.message.parts
    ]
    assert working[0] == ['calling lookup {"city": "Lyon"}']
    shown = working[1][0].removeprefix("calling bulk ")
    assert shown == ('{"rows": "' + "x" * 600)[:500]
    assert working[2] == ['calling when {"day": "2026-11-29"}']
    updates = [e.status_update for e in events if e.HasField("status_update")]
    assert [_state(u.status.state) for u in updates] == ["WORKING"] * 4 + ["COMPLETED"]
    task_ids = {u.task_id for u in updates} | {u.context_id for u in updates}
    assert len(task_ids) == 2 and "" not in task_ids


async def _asking(text: str, _observe: Observer, approve: Approver) -> TurnOutcome:
    approved = await approve("delete", {"id": 7})
    return TurnOutcome(f"approved={approved}", "c")


def test_an_approval_question_shows_at_most_2000_characters_of_the_arguments() -> None:
    arguments = {"rows": "y" * 2500, "day": WHEN}

    async def asking(text: str, _observe: Observer, approve: Approver) -> TurnOutcome:
        return TurnOutcome(f"approved={await approve('load', arguments)}", "c")

    task = _task_of(asking, "load")
    shown = json.dumps(arguments, default=str)[:2000]
    assert get_text_parts(task.status.message.parts) == [
        f"May I call load with {shown}? Answer yes to approve, anything else rejects."
    ]
    [data] = get_data_parts(task.status.message.parts)
    assert data == {
        "approval": {"tool": "load", "arguments": {"rows": "y" * 2500, "day": "2026-11-29"}}
    }


@pytest.mark.parametrize(("reply", "approved"), [("Yes, go ahead", True), ("no", False)])
def test_an_approval_pauses_the_task_until_the_callers_next_message(
    reply: str, approved: bool
) -> None:
    async def run() -> tuple[Any, Any]:
        async with _agent(_asking) as client:
            (paused,) = await _events(client, _request("clean up"))
            task = paused.task
            answer = _request(reply, task_id=task.id, context_id=task.context_id)
            (resumed,) = await _events(client, answer)
            return task, resumed.task

    paused, resumed = asyncio.run(run())
    assert _state(paused.status.state) == "INPUT_REQUIRED"
    parts = paused.status.message.parts
    assert get_text_parts(parts) == [
        'May I call delete with {"id": 7}? Answer yes to approve, anything else rejects.'
    ]
    assert get_data_parts(parts) == [{"approval": {"tool": "delete", "arguments": {"id": 7.0}}}]
    assert (resumed.id, _state(resumed.status.state)) == (paused.id, "COMPLETED")
    assert get_text_parts(resumed.artifacts[0].parts) == [f"approved={approved}"]


def test_tasks_cancel_stops_the_turn() -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def hanging(*_: Any) -> TurnOutcome:
        started.set()
        try:
            await asyncio.sleep(3600)
        finally:
            stopped.set()
        raise AssertionError("not reached")

    async def run() -> tuple[Any, Any]:
        async with _agent(hanging) as client:
            request = _request("hi")
            request.configuration.return_immediately = True
            (event,) = await _events(client, request)
            await started.wait()
            canceled = await client.cancel_task(CancelTaskRequest(id=event.task.id))
            await stopped.wait()
            return canceled, await client.get_task(GetTaskRequest(id=event.task.id))

    canceled, got = asyncio.run(run())
    assert _state(canceled.status.state) == _state(got.status.state) == "CANCELED"
    assert get_text_parts(got.status.message.parts) == ["canceled by the caller"]


@pytest.mark.parametrize(
    ("text", "approved"),
    [
        ("yes", True),
        ("  Y. sure", True),
        ("OK!", True),
        ("approve", True),
        ("Approved, thanks", True),
        ("no", False),
        ("", False),
        ("yesterday", False),
        ("not yes", False),
    ],
)
def test_an_answer_approves_when_its_first_word_does(text: str, approved: bool) -> None:
    assert approves(text) is approved


def test_the_task_store_drops_the_oldest_past_its_bound() -> None:
    async def run() -> tuple[list[bool], list[bool]]:
        store, context = BoundedTaskStore(max_tasks=2), ServerCallContext()
        for name in ("a", "b", "a", "c"):  # a saved again: still the oldest by first save
            await store.save(new_task(name, f"{name}-ctx", WORKING), context)
        kept = [await store.get(n, context) is not None for n in ("a", "b", "c")]
        await store.delete("b", context)
        await store.save(new_task("d", "d-ctx", WORKING), context)
        after = [await store.get(n, context) is not None for n in ("b", "c", "d")]
        return kept, after

    kept, after = asyncio.run(run())
    assert kept == [False, True, True]
    assert after == [False, True, True]


class Published:
    """Keeps what the turn publishes (a stand-in for a2a-sdk's event queue, which the
    request handler drains)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)


def _context(method: str | None, **config: Any) -> RequestContext:
    request = _request("hi")
    request.configuration.CopyFrom(SendMessageConfiguration(**config))
    state = {"method": method} if method else {}
    return RequestContext(ServerCallContext(state=state), request=request)


@pytest.mark.parametrize(
    ("method", "config", "watched"),
    [
        ("SendMessage", {}, True),
        ("message/send", {}, True),
        ("SendMessage", {"history_length": 3}, True),
        ("SendStreamingMessage", {}, False),
        ("message/stream", {}, False),
        (None, {}, False),
        ("SendMessage", {"return_immediately": True}, False),
        (
            "message/send",
            {"task_push_notification_config": TaskPushNotificationConfig(url="https://h/")},
            False,
        ),
    ],
)
def test_only_a_waiting_send_is_abandoned_by_its_caller(
    method: str | None, config: dict[str, Any], watched: bool
) -> None:
    caller = Caller()
    token = CALLER.set(caller)
    try:
        assert (abandoned(_context(method, **config)) is caller) is watched
    finally:
        CALLER.reset(token)
    assert abandoned(_context(method, **config)) is None  # no caller watched at all


def test_a_request_without_a_message_is_abandoned_too() -> None:
    context = RequestContext(ServerCallContext(state={"method": "SendMessage"}))
    caller = Caller()
    token = CALLER.set(caller)
    try:
        assert abandoned(context) is caller
    finally:
        CALLER.reset(token)


def test_cancel_stops_the_running_turn_and_publishes_canceled() -> None:
    async def main() -> tuple[Any, ...]:
        tasks, published = TurnTasks(), Published()
        queue = cast(Any, published)
        request = RequestContext(ServerCallContext(), request=_request("hi"))
        started = asyncio.Event()

        async def hanging(*_: Any) -> TurnOutcome:
            started.set()
            await asyncio.sleep(3600)
            raise AssertionError("not reached")

        running = asyncio.create_task(tasks.run(request, queue, hanging))
        await started.wait()
        task_id, context_id = request.task_id, request.context_id
        cancel = RequestContext(ServerCallContext(), task_id=task_id, context_id=context_id)
        turn = tasks._turns[task_id or ""].running
        assert turn is not None
        await tasks.cancel(cancel, queue)
        turn_cancelled = turn.cancelled()  # awaited by cancel, not merely asked
        await asyncio.wait_for(running, 30)  # the bound ends a hung run only
        return task_id, context_id, published.events, turn_cancelled, tasks._turns

    task_id, context_id, events, turn_cancelled, turns = asyncio.run(main())
    assert (turns, turn_cancelled) == ({}, True)
    last = events[-1]
    assert (last.task_id, last.context_id, _state(last.status.state)) == (
        task_id,
        context_id,
        "CANCELED",
    )
    assert get_text_parts(last.status.message.parts) == ["canceled by the caller"]
    assert all(e.context_id == context_id for e in events if hasattr(e, "status"))


def test_a_task_without_a_message_is_refused() -> None:
    async def main() -> None:
        empty = RequestContext(ServerCallContext())
        await TurnTasks().run(empty, cast(Any, Published()), cast(Any, _answer))

    with pytest.raises(ValueError, match=r"^a task needs a message$"):
        asyncio.run(main())


def test_cancelling_a_task_with_no_turn_still_publishes_canceled() -> None:
    published = Published()
    asyncio.run(TurnTasks().cancel(RequestContext(ServerCallContext()), cast(Any, published)))
    (event,) = published.events
    assert (event.task_id, event.context_id, _state(event.status.state)) == ("", "", "CANCELED")


def _sending(text: str, task: Any = None, method: str = "SendMessage") -> RequestContext:
    request = _request(text, task.id, task.context_id) if task is not None else _request(text)
    call = ServerCallContext(state={"method": method})
    return RequestContext(call, request=request, task=task)


def test_an_approval_resumes_the_same_task_and_the_turn_is_forgotten_after() -> None:
    async def main() -> tuple[Any, ...]:
        tasks, first, second = TurnTasks(), Published(), Published()

        def turn(observe: Observer, approve: Approver) -> Awaitable[TurnOutcome]:
            return _asking("clean up", observe, approve)

        await tasks.run(_sending("clean up"), cast(Any, first), cast(Any, turn))
        task = first.events[0]
        paused = list(tasks._turns)
        await tasks.run(_sending("yes", task), cast(Any, second), cast(Any, turn))
        return task, paused, second.events, tasks._turns

    task, paused, events, turns = asyncio.run(main())
    assert paused == [task.id] and turns == {}
    assert not any(isinstance(e, Task) for e in events)  # the same task goes on
    assert {e.task_id for e in events} == {task.id}
    artifacts = [e.artifact for e in events if hasattr(e, "artifact")]
    assert get_text_parts(artifacts[0].parts) == ["approved=True"]


def test_a_waiting_senders_leaving_cancels_the_turn() -> None:
    async def main() -> tuple[Any, ...]:
        tasks, published, caller = TurnTasks(), Published(), Caller()
        started = asyncio.Event()

        async def hanging(*_: Any) -> TurnOutcome:
            started.set()
            await asyncio.sleep(3600)
            raise AssertionError("not reached")

        token = CALLER.set(caller)
        try:
            running = asyncio.create_task(tasks.run(_sending("hi"), cast(Any, published), hanging))
        finally:
            CALLER.reset(token)
        await started.wait()
        caller.leave()
        await asyncio.wait_for(running, 30)  # the bound ends a hung run only
        return published.events[-1], tasks._turns

    last, turns = asyncio.run(main())
    assert (_state(last.status.state), turns) == ("CANCELED", {})
    assert get_text_parts(last.status.message.parts) == [
        "canceled: the caller disconnected before the answer"
    ]
