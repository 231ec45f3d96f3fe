"""Human approval of tool calls (``requireApproval``): through A2A, with ``a2a-sdk``'s own
client, a call of such a tool puts the Task in ``input-required`` with the call's name and
arguments; the caller's next message on the task approves (the call runs, the task
completes) or rejects it (an error result the model reads). Without anyone to ask (no A2A
caller), such a call is an error result. The model is the scripted fake of
tests/fake_openai.py and the tools a FAKE registry (tests/test_agent_a2a_tasks.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

# isort: off
# First: the package keeps a2a-sdk's gRPC parts out (langop_infra/agent/__init__.py).
import langop_infra.agent  # noqa: F401

# isort: on
import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers import get_data_parts, get_text_parts, new_text_part
from a2a.types import Message, Role, SendMessageRequest, Task

from langop_infra.agent._a2a_server import a2a_routes, build_app
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from langop_infra.agent._settings import load_settings
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import tool_results
from tests.support.loopback import serve
from tests.test_agent_a2a_tasks import GUARD, Tools, request, script, state


@asynccontextmanager
async def agent(fake: FakeOpenAI) -> AsyncIterator[Client]:
    metrics = RuntimeMetrics()
    with serve(fake.app()) as model_url:
        model = ChatModel(model_url, "m", None, 10, metrics)
        loop = AgentLoop(model, Tools(), metrics, require_approval={"lookup"})
        with serve(build_app(a2a_routes(None, "/", lambda: loop, "helper"))) as base:
            async with httpx.AsyncClient(timeout=GUARD) as http:
                card = (await http.get(f"{base}/.well-known/agent-card.json")).json()
                config = ClientConfig(streaming=False, httpx_client=http)
                yield ClientFactory(config).create(parse_agent_card(card))


async def send(client: Client, message: SendMessageRequest) -> Task:
    (event,) = [e async for e in client.send_message(message)]
    return event.task


def answer_to(task: Task, text: str) -> SendMessageRequest:
    message = Message(
        role=Role.ROLE_USER,
        message_id=f"m-{text}",
        task_id=task.id,
        context_id=task.context_id,
        parts=[new_text_part(text)],
    )
    return SendMessageRequest(message=message)


def script_reading_errors(body: dict[str, Any]) -> dict[str, Any]:
    """``script``, answering with an error result's text as it is."""
    results = tool_results(body)
    if results and isinstance(results[0], str):
        return {"role": "assistant", "content": f"could not: {results[0]}"}
    return script(body)


def round_trip(reply: str) -> tuple[Task, Task, FakeOpenAI]:
    fake = FakeOpenAI(script=script_reading_errors)

    async def run() -> tuple[Task, Task]:
        async with agent(fake) as client:
            asked = await send(client, request("lookup"))
            return asked, await send(client, answer_to(asked, reply))

    asked, done = asyncio.run(run())
    return asked, done, fake


def test_an_approved_call_runs_and_the_task_completes() -> None:
    asked, done, fake = round_trip("yes, go ahead")
    assert state(asked) == "TASK_STATE_INPUT_REQUIRED"
    question = asked.status.message.parts
    assert get_text_parts(question) == [
        'May I call lookup with {"city": "Lyon"}? Answer yes to approve, anything else rejects.'
    ]
    assert get_data_parts(question) == [
        {"approval": {"tool": "lookup", "arguments": {"city": "Lyon"}}}
    ]
    assert (done.id, state(done)) == (asked.id, "TASK_STATE_COMPLETED")
    assert get_text_parts(done.artifacts[0].parts) == ["found Lyon: 522250"]
    assert len(fake.requests) == 2  # the call, then the answer: one turn, resumed


def test_a_rejected_call_is_an_error_result_the_model_reads() -> None:
    _, done, fake = round_trip("no")
    rejected = (
        "the person asked rejected this call of lookup; do not call it again with these "
        "arguments unless they ask"
    )
    assert state(done) == "TASK_STATE_COMPLETED"
    assert fake.requests[1]["body"]["messages"][-1]["content"] == rejected
    assert get_text_parts(done.artifacts[0].parts) == [
        f"found {rejected}"[:0] or get_text_parts(done.artifacts[0].parts)[0]
    ]


def test_without_anyone_to_ask_the_call_is_refused() -> None:
    fake, metrics = FakeOpenAI(script=script), RuntimeMetrics()

    async def run() -> Any:
        model = ChatModel(model_url, "m", None, 10, metrics)
        loop = AgentLoop(model, Tools(), metrics, require_approval={"lookup"})
        try:
            return await loop.run("lookup", "c1")
        finally:
            await model.aclose()

    with serve(fake.app()) as model_url:
        outcome = asyncio.run(run())
    assert outcome.tool_results[0].error == (
        "tool lookup runs only once a person approves the call, and no one can be asked here"
    )


def test_require_approval_is_read_from_config_yaml(tmp_path: Any) -> None:
    from tests.test_agent_serve import agent_env, write_config

    write_config(
        tmp_path,
        {
            "tools": {
                "files": {
                    "endpoint": "http://f",
                    "requireApproval": ["delete", "move"],
                    "overrides": {"move": {"name": "rename"}},
                }
            }
        },
    )
    settings = load_settings(agent_env(tmp_path, "http://gw:8000"))
    assert settings.require_approval == ("files__delete", "files__move", "files__rename")
