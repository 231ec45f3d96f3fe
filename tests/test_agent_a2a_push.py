"""A2A push notifications of the built-in runtime, through ``a2a-sdk``'s own client, to a
real webhook receiver on loopback: served only when the card claims them; a webhook given in
``message/send``'s configuration, or registered with ``tasks/pushNotificationConfig/set``
on a task waiting for an approval, receives each of the task's events with the caller's
token; get, list and delete; the configs are bounded; and the production URL check refuses
loopback, link-local and non-http webhooks. The model is the scripted fake of
tests/fake_openai.py, the tools the FAKE registry of tests/test_agent_a2a_tasks.py.

The servers here listen on loopback, which the runtime's URL check refuses (a webhook there
would be the agent's own pod): these tests hand ``a2a_routes`` a check admitting loopback,
and test the production check on its own."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

# isort: off
# First: the package keeps a2a-sdk's gRPC parts out (langop_infra/agent/__init__.py).
import langop_infra.agent  # noqa: F401

# isort: on
import httpx
import pytest
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.server.context import ServerCallContext
from a2a.types import (
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    SendMessageRequest,
    Task,
    TaskPushNotificationConfig,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from langop_infra.agent._a2a_push import (
    MAX_CONFIGS_PER_TASK,
    BoundedPushConfigStore,
    push_url_allowed,
)
from langop_infra.agent._a2a_server import a2a_routes, build_app, minimal_card
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ChatModel
from tests.fake_openai import FakeOpenAI
from tests.support.loopback import free_port, serve
from tests.test_agent_a2a_tasks import GUARD, Tools, request, script, state
from tests.test_agent_approval import answer_to, send


class Webhook:
    """A webhook receiver: keeps each notification (its token, authorization and event)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.changed = threading.Condition()

    def app(self) -> Starlette:
        async def hook(request: Request) -> Response:
            with self.changed:
                self.received.append(
                    {
                        "token": request.headers.get("x-a2a-notification-token"),
                        "authorization": request.headers.get("authorization"),
                        "event": describe(json.loads(await request.body())),
                    }
                )
                self.changed.notify_all()
            return Response(status_code=204)

        return Starlette(routes=[Route("/hook", hook, methods=["POST"])])

    def until_final(self) -> list[dict[str, Any]]:
        """Every notification, once one says the task ended."""
        with self.changed:
            ended = self.changed.wait_for(
                lambda: any(n["event"][-1] in FINAL for n in self.received), GUARD
            )
            assert ended, self.received
            return list(self.received)


FINAL = {"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED"}


def describe(event: dict[str, Any]) -> tuple[str, str]:
    """A pushed StreamResponse as (kind, state): task, status or artifact."""
    if "task" in event:
        return ("task", event["task"]["status"]["state"])
    if "statusUpdate" in event:
        return ("status", event["statusUpdate"]["status"]["state"])
    return ("artifact", "")


async def loopback_allowed(url: str) -> bool:
    """The tests' URL check: the webhook receiver is on loopback (see the module docstring)."""
    return url.startswith("http://127.0.0.1:")


@contextmanager
def webhook() -> Iterator[tuple[Webhook, str]]:
    receiver = Webhook()
    with serve(receiver.app()) as base:
        yield receiver, f"{base}/hook"


@asynccontextmanager
async def agent(
    push: bool = True, approval: bool = False, check: Any = loopback_allowed
) -> AsyncIterator[Client]:
    fake, metrics = FakeOpenAI(script=script), RuntimeMetrics()
    port = free_port()
    card = minimal_card("helper", f"http://127.0.0.1:{port}/")
    card["capabilities"]["pushNotifications"] = push  # a mounted card, as the stack renders
    with serve(fake.app()) as model_url:
        model = ChatModel(model_url, "m", None, 10, metrics)
        needs = {"lookup"} if approval else set()
        loop = AgentLoop(model, Tools(), metrics, require_approval=needs)
        mounted = json.dumps(card).encode()
        routes = a2a_routes(mounted, "/", lambda: loop, "helper", push_url_check=check)
        with serve(build_app(routes), port=port) as base:
            async with httpx.AsyncClient(timeout=GUARD) as http:
                served = (await http.get(f"{base}/.well-known/agent-card.json")).json()
                config = ClientConfig(streaming=False, httpx_client=http)
                yield ClientFactory(config).create(parse_agent_card(served))


def with_webhook(message: SendMessageRequest, url: str, token: str) -> SendMessageRequest:
    config = message.configuration.task_push_notification_config
    config.url, config.token = url, token
    config.authentication.scheme, config.authentication.credentials = "Bearer", "hook-secret"
    return message


def test_a_webhook_in_message_send_gets_every_event_of_the_task_with_its_token() -> None:
    with webhook() as (receiver, url):

        async def run() -> Task:
            async with agent() as client:
                return await send(client, with_webhook(request("lookup"), url, "tok-1"))

        task = asyncio.run(run())
        received = receiver.until_final()
    assert state(task) == "TASK_STATE_COMPLETED"
    assert [n["event"] for n in received] == [
        ("task", "TASK_STATE_SUBMITTED"),
        ("status", "TASK_STATE_WORKING"),
        ("status", "TASK_STATE_WORKING"),
        ("artifact", ""),
        ("status", "TASK_STATE_COMPLETED"),
    ]
    assert {(n["token"], n["authorization"]) for n in received} == {("tok-1", "Bearer hook-secret")}


def test_a_webhook_set_on_a_waiting_task_gets_the_rest_and_can_be_read_and_deleted() -> None:
    with webhook() as (receiver, url):

        async def run() -> tuple[Any, ...]:
            async with agent(approval=True) as client:
                asked = await send(client, request("lookup"))
                config = TaskPushNotificationConfig(task_id=asked.id, url=url, token="tok-2")
                created = await client.create_task_push_notification_config(config)
                got = await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=asked.id, id=created.id)
                )
                done = await send(client, answer_to(asked, "yes"))
                listed = await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=asked.id)
                )
                await client.delete_task_push_notification_config(
                    DeleteTaskPushNotificationConfigRequest(task_id=asked.id, id=created.id)
                )
                after = await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=asked.id)
                )
                return asked, created, got, done, listed, after

        asked, created, got, done, listed, after = asyncio.run(run())
        received = receiver.until_final()
    assert state(asked) == "TASK_STATE_INPUT_REQUIRED"
    assert (created.task_id, created.url, created.token, got.url) == (asked.id, url, "tok-2", url)
    assert state(done) == "TASK_STATE_COMPLETED"
    assert [c.url for c in listed.configs] == [url] and list(after.configs) == []
    # registered while the task waited: what came after the approval
    assert [n["event"] for n in received] == [
        ("status", "TASK_STATE_WORKING"),
        ("artifact", ""),
        ("status", "TASK_STATE_COMPLETED"),
    ]
    assert {n["token"] for n in received} == {"tok-2"}


def test_push_is_refused_where_the_card_does_not_claim_it() -> None:
    async def run() -> str:
        async with agent(push=False) as client:
            task = await send(client, request("lookup"))
            config = TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/hook")
            with pytest.raises(Exception) as refused:
                await client.create_task_push_notification_config(config)
            return f"{type(refused.value).__name__}: {refused.value}"

    assert asyncio.run(run()).startswith("PushNotificationNotSupportedError")


def test_the_runtime_refuses_a_webhook_its_url_check_refuses() -> None:
    async def run() -> str:
        async with agent(check=push_url_allowed) as client:
            task = await send(client, request("lookup"))
            config = TaskPushNotificationConfig(task_id=task.id, url="http://127.0.0.1:9/hook")
            with pytest.raises(Exception) as refused:
                await client.create_task_push_notification_config(config)
            return f"{type(refused.value).__name__}: {refused.value}"

    assert asyncio.run(run()) == "InvalidParamsError: Invalid push notification URL"


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://127.0.0.1:8080/hook", False),  # the agent's own pod
        ("http://localhost/hook", False),
        ("http://[::1]/hook", False),
        ("http://169.254.169.254/latest/meta-data", False),  # the cloud metadata service
        ("http://[::ffff:127.0.0.1]/hook", False),
        ("http://0.0.0.0/hook", False),
        ("http://224.0.0.1/hook", False),
        ("ftp://10.0.0.5/hook", False),
        ("http:///hook", False),
        ("http://10.0.0.5:8080/hook", True),  # in the cluster: the egress policy decides
        ("https://8.8.8.8/hook", True),
    ],
)
def test_the_production_url_check(url: str, allowed: bool) -> None:
    assert asyncio.run(push_url_allowed(url)) is allowed


def test_the_config_store_is_bounded() -> None:
    async def run() -> tuple[list[int], str]:
        store, context = BoundedPushConfigStore(max_tasks=2), ServerCallContext()
        for n in range(3):
            await store.set_info(f"t{n}", TaskPushNotificationConfig(url="http://h/"), context)
        kept = [len(await store.get_info(f"t{n}", context)) for n in range(3)]
        for n in range(MAX_CONFIGS_PER_TASK - 1):
            config = TaskPushNotificationConfig(id=f"c{n}", url="http://h/")
            await store.set_info("t2", config, context)
        with pytest.raises(Exception) as refused:
            await store.set_info("t2", TaskPushNotificationConfig(id="one-more"), context)
        return kept, str(refused.value)

    kept, refused = asyncio.run(run())
    assert kept == [0, 1, 1]
    assert refused == (
        f"task t2 has {MAX_CONFIGS_PER_TASK} push notification configs, the most it keeps: "
        "delete one first"
    )
