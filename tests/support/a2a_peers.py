"""Peers for the A2A client's tests: ``a2a-sdk``'s own server pieces (request handler,
JSON-RPC and card routes) with an executor that answers as a peer of ours might: a Task
whose answer is an artifact, a plain Message, a Task left ``input-required``, a Task that
failed. Each records the request metadata it was sent."""

from __future__ import annotations

from typing import Any

# isort: off
# First: the package keeps a2a-sdk's gRPC parts out, whose protobuf symbols clash with
# Pulumi's in one process (langop_infra/agent/__init__.py says why).
import langop_infra.agent  # noqa: F401

# isort: on
from a2a.helpers import new_task_from_user_message, new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Role,
)
from starlette.applications import Starlette


class ScriptedPeer(AgentExecutor):
    """Answers every message the way ``mode`` says: ``task`` (completed, the answer an
    artifact), ``message``, ``input-required`` or ``failed``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.metadata: list[dict[str, Any]] = []
        self.texts: list[str] = []

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.metadata.append(context.metadata)
        asked = context.get_user_input()
        self.texts.append(asked)
        if self.mode == "message":
            answer = new_text_message(f"message answer to {asked}", context_id=context.context_id)
            await event_queue.enqueue_event(answer)
            return
        assert context.message is not None
        task = new_task_from_user_message(context.message)
        await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if self.mode == "task":
            await updater.add_artifact([new_text_part(f"artifact answer to {asked}")], name="a")
            await updater.complete(_agent("done"))
        elif self.mode == "input-required":
            await updater.requires_input(_agent("Which city do you mean?"))
        else:
            await updater.failed(_agent("the database is down"))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        raise NotImplementedError


def _agent(text: str) -> Message:
    return Message(role=Role.ROLE_AGENT, message_id=f"m-{text[:8]}", parts=[new_text_part(text)])


def peer_card(url: str, name: str = "scripted", streaming: bool = False) -> AgentCard:
    return AgentCard(
        name=name,
        description="A peer that answers from a script",
        version="1",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="geo", name="Geography", description="Knows cities", tags=["geo"])],
    )


def peer_app(executor: ScriptedPeer, url: str, streaming: bool = False) -> Starlette:
    """a2a-sdk's routes for ``executor``: its card (saying it streams when ``streaming``)
    and JSON-RPC at ``url``'s path."""
    card = peer_card(url, streaming=streaming)
    handler = DefaultRequestHandler(
        agent_executor=executor, task_store=InMemoryTaskStore(), agent_card=card
    )
    path = "/" + url.split("/", 3)[3] if url.count("/") >= 3 else "/"
    return Starlette(
        routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url=path)]
    )
