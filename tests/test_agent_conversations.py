"""A ``contextId`` belongs to the caller that used it first: another caller's message in it
is refused with a JSON-RPC error and never runs a turn, and each caller's conversation keeps
its own history. The callers are told apart by the runtime's own inbound authentication
(``BearerAuth`` with two callers' tokens, as the pod's env gives them); the model is the
scripted fake of tests/fake_openai.py."""

from __future__ import annotations

from typing import Any

import httpx
from starlette.applications import Starlette

from langop_infra.agent._a2a_server import a2a_routes
from langop_infra.agent._inbound_auth import BearerAuth, load_callers
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import serve

TOKENS = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
ENV = {f"A2A_CALLER_{name.upper()}_TOKEN": token for name, token in TOKENS.items()}


class NoTools:
    def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
        return [], {}

    async def call_tool(self, name: str, arguments: Any = None) -> Any:
        raise AssertionError("no tool is called")


def send(base: str, caller: str | None, context_id: str, text: str) -> httpx.Response:
    message = {
        "role": "user",
        "messageId": f"m-{text}",
        "contextId": context_id,
        "parts": [{"kind": "text", "text": text}],
    }
    headers = {"authorization": f"Bearer {TOKENS[caller]}"} if caller else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": message}}
    return httpx.post(f"{base}/", json=body, headers=headers, timeout=30)


def answer(reply: httpx.Response) -> str:
    """The text of the completed Task's artifact."""
    result = reply.json()["result"]
    assert result["status"]["state"] == "completed", result
    return result["artifacts"][0]["parts"][0]["text"]


def test_a_context_id_belongs_to_the_caller_that_made_it() -> None:
    fake, metrics = FakeOpenAI(), RuntimeMetrics()
    with serve(fake.app()) as model_url:
        loop = AgentLoop(ChatModel(model_url, "m", None, 10, metrics), NoTools(), metrics)
        app = Starlette(routes=a2a_routes(None, "/", lambda: loop, "helper"))
        with serve(BearerAuth(app, load_callers(ENV))) as base:
            first = send(base, "alice", "c-1", "alice's secret plan")
            bob = send(base, "bob", "c-1", "what did alice say?")
            anonymous = send(base, None, "c-1", "and to me?")
            again = send(base, "alice", "c-1", "go on")
            own = send(base, "bob", "c-2", "my own")
    assert answer(first) == "hello from m"
    assert bob.json()["error"]["message"] == (
        "this contextId belongs to another caller: start a new conversation (send no contextId)"
    )
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    assert (answer(again), answer(own)) == ("hello from m", "hello from m")
    asked = [[m["content"] for m in r["body"]["messages"][1:]] for r in fake.requests]
    assert asked == [
        ["alice's secret plan"],
        ["alice's secret plan", "hello from m", "go on"],
        ["my own"],
    ]
