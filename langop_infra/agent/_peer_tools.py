"""The agent's A2A peers (``A2A_PEERS``) offered to the model as tools, beside its registry's.

Each peer is a tool ``a2a:<peer>`` (an LLM-safe API name, ``peer__<peer>``) described by its
card: its name, description and skills. A call sends the tool's ``message`` with
``message/send``; the peer's answer (a Message, or a Task's status message and artifacts) is
the tool result. A peer that fails, cannot be reached, or asks for more input
(``input-required``) gives an error result the model reads.

A request carries its hop count in its metadata (``langop-infra/hops``): an agent asked at
``n`` hops calls its peers at ``n + 1``, and refuses to call one past ``max_hops``, so agents
that call each other (A → B → A ...) stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langop_infra.agent import _turn_context as turn
from langop_infra.agent._a2a_client import A2AClientError, PeerClient, PeerReply
from langop_infra.agent._a2a_sdk import AgentCard
from langop_infra.agent._loop import Tools
from langop_infra.agent._naming import llm_name
from langop_infra.mcp._session import ToolCallResult

__all__ = ["DEFAULT_MAX_HOPS", "PEER_PREFIX", "PeerTools"]

logger = logging.getLogger(__name__)
PEER_PREFIX = "a2a:"
DEFAULT_MAX_HOPS = 3
MAX_DESCRIPTION = 1000
MAX_CONTEXTS = 1000  # remembered (conversation, peer) -> the peer's contextId
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {
            "type": "string",
            "description": "What to ask the agent; it sees this text only, so say everything",
        }
    },
    "required": ["message"],
}


class PeerTools:
    """The registry's tools and one tool per peer, as the loop's :class:`Tools`."""

    def __init__(self, tools: Tools, client: PeerClient, max_hops: int = DEFAULT_MAX_HOPS) -> None:
        self.tools, self.client, self.max_hops = tools, client, max_hops
        self._cards: dict[str, AgentCard] = {}
        # A conversation keeps talking to the peer in the peer's own conversation.
        self._contexts: OrderedDict[tuple[str, str], str] = OrderedDict()

    @property
    def timeouts(self) -> dict[str, float]:
        """Each peer tool's bound: the peer client's timeout (a peer runs a whole turn)."""
        return {PEER_PREFIX + name: self.client.timeout for name in self.client.peers}

    async def read_cards(self) -> None:
        """Fetch every peer's card (for the tools' descriptions); a peer whose card cannot be
        read is logged and described by its name until a call reaches it."""
        names = list(self.client.peers)
        found = await asyncio.gather(*(self.client.card(n) for n in names), return_exceptions=True)
        for name, card in zip(names, found, strict=True):
            if isinstance(card, AgentCard):
                self._cards[name] = card
            else:
                logger.warning("A2A peer %s: %s", name, card)

    def llm_definitions(self, format: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
        definitions, names = self.tools.llm_definitions(format)
        definitions, names = list(definitions), dict(names)
        for peer in self.client.peers:
            api_name = _free(llm_name(f"peer__{peer}"), names)
            names[api_name] = PEER_PREFIX + peer
            description = self.description(peer)
            if format == "anthropic":
                definitions.append(
                    {"name": api_name, "description": description, "input_schema": PARAMETERS}
                )
            else:
                function = {"name": api_name, "description": description, "parameters": PARAMETERS}
                definitions.append({"type": "function", "function": function})
        return definitions, names

    def description(self, peer: str) -> str:
        """The peer's tool description: its card's name, description and skills."""
        card = self._cards.get(peer)
        if card is None:
            return f"Ask the agent {peer} (over A2A) and get its answer."
        lines = [f"Ask the agent {card.name or peer} (over A2A) and get its answer."]
        if card.description:
            lines.append(card.description)
        skills = [f"{s.name}: {s.description}".strip(": ") for s in card.skills]
        if skills:
            lines.append("Skills: " + "; ".join(skills))
        text = "\n".join(lines)
        return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        peer = name.removeprefix(PEER_PREFIX)
        if not name.startswith(PEER_PREFIX) or peer not in self.client.peers:
            return await self.tools.call_tool(name, arguments)
        message = (arguments or {}).get("message")
        if not isinstance(message, str) or not message.strip():
            return _error(f"peer {peer}: give the agent a `message` (a non-empty string)")
        next_hops = turn.hops() + 1
        if next_hops > self.max_hops:
            return _error(
                f"peer {peer} was not called: this request has passed through "
                f"{turn.hops()} agents, the hop limit (A2A_MAX_HOPS={self.max_hops}); "
                "answer with what you have"
            )
        return await self._ask(peer, message, next_hops)

    async def _ask(self, peer: str, message: str, next_hops: int) -> ToolCallResult:
        key = (turn.conversation(), peer)
        try:
            reply = await self.client.send(
                peer, message, self._contexts.get(key), {turn.HOPS_KEY: next_hops}
            )
            self._cards.setdefault(peer, await self.client.card(peer))
        except A2AClientError as exc:
            return _error(str(exc))
        if reply.context_id and key[0]:
            self._contexts[key] = reply.context_id
            self._contexts.move_to_end(key)
            while len(self._contexts) > MAX_CONTEXTS:
                self._contexts.popitem(last=False)
        return _result(peer, reply)


def _result(peer: str, reply: PeerReply) -> ToolCallResult:
    if reply.state == "input-required":
        return _error(
            f"peer {peer} needs more input before it can answer (input-required): "
            f"{reply.text or '(no question given)'}"
        )
    if not reply.finished:
        return _error(f"peer {peer} ended its task {reply.state}: {reply.text or '(no message)'}")
    structured: dict[str, Any] = {"peer": peer, "answer": reply.text}
    if reply.data:
        structured["data"] = reply.data
    return ToolCallResult(
        content=[{"type": "text", "text": reply.text}],
        is_error=False,
        structured_content=structured,
    )


def _error(text: str) -> ToolCallResult:
    return ToolCallResult(content=[{"type": "text", "text": text}], is_error=True)


def _free(name: str, taken: Mapping[str, str]) -> str:
    """``name``, or ``name_2`` (3, ...) when a registry tool has it."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name[:60]}_{n}"
    return candidate
