"""A2A peers as the model's tools (langop_infra.agent._peer_tools) and the client under them
(langop_infra.agent._a2a_client), against ``a2a-sdk``'s own server pieces on loopback
(tests/support/a2a_peers.py): a Task whose answer is an artifact, a Message, a Task left
``input-required``, a failed Task; the hop limit; one card fetch per peer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from langop_infra.agent import _turn_context as turn
from langop_infra.agent._a2a_client import PeerClient
from langop_infra.agent._peer_tools import PeerTools
from langop_infra.agent._settings import Peer
from langop_infra.mcp._session import ToolCallResult
from tests.support.a2a_peers import ScriptedPeer, peer_app
from tests.support.loopback import free_port, serve

MODES = ("task", "message", "input-required", "failed")


class Recorder:
    """Wraps a real ASGI app; keeps each HTTP request's method, path and client address,
    and each response's media type."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[dict[str, Any]] = []
        self.media_types: list[str] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            seen = {"method": scope["method"], "path": scope["path"]}
            self.requests.append({**seen, "client": tuple(scope["client"] or ())})

        async def recording(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or [])
                self.media_types.append(headers.get(b"content-type", b"").decode().split(";")[0])
            await send(message)

        await self.app(scope, receive, recording)


class NoTools:
    """A registry with one tool of its own, so the peer tool is offered beside it."""

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        own = {"type": "function", "function": {"name": "peer__geo", "parameters": {}}}
        return [own], {"peer__geo": "peer:geo"}

    async def call_tool(self, name: str, arguments: Any = None) -> ToolCallResult:
        return ToolCallResult([{"type": "text", "text": f"registry ran {name}"}], False)


@pytest.fixture(scope="module")
def peers() -> Iterator[dict[str, tuple[ScriptedPeer, Recorder, Peer]]]:
    running: dict[str, tuple[ScriptedPeer, Recorder, Peer]] = {}
    with _serving(list(MODES), running):
        yield running


def _serving(modes: list[str], running: dict[str, Any]) -> ExitStack:
    stack = ExitStack()
    for mode in modes:
        port = free_port()
        url = f"http://127.0.0.1:{port}/rpc"
        executor = ScriptedPeer(mode)
        recorder = Recorder(peer_app(executor, url))
        stack.enter_context(serve(recorder, port=port))
        running[mode] = (executor, recorder, Peer("geo", url))
    return stack


def test_a_task_answer_is_its_status_message_and_artifacts(
    peers: dict[str, tuple[ScriptedPeer, Recorder, Peer]],
) -> None:
    replies = {}
    for mode in MODES:
        client = PeerClient([peers[mode][2]], timeout=30)
        replies[mode] = asyncio.run(_send(client, "Lyon?", {turn.HOPS_KEY: 2}))
    task, message = replies["task"], replies["message"]
    assert (task.text, task.state, task.finished) == (
        "done\nartifact answer to Lyon?",
        "completed",
        True,
    )
    assert task.task_id and task.context_id
    assert (message.text, message.state, message.finished) == ("message answer to Lyon?", "", True)
    assert (replies["input-required"].state, replies["input-required"].text) == (
        "input-required",
        "Which city do you mean?",
    )
    assert (replies["failed"].state, replies["failed"].finished) == ("failed", False)
    assert peers["task"][0].metadata[-1] == {turn.HOPS_KEY: 2}


async def _send(client: PeerClient, text: str, metadata: dict[str, Any]) -> Any:
    try:
        return await client.send("geo", text, metadata=metadata)
    finally:
        await client.aclose()


def test_each_peer_is_a_tool_described_by_its_card(
    peers: dict[str, tuple[ScriptedPeer, Recorder, Peer]],
) -> None:
    results = {mode: asyncio.run(_ask_as_tool(peers[mode][2])) for mode in MODES}
    definitions, names = results["task"][0]
    peer_tool = definitions[-1]["function"]
    assert names["peer__geo_2"] == "a2a:geo" and names["peer__geo"] == "peer:geo"
    assert peer_tool["name"] == "peer__geo_2"
    assert peer_tool["description"] == (
        "Ask the agent scripted (over A2A) and get its answer.\n"
        "A peer that answers from a script\nSkills: Geography: Knows cities"
    )
    assert peer_tool["parameters"]["required"] == ["message"]
    answer = results["task"][1]
    assert (answer.is_error, answer.structured_content) == (
        False,
        {"peer": "geo", "answer": "done\nartifact answer to Lyon?"},
    )
    assert results["message"][1].content[0]["text"] == "message answer to Lyon?"
    needs = results["input-required"][1]
    assert needs.is_error and needs.content[0]["text"] == (
        "peer geo needs more input before it can answer (input-required): Which city do you mean?"
    )
    failed = results["failed"][1]
    assert failed.is_error and failed.content[0]["text"] == (
        "peer geo ended its task failed: the database is down"
    )
    assert results["task"][2].content[0]["text"] == "registry ran peer:geo"


async def _ask_as_tool(peer: Peer) -> tuple[Any, ToolCallResult, ToolCallResult]:
    tools = PeerTools(NoTools(), PeerClient([peer], timeout=30), max_hops=3)
    try:
        await tools.read_cards()
        definitions = tools.llm_definitions("openai")
        with turn.turn("c1", 1):
            answer = await tools.call_tool("a2a:geo", {"message": "Lyon?"})
        own = await tools.call_tool("peer:geo", {})
    finally:
        await tools.client.aclose()
    return definitions, answer, own


def test_the_hop_limit_stops_a_call_before_it_leaves(
    peers: dict[str, tuple[ScriptedPeer, Recorder, Peer]],
) -> None:
    executor, _, peer = peers["message"]
    before = len(executor.texts)

    async def ask(hops: int) -> ToolCallResult:
        tools = PeerTools(NoTools(), PeerClient([peer], timeout=30), max_hops=2)
        try:
            with turn.turn("c1", hops):
                return await tools.call_tool("a2a:geo", {"message": f"at {hops}"})
        finally:
            await tools.client.aclose()

    allowed, refused = asyncio.run(ask(1)), asyncio.run(ask(2))
    assert allowed.content[0]["text"] == "message answer to at 1"
    assert executor.metadata[-1] == {turn.HOPS_KEY: 2}
    assert refused.is_error and refused.content[0]["text"] == (
        "peer geo was not called: this request has passed through 2 agents, the hop limit "
        "(A2A_MAX_HOPS=2); answer with what you have"
    )
    assert executor.texts[before:] == ["at 1"]


def test_one_card_fetch_and_one_client_per_peer(
    peers: dict[str, tuple[ScriptedPeer, Recorder, Peer]],
) -> None:
    _, recorder, peer = peers["message"]
    before = len(recorder.requests)

    async def three_calls() -> list[str]:
        client = PeerClient([peer], timeout=30)
        try:
            replies = [await client.send("geo", f"q{n}") for n in range(3)]
        finally:
            await client.aclose()
        return [r.text for r in replies]

    assert asyncio.run(three_calls()) == [f"message answer to q{n}" for n in range(3)]
    seen = recorder.requests[before:]
    assert [(r["method"], r["path"]) for r in seen] == [
        ("GET", "/.well-known/agent-card.json"),
        *[("POST", "/rpc")] * 3,
    ]
    assert len({r["client"] for r in seen}) == 1  # one kept-alive connection


@pytest.mark.parametrize("streaming", [True, False])
def test_a_peer_whose_card_streams_is_asked_with_message_stream(streaming: bool) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/rpc"
    recorder = Recorder(peer_app(ScriptedPeer("task"), url, streaming=streaming))
    with serve(recorder, port=port):
        reply = asyncio.run(_send(PeerClient([Peer("geo", url)], timeout=30), "Lyon?", {}))
    # the card, then the answer: an SSE stream of the task's events, or one JSON document
    answer_type = "text/event-stream" if streaming else "application/json"
    assert recorder.media_types == ["application/json", answer_type]
    assert (reply.text, reply.state) == ("done\nartifact answer to Lyon?", "completed")
