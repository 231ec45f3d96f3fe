"""A2A interop with the second independent implementation, npm ``@a2a-js/sdk`` under Node 22
(tests/support/a2a_js.py), both ways.

Our client (``PeerClient``, and peers as the model's tools) against its server
(tests/a2a_js/server.mjs), which answers with a Task or a Message, leaves a Task
``input-required``, fails or rejects one: by ``message/stream`` when its card says it
streams, by ``message/send`` when not. Its client (tests/a2a_js/client.mjs) against our
server: card fetch, ``message/send`` then ``tasks/get``, ``message/stream``,
``tasks/cancel`` of a running turn, an approval's ``input-required`` round trip, errors.
Our model is the scripted fake of tests/fake_openai.py, our tools the FAKE registry of
tests/test_agent_a2a_tasks.py."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from langop_infra.agent._a2a_client import PeerClient, PeerReply
from langop_infra.agent._a2a_server import a2a_routes, build_app
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._peer_tools import PeerTools
from langop_infra.agent._settings import Peer
from tests.fake_openai import FakeOpenAI
from tests.support import a2a_js
from tests.support.loopback import serve
from tests.test_agent_a2a_tasks import GUARD, Tools, script
from tests.test_agent_peer_tools import NoTools

pytestmark = pytest.mark.slow


def ask_js(texts: list[str], streaming: bool) -> list[PeerReply]:
    """Each of ``texts`` sent by our client to the @a2a-js/sdk server, in order."""

    async def run(base: str) -> list[PeerReply]:
        client = PeerClient([Peer(name="js", url=f"{base}/")], timeout=GUARD)
        try:
            return [await client.send("js", text) for text in texts]
        finally:
            await client.aclose()

    with a2a_js.server(streaming=streaming) as base:
        return asyncio.run(run(base))


@pytest.mark.parametrize("streaming", [True, False], ids=["message-stream", "message-send"])
def test_our_client_reads_the_js_servers_tasks_and_messages(streaming: bool) -> None:
    task, message, asked, failed, rejected = ask_js(
        ["task Lyon", "message Lyon", "ask Lyon", "fail Lyon", "bogus"], streaming
    )
    assert (task.text, task.state, task.finished) == ("done: Lyon", "completed", True)
    assert task.task_id and task.context_id
    assert (message.text, message.state, message.task_id) == ("echo: Lyon", "", "")
    assert (asked.text, asked.state, asked.finished) == ("Which city?", "input-required", False)
    assert (failed.text, failed.state) == ("could not: Lyon", "failed")
    assert (rejected.text, rejected.state) == ("unknown: bogus", "rejected")


def test_a_js_peer_as_a_tool_gives_its_answer_or_an_error_result_the_model_reads() -> None:
    async def run(base: str) -> list[tuple[bool, str]]:
        client = PeerClient([Peer(name="js", url=f"{base}/")], timeout=GUARD)
        tools = PeerTools(NoTools(), client)
        try:
            results = [
                await tools.call_tool("a2a:js", {"message": text})
                for text in ("task Lyon", "ask Lyon", "fail Lyon")
            ]
            definitions, _ = tools.llm_definitions("openai")
        finally:
            await client.aclose()
        described = definitions[-1]["function"]["description"]
        return [(described.startswith("Ask the agent js-peer"), described)] + [
            (r.is_error, r.content[0]["text"]) for r in results
        ]

    with a2a_js.server() as base:
        card, task, asked, failed = asyncio.run(run(base))
    assert card == (True, card[1]) and "Echo: Answers as told" in card[1]
    assert task == (False, "done: Lyon")
    assert asked == (
        True,
        "peer js needs more input before it can answer (input-required): Which city?",
    )
    assert failed == (True, "peer js ended its task failed: could not: Lyon")


def test_our_client_says_which_js_peer_it_cannot_reach() -> None:
    with a2a_js.server() as base:
        pass  # the server is gone: its port answers no more

    async def run() -> str:
        client = PeerClient([Peer(name="js", url=f"{base}/")], timeout=GUARD)
        result = await PeerTools(NoTools(), client).call_tool("a2a:js", {"message": "task x"})
        await client.aclose()
        return result.content[0]["text"]

    said = asyncio.run(run())
    assert said.startswith(f"peer js: cannot read its card {base}/.well-known/agent-card.json:")


@contextmanager
def our_agent(require_approval: frozenset[str] = frozenset()) -> Iterator[tuple[str, Tools]]:
    """Our runtime's A2A server (its minimal card, a2a-sdk's handler, our task lifecycle)."""
    tools, fake, metrics = Tools(), FakeOpenAI(script=script), RuntimeMetrics()
    with serve(fake.app()) as model_url:
        model = ChatModel(model_url, "m", None, 10, metrics)
        loop = AgentLoop(
            model, tools, metrics, tool_timeout=GUARD * 10, require_approval=set(require_approval)
        )
        with serve(build_app(a2a_routes(None, "/", lambda: loop, "helper"))) as base:
            yield base, tools


def test_the_js_client_reads_our_card_as_a2a_1_0() -> None:
    with our_agent() as (base, _):
        card = a2a_js.client("card", base)["card"]
    assert card == {
        "name": "helper",
        "streaming": True,
        "pushNotifications": False,
        "interfaces": [["JSONRPC", "1.0"]],
        "protocolVersion": "1.0",
    }


def test_the_js_client_sends_to_us_and_gets_the_task_back() -> None:
    with our_agent() as (base, _):
        steps = a2a_js.client("send", base)
    sent, got = steps["send"], steps["get"]
    answer = [{"name": "answer", "texts": ["found Lyon: 522250"]}]
    assert (sent["kind"], sent["state"], sent["artifacts"]) == (
        "task",
        "TASK_STATE_COMPLETED",
        answer,
    )
    assert (got["id"], got["state"], got["artifacts"], got["history"]) == (
        sent["id"],
        "TASK_STATE_COMPLETED",
        answer,
        1,
    )


def test_the_js_client_streams_a_status_per_tool_call_then_the_answer() -> None:
    with our_agent() as (base, _):
        events = a2a_js.client("stream", base)["stream"]["events"]
    assert events == [
        ["task", "TASK_STATE_SUBMITTED"],
        ["status", "TASK_STATE_WORKING"],
        ["status", "TASK_STATE_WORKING", 'calling lookup {"city": "Lyon"}'],
        ["artifact", "found Lyon: 522250"],
        ["status", "TASK_STATE_COMPLETED"],
    ]


def test_the_js_client_cancels_our_running_turn_and_its_tool_call() -> None:
    with our_agent() as (base, tools):
        process = a2a_js.client_process("cancel", base)
        assert process.stdin is not None and process.stdout is not None
        started = a2a_js.steps(process.stdout.readline())["started"]
        assert tools.hanging.wait(GUARD)
        process.stdin.write("go\n")
        process.stdin.flush()
        output, errors = process.communicate(timeout=GUARD)
    assert process.returncode == 0, errors
    steps = a2a_js.steps(output)
    assert (steps["cancel"]["id"], steps["cancel"]["state"]) == (
        started["id"],
        "TASK_STATE_CANCELED",
    )
    assert steps["get"]["state"] == "TASK_STATE_CANCELED"
    assert tools.events == ["hang started", "hang cancelled"]


def test_the_js_client_answers_our_approval_question_and_the_task_completes() -> None:
    with our_agent(require_approval=frozenset({"lookup"})) as (base, _):
        steps = a2a_js.client("approve", base)
    asked, answered = steps["asked"], steps["answered"]
    assert (asked["state"], asked["status"]) == (
        "TASK_STATE_INPUT_REQUIRED",
        ['May I call lookup with {"city": "Lyon"}? Answer yes to approve, anything else rejects.'],
    )
    assert asked["statusData"] == [{"approval": {"tool": "lookup", "arguments": {"city": "Lyon"}}}]
    assert (answered["id"], answered["state"], answered["artifacts"]) == (
        asked["id"],
        "TASK_STATE_COMPLETED",
        [{"name": "answer", "texts": ["found Lyon: 522250"]}],
    )


def test_the_js_client_gets_our_errors_as_its_own_error_types() -> None:
    with our_agent() as (base, _):
        steps = a2a_js.client("errors", base)
    not_found = {"error": "JsonRpcTaskNotFoundError", "message": "Task not found"}
    assert (steps["get"], steps["cancel"]) == (not_found, not_found)
    # The minimal card claims no push notifications: the JS client refuses before sending.
    assert steps["push"] == {
        "error": "PushNotificationNotSupportedError",
        "message": "Push Notification is not supported",
    }
