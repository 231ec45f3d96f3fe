"""The agent's HTTP face (langop_infra.agent._a2a_server), in process: our routes and
middleware behind ``httpx.ASGITransport``, asked by ``a2a-sdk``'s own client; the loop is a
recorder that answers at once (the loop itself has tests of its own)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
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
from a2a.helpers import get_text_parts, new_text_part
from a2a.types import (
    Message,
    Role,
    SendMessageRequest,
    TaskPushNotificationConfig,
)
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from langop_infra.agent import _a2a_server as server, _turn_context as turn_context
from langop_infra.agent._a2a_server import (
    CARD_PATH,
    a2a_routes,
    build_app,
    minimal_card,
    read_card,
    service_routes,
)
from langop_infra.agent._inbound_auth import load_callers
from langop_infra.agent._loop import AgentLoop, TurnOutcome
from langop_infra.agent._metrics import RuntimeMetrics
from tests.support.loopback import serve

BASE = "http://agent.apps:8080"
TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}


class Recorder:
    """Stands in for the agent loop: answers ``echo <text>`` and records each turn's text,
    conversation and the turn context its tools would see."""

    def __init__(self) -> None:
        self.turns: list[tuple[str, str, str, int]] = []

    async def run(self, text: str, conversation: str, *_: Any) -> TurnOutcome:
        seen = (text, conversation, turn_context.conversation(), turn_context.hops())
        self.turns.append(seen)
        return TurnOutcome(f"echo {text}", conversation)


def _routes(recorder: Recorder, card: bytes | None = None, **kwargs: Any) -> list[BaseRoute]:
    loop = cast("Callable[[], AgentLoop]", lambda: recorder)
    return a2a_routes(card, "/rpc", loop, "helper", **kwargs)


@asynccontextmanager
async def _http(app: Any, token: str = "") -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=headers) as http:
        yield http


@asynccontextmanager
async def _client(app: Any, token: str = "") -> AsyncIterator[Client]:
    async with _http(app, token) as http:
        card = parse_agent_card((await http.get(CARD_PATH)).json())
        yield ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)


def _request(text: str, context_id: str = "", metadata: dict[str, Any] | None = None) -> Any:
    message = Message(role=Role.ROLE_USER, message_id=f"m-{text}", parts=[new_text_part(text)])
    message.context_id = context_id
    return SendMessageRequest(message=message, metadata=metadata or {})


async def _ask(client: Client, text: str, context_id: str = "", **metadata: Any) -> str:
    """The answer's text, or the error's message."""
    try:
        (event,) = [e async for e in client.send_message(_request(text, context_id, metadata))]
    except Exception as exc:  # a2a-sdk's client errors have no common base
        return f"error: {exc}"
    return " ".join(get_text_parts(event.task.artifacts[0].parts))


def _authenticated(recorder: Recorder) -> Any:
    env = {f"A2A_CALLER_{n.upper()}_TOKEN": t for n, t in TOKENS.items()}
    return build_app(_routes(recorder), callers=load_callers(env))


def test_a_context_belongs_to_the_caller_who_used_it_first() -> None:
    recorder = Recorder()
    app = _authenticated(recorder)

    async def run() -> list[str]:
        async with _client(app, TOKENS["alice"]) as alice, _client(app, TOKENS["bob"]) as bob:
            return [
                await _ask(alice, "one", "c1"),
                await _ask(bob, "two", "c1"),
                await _ask(bob, "three", "c2"),
                await _ask(alice, "four", "c1"),
            ]

    answers = asyncio.run(run())
    assert answers[0] == answers[3].replace("four", "one") == "echo one"
    refusal = (
        "this contextId belongs to another caller: start a new conversation (send no contextId)"
    )
    assert answers[1].startswith("error: ") and refusal in answers[1]
    assert answers[2] == "echo three"
    assert recorder.turns == [
        ("one", "alice/c1", "alice/c1", 0),
        ("three", "bob/c2", "bob/c2", 0),
        ("four", "alice/c1", "alice/c1", 0),
    ]


def test_an_anonymous_callers_conversation_is_its_context_and_hops_come_from_metadata() -> None:
    recorder = Recorder()
    app = build_app(_routes(recorder))

    async def run() -> str:
        async with _client(app) as client:
            return await _ask(client, "hi", "c9", **{turn_context.HOPS_KEY: 2})

    assert asyncio.run(run()) == "echo hi"
    assert recorder.turns == [("hi", "c9", "c9", 2)]


def test_the_oldest_owner_is_forgotten_past_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "MAX_OWNED_CONTEXTS", 2)
    recorder = Recorder()
    app = _authenticated(recorder)

    async def run() -> list[str]:
        async with _client(app, TOKENS["alice"]) as alice, _client(app, TOKENS["bob"]) as bob:
            for context in ("c1", "c2", "c1", "c3"):  # c1 used again: c2 is the oldest
                await _ask(alice, "x", context)
            return [await _ask(bob, "y", "c1"), await _ask(bob, "y", "c2")]

    taken, freed = asyncio.run(run())
    assert "belongs to another caller" in taken
    assert freed == "echo y"
    assert recorder.turns[-1] == ("y", "bob/c2", "bob/c2", 0)


def test_the_mounted_card_is_served_byte_for_byte() -> None:
    card = json.dumps(minimal_card("mounted", f"{BASE}/rpc"), indent=3).encode() + b"\n"

    async def run() -> httpx.Response:
        async with _http(build_app(_routes(Recorder(), card))) as http:
            return await http.get(CARD_PATH)

    response = asyncio.run(run())
    assert (response.content, response.headers["content-type"]) == (card, "application/json")


def test_without_a_mounted_card_the_minimal_one_names_where_it_was_reached() -> None:
    async def run() -> Any:
        async with _http(build_app(_routes(Recorder()))) as http:
            return (await http.get(CARD_PATH)).json()

    assert asyncio.run(run()) == minimal_card("helper", f"{BASE}/rpc")


def test_read_card_returns_the_bytes_of_a_card_a2a_can_read(tmp_path: Path) -> None:
    good = tmp_path / "card.json"
    good.write_bytes(json.dumps(minimal_card("a", "http://a/")).encode())
    assert read_card(good) == good.read_bytes()
    listed = tmp_path / "list.json"
    listed.write_text("[1]", encoding="utf-8")
    not_object = r"list\.json: the agent card is not a JSON object; correct it \(A2A_AGENT_CARD, "
    with pytest.raises(ValueError, match=not_object):
        read_card(listed)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"name": 5}', encoding="utf-8")
    unreadable = r"wrong\.json: not an agent card a2a-sdk can read \(.*name.*\); correct it \("
    with pytest.raises(ValueError, match=unreadable):
        read_card(wrong)


def _push_config(task_id: str) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(task_id=task_id, url="https://hooks.example/a2a", id="p1")


@pytest.mark.parametrize("claimed", [False, True])
def test_push_notifications_are_served_only_when_the_card_claims_them(claimed: bool) -> None:
    document = minimal_card("helper", f"{BASE}/rpc")
    document["capabilities"]["pushNotifications"] = claimed
    checked: list[str] = []

    async def allow(url: str) -> bool:
        checked.append(url)
        return True

    routes = _routes(Recorder(), json.dumps(document).encode(), push_url_check=allow)

    async def run() -> str:
        async with _client(build_app(routes)) as client:
            (event,) = [e async for e in client.send_message(_request("hi"))]
            try:
                await client.create_task_push_notification_config(_push_config(event.task.id))
            except Exception as exc:  # a2a-sdk's client errors have no common base
                return type(exc).__name__
            return "stored"

    outcome = asyncio.run(run())
    if claimed:
        assert outcome == "stored"
        assert checked == ["https://hooks.example/a2a"]
    else:
        assert (outcome, checked) == ("PushNotificationNotSupportedError", [])


def _service(not_ready: list[str]) -> Any:
    metrics = RuntimeMetrics()
    metrics.tool_invocations.labels(tool="lookup").inc()
    return build_app(service_routes(lambda: metrics, lambda: not_ready))


def _get(app: Any, path: str, method: str = "GET", body: bytes = b"") -> httpx.Response:
    async def run() -> httpx.Response:
        async with _http(app) as http:
            return await http.request(method, path, content=body)

    return asyncio.run(run())


def test_health_readiness_and_metrics() -> None:
    assert _get(_service([]), "/healthz").json() == {"status": "ok"}
    ready = _get(_service([]), "/readyz")
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})
    waiting = _get(_service(["search", "db"]), "/readyz")
    assert (waiting.status_code, waiting.json()) == (
        503,
        {"status": "not ready", "waiting_for": ["search", "db"]},
    )
    metrics = _get(_service([]), "/metrics")
    assert metrics.headers["content-type"] == CONTENT_TYPE_LATEST
    assert 'langop_agent_tool_invocations_total{tool="lookup"} 1.0' in metrics.text
    assert _get(_service([]), "/healthz", method="POST").status_code == 405


def test_a_body_past_the_cap_is_refused_before_the_route_reads_it() -> None:
    recorder = Recorder()
    app = build_app(_routes(recorder), max_request_bytes=1024)
    assert _get(app, "/rpc", "POST", b"{" + b" " * 1024 + b"}").status_code == 413
    assert _get(app, "/rpc", "POST", b"{" + b" " * 1000 + b"}").status_code == 200
    assert recorder.turns == []


def test_with_callers_only_the_public_paths_answer_without_a_token() -> None:
    env = {"A2A_CALLER_ALICE_TOKEN": TOKENS["alice"]}
    routes = [*_routes(Recorder()), *service_routes(RuntimeMetrics, list)]
    app = build_app(routes, callers=load_callers(env), public=frozenset({("GET", "/healthz")}))
    assert _get(app, "/healthz").status_code == 200
    assert _get(app, "/readyz").status_code == 401
    assert _get(app, CARD_PATH).status_code == 401
    open_app = build_app(routes)
    assert _get(open_app, "/readyz").status_code == 200


def test_the_minimal_card_as_served() -> None:
    """What an A2A client reads from an agent with no mounted card (A2A 1.0 and 0.3 views)."""
    assert minimal_card("helper", "http://h/rpc") == {
        "name": "helper",
        "description": "The helper agent (langop-infra's built-in runtime)",
        "supportedInterfaces": [
            {"url": "http://h/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "url": "http://h/rpc",
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
        "version": "1",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [
            {
                "id": "answer",
                "name": "Answer",
                "description": "Answers a question, using the agent's tools",
                "tags": ["general"],
            }
        ],
    }


def test_an_agent_not_named_is_called_agent() -> None:
    loop = cast("Callable[[], AgentLoop]", Recorder)
    app = build_app(a2a_routes(None, "/rpc", loop))
    assert _get(app, CARD_PATH).json()["name"] == "agent"


def test_a2a_0_3_clients_are_answered_too() -> None:
    """A 0.3 ``message/send`` (no ``A2A-Version`` header, 0.3's ``kind`` parts) runs a turn."""
    recorder = Recorder()
    message = {
        "role": "user",
        "messageId": "m-1",
        "parts": [{"kind": "text", "text": "hi"}],
        "kind": "message",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    reply = _get(build_app(_routes(recorder)), "/rpc", "POST", json.dumps(body).encode()).json()
    assert reply["result"]["kind"] == "task"
    assert reply["result"]["artifacts"][0]["parts"][0]["text"] == "echo hi"
    assert [turn[0] for turn in recorder.turns] == ["hi"]


def test_a_caller_without_a_token_is_refused_before_its_body_is_measured() -> None:
    env = {"A2A_CALLER_ALICE_TOKEN": TOKENS["alice"]}
    app = build_app(_routes(Recorder()), max_request_bytes=16, callers=load_callers(env))
    assert _get(app, "/rpc", "POST", b"{" + b" " * 64 + b"}").status_code == 401


def test_the_lifespan_given_runs() -> None:
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        events.append("started")
        yield
        events.append("stopped")

    app = build_app([], lifespan=lifespan)
    asyncio.run(_lifespan(app))
    assert events == ["started", "stopped"]


async def _lifespan(app: Any) -> None:
    """The ASGI lifespan protocol, as a server runs it: start up, then shut down."""
    asked = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    answered: list[str] = []

    async def receive() -> dict[str, str]:
        return next(asked)

    async def send(message: dict[str, str]) -> None:
        answered.append(message["type"])

    await app({"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}, receive, send)
    assert answered == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


def test_a_claimed_push_is_sent_to_the_webhook_the_check_admits() -> None:
    received: list[Any] = []
    delivered = threading.Event()

    async def hook(request: Request) -> Response:
        received.append(json.loads(await request.body()))
        delivered.set()
        return Response(status_code=204)

    checked: list[str] = []

    async def admit(url: str) -> bool:
        checked.append(url)
        return True

    document = minimal_card("helper", f"{BASE}/rpc")
    document["capabilities"]["pushNotifications"] = True
    routes = _routes(Recorder(), json.dumps(document).encode(), push_url_check=admit)
    with serve(Starlette(routes=[Route("/hook", hook, methods=["POST"])])) as webhook:

        async def run() -> str:
            async with _client(build_app(routes)) as client:
                request = _request("hi")
                request.configuration.task_push_notification_config.url = f"{webhook}/hook"
                (event,) = [e async for e in client.send_message(request)]
                return event.task.id

        task_id = asyncio.run(run())
        assert delivered.wait(30)  # the bound ends a hung run only
    # checked when registered, and again before each notification is sent
    assert len(checked) >= 2 and set(checked) == {f"{webhook}/hook"}
    assert task_id in json.dumps(received[0])
