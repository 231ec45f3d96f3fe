"""A small A2A client on ``a2a-sdk``: ``message/send`` to a peer by its name (``A2A_PEERS``),
with the peer's headers (``A2A_PEER_<PEER>_HEADER_<HEADER>``) on every request to the peer's
configured origin (its URL's, its card URL's), never to another one its card names.

One HTTP client and the peer's card are kept per peer (built on first use), so a call costs
one request. A peer whose card says it streams is asked with ``message/stream`` (its status
and artifact updates folded into its Task as they come), any other with ``message/send``.
A peer may answer with a Message or with a Task: the reply is the Message's parts, or the
Task's status message and artifacts, with the Task's state.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.agent._a2a_data import get_data_parts
from langop_infra.agent._a2a_sdk import (
    AgentCard,
    Artifact,
    Client,
    ClientConfig,
    ClientFactory,
    Message,
    Role,
    SendMessageRequest,
    StreamResponse,
    Task,
    TaskState,
    get_text_parts,
    new_text_part,
    parse_agent_card,
)
from langop_infra.agent._a2a_server import CARD_PATH
from langop_infra.agent._capped import CappedTransport, read_capped
from langop_infra.agent._settings import Peer
from langop_infra.mcp._http import display_url, origin

__all__ = ["A2AClientError", "PeerClient", "PeerReply"]

MAX_CARD_BYTES = 256 * 1024  # as card sync reads it
MAX_REPLY_BYTES = 8 * 1024 * 1024  # a peer's message/send answer, as a model's


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (a peer's card lives at its origin)."""
    parts = httpx.URL(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.host}{port}"


class A2AClientError(LangopError):
    """A peer could not be asked: unknown name, unreachable, or an unreadable answer."""


@dataclass(frozen=True)
class PeerReply:
    """A peer's answer: its text, its data parts, the conversation it belongs to, and (for
    a Task) the task's id and state (``completed``, ``input-required``, ...; ``""`` for a
    Message)."""

    text: str
    data: list[Any] = field(default_factory=list[Any])
    context_id: str = ""
    task_id: str = ""
    state: str = ""

    @property
    def finished(self) -> bool:
        """Whether the peer gave an answer (a Message, or a completed Task)."""
        return self.state in ("", "completed")


class OriginHeaders(httpx.Auth):
    """A peer's headers on requests to the origins configured for it, and nowhere else: the
    card (the peer's words) may name any URL for ``message/send``."""

    def __init__(
        self, headers: Mapping[str, str], urls: Sequence[str], token_file: str = ""
    ) -> None:
        self._headers = dict(headers)
        self._origins = {origin(url) for url in urls}
        self._token_file = token_file

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        if origin(str(request.url)) in self._origins:
            request.headers.update(self._headers)
            if self._token_file:
                request.headers.update(self._token_header())
        yield request

    def _token_header(self) -> dict[str, str]:
        """The projected token as a bearer, read at each request (the kubelet renews it);
        none when it cannot be read, and the peer's 401 says so."""
        try:
            token = Path(self._token_file).read_text(encoding="utf-8").strip()
        except OSError:
            token = ""
        return {"Authorization": f"Bearer {token}"} if token else {}


@dataclass
class _Connection:
    http: httpx.AsyncClient
    card: AgentCard
    client: Client


class PeerClient:
    """Asks the agent's peers, by name; keeps one connection (client and card) per peer."""

    def __init__(
        self,
        peers: Sequence[Peer],
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.peers = {peer.name: peer for peer in peers}
        self.timeout = timeout
        self._transport = transport  # e.g. one that resolves names differently (tests)
        self._connections: dict[str, _Connection] = {}
        self._opening: dict[str, asyncio.Lock] = {}

    async def card(self, peer: str) -> AgentCard:
        """The peer's card (fetched once, then kept)."""
        return (await self._connection(peer)).card

    async def send(
        self,
        peer: str,
        text: str,
        context_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> PeerReply:
        """``text`` to ``peer`` (``metadata`` as the request's) by ``message/stream`` when its
        card says it streams, else by ``message/send``; its reply."""
        connection = await self._connection(peer)
        message = Message(
            role=Role.ROLE_USER,
            message_id=uuid.uuid4().hex,
            parts=[new_text_part(text)],
            context_id=context_id or "",
        )
        request = SendMessageRequest(message=message, metadata=dict(metadata or {}))
        method = "message/stream" if connection.card.capabilities.streaming else "message/send"
        answer = _Answer()
        try:
            async for event in connection.client.send_message(request):
                answer.add(event)
        except Exception as exc:  # a2a-sdk's errors have no common base but Exception
            raise A2AClientError(f"peer {peer}: {method} failed: {exc}") from None
        return answer.reply()

    async def _connection(self, peer: str) -> _Connection:
        found = self.peers.get(peer)
        if found is None:
            known = ", ".join(self.peers) or "none"
            raise A2AClientError(f"no A2A peer named {peer!r}; the peers are: {known}")
        async with self._opening.setdefault(peer, asyncio.Lock()):
            if peer not in self._connections:
                self._connections[peer] = await self._open(found)
        return self._connections[peer]

    async def _open(self, peer: Peer) -> _Connection:
        auth = OriginHeaders(peer.headers, [peer.url, peer.card_url or peer.url], peer.token_file)
        transport = CappedTransport(MAX_REPLY_BYTES, self._transport)
        http = httpx.AsyncClient(auth=auth, timeout=self.timeout, transport=transport)
        card_url = peer.card_url or _origin(peer.url) + CARD_PATH
        try:
            response = await read_capped(http, card_url, MAX_CARD_BYTES)
            card = parse_agent_card(_json.read(response.content))
        except (httpx.HTTPError, ValueError) as exc:
            await http.aclose()
            problem = f"peer {peer.name}: cannot read its card {display_url(card_url)}: {exc}"
            raise A2AClientError(problem) from None
        # streaming=True: a2a-sdk streams when the card says the peer does, else sends.
        client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
        return _Connection(http, card, client)

    async def aclose(self) -> None:
        """Close every peer's HTTP client."""
        connections, self._connections = list(self._connections.values()), {}
        await asyncio.gather(*(c.http.aclose() for c in connections))


class _Answer:
    """A peer's events folded into its answer: a Message, or a Task that status and artifact
    updates change as a stream delivers them (an artifact update with ``append`` extends the
    artifact of its id, any other replaces it)."""

    def __init__(self) -> None:
        self.message: Message | None = None
        self.task: Task | None = None

    def add(self, event: StreamResponse) -> None:
        if event.HasField("message"):
            self.message = event.message
        elif event.HasField("task"):
            self.task = Task()
            self.task.CopyFrom(event.task)
        elif event.HasField("status_update"):
            update = event.status_update
            task = self._task(update.task_id, update.context_id)
            task.status.CopyFrom(update.status)
        elif event.HasField("artifact_update"):
            update = event.artifact_update
            task = self._task(update.task_id, update.context_id)
            _add_artifact(task, update.artifact, append=update.append)

    def _task(self, task_id: str, context_id: str) -> Task:
        if self.task is None:
            self.task = Task(id=task_id, context_id=context_id)
        return self.task

    def reply(self) -> PeerReply:
        """The Message, else the Task, as the peer's reply."""
        if self.message is not None:
            parts = list(self.message.parts)
            return PeerReply(
                "\n".join(get_text_parts(parts)), get_data_parts(parts), self.message.context_id
            )
        if self.task is None:
            return PeerReply("")
        task = self.task
        parts = [*task.status.message.parts]
        for artifact in task.artifacts:
            parts += artifact.parts
        state = TaskState.Name(task.status.state).removeprefix("TASK_STATE_")
        return PeerReply(
            "\n".join(t for t in get_text_parts(parts) if t),
            get_data_parts(parts),
            task.context_id,
            task.id,
            state.lower().replace("_", "-"),
        )


def _add_artifact(task: Task, artifact: Artifact, append: bool) -> None:
    for existing in task.artifacts:
        if existing.artifact_id == artifact.artifact_id:
            if append:
                existing.parts.extend(artifact.parts)
            else:
                existing.CopyFrom(artifact)
            return
    task.artifacts.append(artifact)
