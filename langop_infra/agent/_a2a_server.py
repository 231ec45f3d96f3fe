"""The built-in agent's HTTP face: A2A through ``a2a-sdk`` (the mounted agent card at
``GET /.well-known/agent-card.json``; JSON-RPC in A2A 1.0 and 0.3 at ``A2A_PATH``),
``/healthz``, ``/readyz`` and ``/metrics``.

A message runs one turn of the loop in its ``contextId`` (its conversation) as a Task
(langop_infra.agent._a2a_tasks); push notifications are served when the card claims them
(langop_infra.agent._a2a_push).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from google.protobuf.json_format import ParseError
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

import langop_infra._json as _json
from langop_infra.agent import _turn_context as turn_context
from langop_infra.agent._a2a_push import UrlCheck, push_parts, push_url_allowed
from langop_infra.agent._a2a_sdk import (
    AgentExecutor,
    DefaultRequestHandler,
    EventQueue,
    InvalidParamsError,
    RequestContext,
    create_jsonrpc_routes,
    parse_agent_card,
)
from langop_infra.agent._a2a_tasks import BoundedTaskStore, Observer, TurnTasks
from langop_infra.agent._body_limit import BodyLimit
from langop_infra.agent._caller_watch import CallerWatch
from langop_infra.agent._inbound_auth import BearerAuth, Callers
from langop_infra.agent._loop import AgentLoop, Approver, TurnOutcome
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._settings import DEFAULT_MAX_REQUEST_BYTES as MAX_REQUEST_BYTES

__all__ = ["CARD_PATH", "LoopExecutor", "a2a_routes", "read_card", "service_routes"]

CARD_PATH = "/.well-known/agent-card.json"
SERVICE_PATHS = frozenset({("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics")})
MAX_OWNED_CONTEXTS = 100_000  # contextIds whose caller is remembered (about 10 MB)


class LoopExecutor(AgentExecutor):
    """Runs the agent loop for each A2A message. A ``contextId`` belongs to the caller that
    used it first (the authenticated user, or the anonymous caller): another caller's message
    in it is refused, and each caller's conversations are kept apart in any case."""

    def __init__(self, loop: Callable[[], AgentLoop]) -> None:
        self._loop = loop
        self._owners: OrderedDict[str, str] = OrderedDict()
        self._tasks = TurnTasks()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        caller, context_id = _caller(context), context.context_id or ""
        if self._owners.setdefault(context_id, caller) != caller:
            raise InvalidParamsError(
                "this contextId belongs to another caller: start a new conversation (send no "
                "contextId)"
            )
        self._owners.move_to_end(context_id)
        while len(self._owners) > MAX_OWNED_CONTEXTS:
            self._owners.popitem(last=False)
        # With the caller in the conversation's key, a forgotten owner still leaks nothing.
        conversation = f"{caller}/{context_id}" if caller else context_id
        hops = turn_context.hops_from(context.metadata)
        text = context.get_user_input()

        async def turn(observe: Observer, approve: Approver) -> TurnOutcome:
            with turn_context.turn(conversation, hops):
                return await self._loop().run(text, conversation, observe, approve)

        await self._tasks.run(context, event_queue, turn)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await self._tasks.cancel(context, event_queue)


def _caller(context: RequestContext) -> str:
    """Who sent the request: the authenticated user's name, else ``""`` (anonymous)."""
    user = context.call_context.user
    return user.user_name if user.is_authenticated else ""


_CARD_FIX = (
    "correct it (A2A_AGENT_CARD, else a2a.cardPath in the config, names the file) "
    "or remove it to serve a minimal card"
)


def read_card(path: Path) -> bytes:
    """The agent card file, checked to be a JSON object a2a-sdk can read."""
    data = path.read_bytes()
    document: object = _json.read(data)
    if not isinstance(document, dict):
        raise ValueError(f"{path}: the agent card is not a JSON object; {_CARD_FIX}")
    try:
        parse_agent_card(dict(document))  # pyright: ignore[reportUnknownArgumentType]
    except ParseError as exc:
        unreadable = f"{path}: not an agent card a2a-sdk can read ({exc}); {_CARD_FIX}"
        raise ValueError(unreadable) from None
    return data


def minimal_card(name: str, url: str) -> dict[str, Any]:
    """The card served when none is mounted: the agent's name, its JSON-RPC URL (as the
    request reached it) for A2A 1.0 and 0.3, streaming, text in and out."""
    return {
        "name": name,
        "description": f"The {name} agent (langop-infra's built-in runtime)",
        # A2A 1.0's interfaces, and A2A 0.3's view of the same endpoint for older clients
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "url": url,
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
        "version": "1",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        # A2A 1.0 wants a skill with a tag
        "skills": [
            {
                "id": "answer",
                "name": "Answer",
                "description": "Answers a question, using the agent's tools",
                "tags": ["general"],
            }
        ],
    }


def a2a_routes(
    card: bytes | None,
    path: str,
    loop: Callable[[], AgentLoop],
    name: str = "agent",
    push_url_check: UrlCheck = push_url_allowed,
) -> list[BaseRoute]:
    """The card route (the mounted card, else :func:`minimal_card`) and the JSON-RPC route
    (A2A 1.0 and 0.3); push notifications when the card claims them, to the webhooks
    ``push_url_check`` admits."""
    document = _json.read(card) if card is not None else minimal_card(name, f"http://{name}{path}")
    parsed = parse_agent_card(document)
    store, sender = (
        push_parts(push_url_check) if parsed.capabilities.push_notifications else (None, None)
    )
    handler = DefaultRequestHandler(
        agent_executor=LoopExecutor(loop),
        task_store=BoundedTaskStore(),
        agent_card=parsed,
        push_config_store=store,
        push_sender=sender,
        push_url_validator=push_url_check,
    )

    async def agent_card(request: Request) -> Response:
        if card is not None:
            return Response(card, media_type="application/json")
        base = str(request.base_url).rstrip("/")
        return JSONResponse(minimal_card(name, base + path))

    return [
        Route(CARD_PATH, agent_card, methods=["GET"]),
        *create_jsonrpc_routes(handler, rpc_url=path, enable_v0_3_compat=True),
    ]


def service_routes(
    metrics: Callable[[], RuntimeMetrics], not_ready: Callable[[], list[str]]
) -> list[BaseRoute]:
    """``/healthz`` (the process answers), ``/readyz`` (503 naming each required tool that
    is not connected) and ``/metrics`` (Prometheus text)."""

    async def healthz(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def readyz(_request: Request) -> JSONResponse:
        missing = not_ready()
        if missing:
            return JSONResponse({"status": "not ready", "waiting_for": missing}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def metrics_text(_request: Request) -> Response:
        return Response(generate_latest(metrics().registry), media_type=CONTENT_TYPE_LATEST)

    return [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_text, methods=["GET"]),
    ]


def build_app(
    routes: list[BaseRoute],
    lifespan: Any = None,
    max_request_bytes: int = MAX_REQUEST_BYTES,
    callers: Callers | None = None,
    public: frozenset[tuple[str, str]] = frozenset(),
) -> Starlette:
    """The routes, every request body capped at ``max_request_bytes`` (413 past it); with
    ``callers``, every request but the ``public`` (method, path) pairs authenticated first
    (401 before the body is read); a caller leaving a ``message/send`` cancels its turn."""
    middleware = [Middleware(BodyLimit, max_bytes=max_request_bytes), Middleware(CallerWatch)]
    if callers is not None:
        middleware.insert(0, Middleware(BearerAuth, callers=callers, public=public))
    return Starlette(routes=routes, lifespan=lifespan, middleware=middleware)
