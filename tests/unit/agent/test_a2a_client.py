"""The A2A client (langop_infra.agent._a2a_client), in process: ``a2a-sdk``'s own server
pieces behind ``httpx.ASGITransport`` (tests/support/a2a_peers.py), and the folding of a
peer's events into its reply, event by event."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.helpers import new_data_part, new_text_part
from a2a.types import (
    Artifact,
    Message,
    Role,
    StreamResponse,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf.json_format import MessageToJson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from langop_infra.agent._a2a_client import (
    MAX_CARD_BYTES,
    MAX_REPLY_BYTES,
    A2AClientError,
    OriginHeaders,
    PeerClient,
    PeerReply,
    _Answer,
    _origin,
)
from langop_infra.agent._a2a_server import CARD_PATH
from langop_infra.agent._settings import Peer
from tests.support.a2a_peers import ScriptedPeer, peer_app, peer_card

URL = "http://geo.apps:8080/rpc"


class Recording(httpx.AsyncBaseTransport):
    """``httpx.ASGITransport`` over a real app, keeping every request it passed on."""

    def __init__(self, app: Any) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return await self.inner.handle_async_request(request)

    def paths(self) -> list[str]:
        return [request.url.path for request in self.requests]

    def methods(self) -> list[str]:
        return [json.loads(r.content)["method"] for r in self.requests if r.method == "POST"]


def _peer(mode: str = "task", streaming: bool = False) -> tuple[ScriptedPeer, Recording]:
    executor = ScriptedPeer(mode)
    return executor, Recording(peer_app(executor, URL, streaming=streaming))


def _run(
    transport: httpx.AsyncBaseTransport,
    use: Callable[[PeerClient], Awaitable[Any]],
    peers: list[Peer] | None = None,
) -> Any:
    async def run() -> Any:
        chosen = [Peer("geo", URL)] if peers is None else peers
        client = PeerClient(chosen, timeout=30, transport=transport)
        try:
            return await use(client)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_origin_is_scheme_host_and_port_only() -> None:
    assert _origin("http://geo.apps:8080/rpc/x?q=1") == "http://geo.apps:8080"
    assert _origin("https://geo.example/rpc") == "https://geo.example"


def _flow(auth: OriginHeaders, url: str) -> httpx.Headers:
    request = httpx.Request("POST", url)
    return next(auth.auth_flow(request)).headers


def test_a_peers_headers_go_to_its_own_origins_only(tmp_path: Path) -> None:
    auth = OriginHeaders({"X-Key": "k1"}, [URL, "https://cards.example/geo.json"])
    assert _flow(auth, "http://geo.apps:8080/other")["x-key"] == "k1"
    assert _flow(auth, "https://cards.example/x")["x-key"] == "k1"
    assert "x-key" not in _flow(auth, "http://evil.example:8080/rpc")
    assert "x-key" not in _flow(auth, "http://geo.apps:8081/rpc")


def test_the_projected_token_is_read_at_each_request(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("  first\n", encoding="utf-8")
    auth = OriginHeaders({}, [URL], token_file=str(token))
    assert _flow(auth, URL)["authorization"] == "Bearer first"
    token.write_text("second", encoding="utf-8")
    assert _flow(auth, URL)["authorization"] == "Bearer second"
    assert "authorization" not in _flow(auth, "http://other:8080/rpc")
    token.write_text("\n", encoding="utf-8")
    assert "authorization" not in _flow(auth, URL)
    token.unlink()
    assert "authorization" not in _flow(auth, URL)
    assert "authorization" not in _flow(OriginHeaders({}, [URL]), URL)


def test_finished_means_a_message_or_a_completed_task() -> None:
    finished = {s: PeerReply("x", state=s).finished for s in ("", "completed", "failed")}
    assert finished == {"": True, "completed": True, "failed": False}
    assert PeerReply("x", state="input-required").finished is False


def _message(*texts: str, context_id: str = "c1") -> Message:
    parts = [new_text_part(t) for t in texts]
    return Message(role=Role.ROLE_AGENT, message_id="m", parts=parts, context_id=context_id)


def test_a_message_reply_is_its_text_parts_and_data() -> None:
    answer = _Answer()
    message = _message("one", "two")
    message.parts.append(new_data_part({"n": 3}))
    answer.add(StreamResponse(message=message))
    assert answer.reply() == PeerReply("one\ntwo", [{"n": 3}], "c1")


def test_no_event_is_an_empty_reply() -> None:
    assert _Answer().reply() == PeerReply("")


def _status(state: TaskState, *texts: str, task_id: str = "t1") -> StreamResponse:
    status = TaskStatus(state=state, message=_message(*texts))
    update = TaskStatusUpdateEvent(task_id=task_id, context_id="c1", status=status)
    return StreamResponse(status_update=update)


def _artifact(artifact_id: str, text: str, append: bool = False) -> StreamResponse:
    artifact = Artifact(artifact_id=artifact_id, parts=[new_text_part(text)])
    update = TaskArtifactUpdateEvent(
        task_id="t1", context_id="c1", artifact=artifact, append=append
    )
    return StreamResponse(artifact_update=update)


def test_stream_updates_fold_into_the_task() -> None:
    answer = _Answer()
    answer.add(_status(TaskState.TASK_STATE_WORKING, "looking"))
    answer.add(_artifact("a", "Lyon is"))
    answer.add(_artifact("a", " in France", append=True))
    answer.add(_artifact("b", "draft"))
    answer.add(_artifact("b", "final"))
    answer.add(_status(TaskState.TASK_STATE_COMPLETED, "done", ""))
    reply = answer.reply()
    assert reply == PeerReply("done\nLyon is\n in France\nfinal", [], "c1", "t1", "completed")
    assert answer.task is not None
    assert [len(a.parts) for a in answer.task.artifacts] == [2, 1]


def test_an_artifact_before_any_status_starts_the_task() -> None:
    answer = _Answer()
    answer.add(_artifact("a", "early"))
    assert answer.reply() == PeerReply("early", [], "c1", "t1", "unspecified")


def test_a_task_event_is_copied_and_its_state_named_as_a2a_names_it() -> None:
    task = Task(
        id="t9",
        context_id="c9",
        status=TaskStatus(state=TaskState.TASK_STATE_INPUT_REQUIRED, message=_message("Which?")),
    )
    answer = _Answer()
    answer.add(StreamResponse(task=task))
    task.status.state = TaskState.TASK_STATE_FAILED
    assert answer.reply() == PeerReply("Which?", [], "c9", "t9", "input-required")


def test_an_unknown_peer_names_the_known_ones() -> None:
    _, transport = _peer()
    with pytest.raises(A2AClientError) as raised:
        _run(transport, lambda c: c.send("weather", "hi"))
    assert str(raised.value) == "no A2A peer named 'weather'; the peers are: geo"
    two = [Peer("geo", URL), Peer("sea", URL)]
    with pytest.raises(A2AClientError, match=r"the peers are: geo, sea$"):
        _run(transport, lambda c: c.send("weather", "hi"), peers=two)
    with pytest.raises(A2AClientError, match=r"the peers are: none$"):
        _run(transport, lambda c: c.send("geo", "hi"), peers=[])


def test_the_card_is_read_at_the_origin_once_per_peer() -> None:
    executor, transport = _peer("message")

    async def twice(client: PeerClient) -> list[PeerReply]:
        return list(await asyncio.gather(client.send("geo", "a"), client.send("geo", "b")))

    replies = _run(transport, twice)
    assert sorted(r.text for r in replies) == ["message answer to a", "message answer to b"]
    assert transport.paths().count(CARD_PATH) == 1
    assert transport.requests[0].url == httpx.URL("http://geo.apps:8080" + CARD_PATH)
    assert sorted(executor.texts) == ["a", "b"]


def test_a_card_url_given_is_the_one_read() -> None:
    card = peer_card(URL)
    app = Starlette(routes=[Route("/cards/geo.json", lambda _: _card_response(card))])
    transport = Recording(app)
    peer = Peer("geo", URL, card_url="http://cards.apps/cards/geo.json")
    got = _run(transport, lambda c: c.card("geo"), peers=[peer])
    assert got.name == card.name
    assert [str(r.url) for r in transport.requests] == ["http://cards.apps/cards/geo.json"]


def _card_response(card: Any) -> Response:
    return Response(MessageToJson(card), media_type="application/json")


def test_an_unreadable_card_names_the_peer_and_the_url() -> None:
    transport = Recording(Starlette(routes=[]))
    with pytest.raises(A2AClientError) as raised:
        _run(transport, lambda c: c.send("geo", "hi"))
    message = str(raised.value)
    assert message.startswith(f"peer geo: cannot read its card http://geo.apps:8080{CARD_PATH}: ")
    assert "404" in message


def _sized(body: bytes, size: int) -> bytes:
    """``body`` padded with JSON whitespace to exactly ``size`` bytes."""
    assert len(body) <= size
    return body + b" " * (size - len(body))


def _card_of(size: int, streaming: bool = False) -> Starlette:
    body = _sized(MessageToJson(peer_card(URL, streaming=streaming)).encode(), size)
    return Starlette(
        routes=[Route(CARD_PATH, lambda _: Response(body, media_type="application/json"))]
    )


def test_a_card_is_read_up_to_its_cap() -> None:
    card = _run(Recording(_card_of(MAX_CARD_BYTES)), lambda c: c.card("geo"))
    assert card.name == "scripted"
    with pytest.raises(A2AClientError, match=f"over {MAX_CARD_BYTES} bytes"):
        _run(Recording(_card_of(MAX_CARD_BYTES + 1)), lambda c: c.card("geo"))


def _answering(size: int) -> Starlette:
    """A peer whose every JSON-RPC answer is a Message, padded to ``size`` bytes."""

    async def rpc(request: Request) -> Response:
        asked = json.loads(await request.body())
        result = {"message": json.loads(MessageToJson(_message("padded")))}
        answer = {"jsonrpc": "2.0", "id": asked["id"], "result": result}
        return Response(_sized(json.dumps(answer).encode(), size), media_type="application/json")

    app = _card_of(1024)
    app.router.routes.append(Route("/rpc", rpc, methods=["POST"]))
    return app


def test_a_reply_is_read_up_to_its_cap() -> None:
    reply = _run(Recording(_answering(MAX_REPLY_BYTES)), lambda c: c.send("geo", "hi"))
    assert reply.text == "padded"
    with pytest.raises(A2AClientError, match=f"over {MAX_REPLY_BYTES} bytes"):
        _run(Recording(_answering(MAX_REPLY_BYTES + 1)), lambda c: c.send("geo", "hi"))


@pytest.mark.parametrize("streaming", [False, True])
def test_the_card_decides_stream_or_send(streaming: bool) -> None:
    executor, transport = _peer("task", streaming=streaming)
    metadata = {"langop.hops": 2}
    reply = _run(transport, lambda c: c.send("geo", "Lyon?", "ctx-1", metadata))
    assert reply == PeerReply(
        "done\nartifact answer to Lyon?", [], "ctx-1", reply.task_id, "completed"
    )
    assert reply.task_id
    assert transport.methods() == ["SendStreamingMessage" if streaming else "SendMessage"]
    sent = json.loads(transport.requests[-1].content)["params"]
    assert sent["message"]["role"] == "ROLE_USER"
    assert sent["message"]["parts"] == [{"text": "Lyon?"}]
    assert len(sent["message"]["messageId"]) == 32
    assert executor.metadata == [metadata]


def test_a_new_conversation_sends_no_context_id() -> None:
    _, transport = _peer("message")
    _run(transport, lambda c: c.send("geo", "hi"))
    assert "contextId" not in json.loads(transport.requests[-1].content)["params"]["message"]


@pytest.mark.parametrize("streaming", [False, True])
def test_a_failed_send_names_the_peer_and_the_method(streaming: bool) -> None:
    async def refuse(_: Request) -> Response:
        return Response(b"down", status_code=503)

    app = _card_of(1024, streaming)
    app.router.routes.append(Route("/rpc", refuse, methods=["POST"]))
    method = "message/stream" if streaming else "message/send"
    with pytest.raises(A2AClientError, match=f"^peer geo: {method} failed: "):
        _run(Recording(app), lambda c: c.send("geo", "hi"))


def test_the_peers_headers_and_token_reach_its_origins_not_the_cards_url(tmp_path: Path) -> None:
    """The card (the peer's words) names another origin for JSON-RPC: no credential goes there."""
    token = tmp_path / "token"
    token.write_text("projected", encoding="utf-8")
    card = peer_card("http://elsewhere.example:8080/rpc")
    executor = ScriptedPeer("message")
    app = peer_app(executor, URL)
    app.router.routes.insert(0, Route(CARD_PATH, lambda _: _card_response(card)))
    transport = Recording(app)
    peer = Peer("geo", URL, headers={"X-Key": "k1"}, token_file=str(token))
    reply = _run(transport, lambda c: c.send("geo", "hi"), peers=[peer])
    assert reply.text == "message answer to hi"
    card_request, rpc_request = transport.requests
    assert (card_request.headers["x-key"], card_request.headers["authorization"]) == (
        "k1",
        "Bearer projected",
    )
    assert rpc_request.url.host == "elsewhere.example"
    assert "x-key" not in rpc_request.headers and "authorization" not in rpc_request.headers


def test_each_peer_has_its_own_client_with_the_timeout_and_close_forgets_them() -> None:
    _, transport = _peer("message")

    async def use(client: PeerClient) -> tuple[Any, ...]:
        await client.send("geo", "a")
        kept = client._connections["geo"]  # pyright: ignore[reportPrivateUsage]
        timeout, closed_before = kept.http.timeout, kept.http.is_closed
        await client.aclose()
        await client.send("geo", "b")
        return timeout, closed_before, kept.http.is_closed

    timeout, closed_before, closed_after = _run(transport, use)
    assert (timeout, closed_before, closed_after) == (httpx.Timeout(30), False, True)
    assert transport.paths().count(CARD_PATH) == 2
