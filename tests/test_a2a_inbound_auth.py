"""Who may drive the built-in agent over A2A (issue 49 §1): authenticated callers only by
default, a bearer token per caller compared with every caller's, 401 with
``WWW-Authenticate`` and no turn for anyone else, open access only when asked for by name.

Before: ``message/send`` needed no credential; 5,000 unauthenticated requests were each a
turn that could call every tool.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from langop_infra.agent._a2a_server import CARD_PATH, a2a_routes, build_app
from langop_infra.agent._inbound_auth import Callers, load_callers
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ModelReply
from tests.support.loopback import serve

PLANNER = "planner-token-0123456789abcdef"
AUDITOR = "auditor-token-fedcba9876543210"
ENV = {"A2A_CALLER_PLANNER_TOKEN": PLANNER, "A2A_CALLER_AUDIT_BOT_TOKEN": f" {AUDITOR}\n"}


class CountingModel:
    def __init__(self) -> None:
        self.turns = 0

    async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
        self.turns += 1
        return ModelReply("hi", (), {"role": "assistant", "content": "hi"})


class NoTools:
    def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
        return [], {}

    async def call_tool(self, name: str, arguments: Any = None) -> Any:
        raise AssertionError("no tool is called")


def send(text: str = "hi") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "message": {"role": "user", "messageId": "m", "parts": [{"kind": "text", "text": text}]}
        },
    }


def answer_of(reply: dict[str, Any]) -> tuple[str, str]:
    """The Task's state and the text of its answer artifact."""
    task = reply["result"]
    assert task["kind"] == "task"
    (artifact,) = task["artifacts"]
    return task["status"]["state"], artifact["parts"][0]["text"]


def agent(callers: Callers) -> tuple[Any, CountingModel]:
    model = CountingModel()
    loop = AgentLoop(model, NoTools(), RuntimeMetrics())
    routes = a2a_routes(None, "/", lambda: loop, "helper")
    return build_app(routes, callers=callers, public=frozenset({("GET", CARD_PATH)})), model


def test_only_callers_with_their_token_get_a_turn() -> None:
    app, model = agent(load_callers(ENV))
    with serve(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        anonymous = [client.post("/", json=send()) for _ in range(200)]
        wrong = client.post("/", json=send(), headers={"Authorization": f"Bearer {PLANNER}x"})
        prefix = client.post("/", json=send(), headers={"Authorization": f"Bearer {PLANNER[:-1]}"})
        basic = client.post("/", json=send(), headers={"Authorization": f"Basic {PLANNER}"})
        turns_refused = model.turns
        card = client.get(CARD_PATH)
        planner = client.post("/", json=send(), headers={"Authorization": f"Bearer {PLANNER}"})
        auditor = client.post("/", json=send(), headers={"authorization": f"bearer {AUDITOR}"})
    assert [r.status_code for r in anonymous] == [401] * 200
    assert {r.headers["www-authenticate"] for r in anonymous} == {'Bearer realm="a2a"'}
    assert anonymous[0].json() == {
        "error": "this agent answers authenticated callers only: send Authorization: "
        "Bearer <your caller token>"
    }
    for refused in (wrong, prefix, basic):
        assert refused.status_code == 401
        assert refused.headers["www-authenticate"] == 'Bearer realm="a2a", error="invalid_token"'
    assert turns_refused == 0  # 203 requests refused, not one turn
    assert card.status_code == 200 and card.json()["name"] == "helper"
    assert planner.status_code == 200 and auditor.status_code == 200
    for admitted in (planner, auditor):  # message/send answers with a Task holding the answer
        assert answer_of(admitted.json()) == ("completed", "hi")
    assert model.turns == 2


def test_each_token_names_its_caller_and_no_other() -> None:
    callers = load_callers(ENV)
    assert callers.caller(PLANNER) == "planner"
    assert callers.caller(AUDITOR) == "audit-bot"
    assert callers.caller(PLANNER + AUDITOR) is None
    assert callers.caller("") is None
    assert PLANNER not in repr(callers) and "digests" not in repr(callers)


def test_the_caller_rides_on_to_the_app() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        # Starlette's user and credentials: what a2a-sdk hands the executor as the caller
        assert scope["user"].is_authenticated and scope["auth"].scopes == ["a2a"]
        seen.append(scope["user"].display_name)
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    from langop_infra.agent._inbound_auth import BearerAuth

    async def nothing() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def drop(_message: Any) -> None:
        pass

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/",
        "headers": [(b"authorization", f"Bearer {AUDITOR}".encode())],
    }
    asyncio.run(BearerAuth(app, load_callers(ENV))(scope, nothing, drop))
    assert seen == ["audit-bot"]


def test_open_access_is_asked_for_by_name() -> None:
    app, model = agent(load_callers({"A2A_ACCESS": "open"}))
    with serve(app) as url:
        answered = httpx.post(f"{url}/", json=send(), timeout=30)
    assert answered.status_code == 200 and model.turns == 1
    assert answer_of(answered.json()) == ("completed", "hi")
    assert load_callers({}).access == "authenticated"


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"A2A_ACCESS": "public"}, "A2A_ACCESS='public': use authenticated (callers with tokens)"),
        (
            {"A2A_CALLER_X_TOKEN": "short"},
            "A2A_CALLER_X_TOKEN: a caller's token needs at least 16 characters",
        ),
    ],
)
def test_bad_access_settings_name_the_variable(env: dict[str, str], said: str) -> None:
    with pytest.raises(ValueError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        load_callers(env)
