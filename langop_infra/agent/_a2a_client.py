"""A small A2A client on ``a2a-sdk``: ``message/send`` to a peer by its name (``A2A_PEERS``),
with the peer's headers (``A2A_PEER_<PEER>_HEADER_<HEADER>``) on every request."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.helpers import get_text_parts, new_text_part
from a2a.types import Message, Role, SendMessageRequest

import langop_infra._json as _json
from langop_infra._errors import LangopError
from langop_infra.agent._a2a_data import get_data_parts
from langop_infra.agent._a2a_server import CARD_PATH
from langop_infra.agent._settings import Peer

__all__ = ["A2AClientError", "PeerClient", "PeerReply"]


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` (a peer's card lives at its origin)."""
    parts = httpx.URL(url)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.host}{port}"


class A2AClientError(LangopError):
    """A peer could not be asked: unknown name, unreachable, or an unreadable answer."""


@dataclass(frozen=True)
class PeerReply:
    """A peer's answer: its text, its data parts, and the conversation it belongs to."""

    text: str
    data: list[Any] = field(default_factory=list[Any])
    context_id: str = ""


class PeerClient:
    """Asks the agent's peers, by name."""

    def __init__(
        self,
        peers: Sequence[Peer],
        timeout: float = 120.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.peers = {peer.name: peer for peer in peers}
        self.timeout = timeout
        self._transport = transport  # e.g. one that resolves names differently (tests)

    async def send(self, peer: str, text: str, context_id: str | None = None) -> PeerReply:
        """``message/send`` ``text`` to ``peer``; its reply (text and data parts)."""
        found = self.peers.get(peer)
        if found is None:
            known = ", ".join(self.peers) or "none"
            raise A2AClientError(f"no A2A peer named {peer!r}; the peers are: {known}")
        async with httpx.AsyncClient(
            headers=dict(found.headers), timeout=self.timeout, transport=self._transport
        ) as http:
            card_url = found.card_url or _origin(found.url) + CARD_PATH
            try:
                response = await http.get(card_url)
                response.raise_for_status()
                card = parse_agent_card(_json.read(response.content))
            except (httpx.HTTPError, ValueError) as exc:
                raise A2AClientError(
                    f"peer {peer}: cannot read its card {card_url}: {exc}"
                ) from None
            client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)
            message = Message(
                role=Role.ROLE_USER,
                message_id=uuid.uuid4().hex,
                parts=[new_text_part(text)],
                context_id=context_id or "",
            )
            texts: list[str] = []
            data: list[object] = []
            context = ""
            try:
                async for event in client.send_message(SendMessageRequest(message=message)):
                    if event.HasField("message"):
                        texts += get_text_parts(event.message.parts)
                        data += get_data_parts(event.message.parts)
                        context = event.message.context_id
            except Exception as exc:  # a2a-sdk's errors have no common base but Exception
                raise A2AClientError(f"peer {peer}: message/send failed: {exc}") from None
        return PeerReply("\n".join(texts), data, context)
