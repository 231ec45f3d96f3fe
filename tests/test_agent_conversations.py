"""A ``contextId`` belongs to the caller that used it first: another caller's message in it
is refused with a JSON-RPC error and never runs a turn, and each caller's conversation keeps
its own history. The callers are told apart by Starlette's authentication middleware with a
FAKE backend (a header names the caller), a stand-in for the runtime's inbound
authentication; the model is the scripted fake of tests/fake_openai.py."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.authentication import AuthCredentials, AuthenticationBackend, SimpleUser
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection

from langop_infra.agent._a2a_server import a2a_routes
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import serve


class HeaderCaller(AuthenticationBackend):
    """FAKE authentication: ``X-Caller`` names the caller; without it, anonymous."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, SimpleUser] | None:
        name = conn.headers.get("x-caller")
        return (AuthCredentials(["a2a"]), SimpleUser(name)) if name else None


class NoTools:
    def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
        return [], {}

    async def call_tool(self, name: str, arguments: Any = None) -> Any:
        raise AssertionError("no tool is called")


def send(base: str, caller: str | None, context_id: str, text: str) -> dict[str, Any]:
    message = {
        "role": "user",
        "messageId": f"m-{text}",
        "contextId": context_id,
        "parts": [{"kind": "text", "text": text}],
    }
    headers = {"x-caller": caller} if caller else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    return httpx.post(f"{base}/", json=body, headers=headers, timeout=30).json()


def answer(reply: dict[str, Any]) -> str:
    """The text of the completed Task's artifact."""
    assert reply["result"]["status"]["state"] == "completed", reply
    return reply["result"]["artifacts"][0]["parts"][0]["text"]


def test_a_context_id_belongs_to_the_caller_that_made_it() -> None:
    fake, metrics = FakeOpenAI(), RuntimeMetrics()
    with serve(fake.app()) as model_url:
        loop = AgentLoop(ChatModel(model_url, "m", None, 10, metrics), NoTools(), metrics)
        app = Starlette(
            routes=a2a_routes(None, "/", lambda: loop, "helper"),
            middleware=[Middleware(AuthenticationMiddleware, backend=HeaderCaller())],
        )
        with serve(app) as base:
            first = send(base, "alice", "c-1", "alice's secret plan")
            bob = send(base, "bob", "c-1", "what did alice say?")
            anonymous = send(base, None, "c-1", "and to me?")
            again = send(base, "alice", "c-1", "go on")
            own = send(base, "bob", "c-2", "my own")
    assert answer(first) == "hello from m"
    for refused in (bob, anonymous):
        assert refused["error"]["message"] == (
            "this contextId belongs to another caller: start a new conversation (send no contextId)"
        )
    assert (answer(again), answer(own)) == ("hello from m", "hello from m")
    asked = [[m["content"] for m in r["body"]["messages"][1:]] for r in fake.requests]
    assert asked == [
        ["alice's secret plan"],
        ["alice's secret plan", "hello from m", "go on"],
        ["my own"],
    ]
