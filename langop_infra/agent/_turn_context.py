"""What a turn knows about the request that started it, for the tools it calls: the
conversation, and how many agents the request has passed through (``hops``).

Context variables, because a tool call runs deep below the A2A handler that read them; each
asyncio task copies them, so concurrent turns (and their concurrent tool calls) each see
their own.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["HOPS_KEY", "conversation", "hops", "hops_from", "turn"]

# The request metadata key that carries the hop count between agents.
HOPS_KEY = "langop-infra/hops"

_conversation: ContextVar[str] = ContextVar("langop_conversation", default="")
_hops: ContextVar[int] = ContextVar("langop_hops", default=0)


def conversation() -> str:
    """The conversation (A2A ``contextId``) of the running turn; ``""`` outside one."""
    return _conversation.get()


def hops() -> int:
    """How many agents the running turn's request passed through before this one."""
    return _hops.get()


def hops_from(metadata: Mapping[str, Any]) -> int:
    """The hop count in a request's metadata (0 when absent or not a whole number >= 0)."""
    value = metadata.get(HOPS_KEY)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    return max(0, int(value))


@contextmanager
def turn(conversation_id: str, hop_count: int | None = None) -> Generator[None]:
    """Within the block, the running turn is ``conversation_id`` at ``hop_count`` hops (the
    enclosing count when None)."""
    tokens = [_conversation.set(conversation_id)]
    hop_token = _hops.set(hop_count) if hop_count is not None else None
    try:
        yield
    finally:
        _conversation.reset(tokens[0])
        if hop_token is not None:
            _hops.reset(hop_token)
