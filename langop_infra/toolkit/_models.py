"""AgentLab's records of an agent's turn: the chat's messages, the model's tool calls, their
results, and the steps of its reasoning. Dataclasses with AgentLab's fields; ``to_dict()``
gives their JSON form."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, cast

__all__ = ["AgentStep", "ChatMessage", "ToolCall", "ToolResult"]


_SCALARS = (str, int, float, bool, type(None))


def _jsonable(record: Any) -> dict[str, Any]:
    """``dataclasses.asdict(record)`` with its datetimes in ISO form. Its values are copied
    as ``asdict`` copies them, but JSON's containers and scalars without ``deepcopy``'s
    bookkeeping (a turn's records are built for every A2A answer)."""
    data: dict[str, Any] = {}
    for f in fields(record):
        value = getattr(record, f.name)
        data[f.name] = value.isoformat() if isinstance(value, datetime) else _copied(value)
    return data


def _copied(value: object) -> object:
    if isinstance(value, _SCALARS):
        return value
    if type(value) is dict:
        return {k: _copied(v) for k, v in cast("dict[object, object]", value).items()}
    if type(value) is list:
        return [_copied(v) for v in cast("list[object]", value)]
    if type(value) is tuple:
        return tuple(_copied(v) for v in cast("tuple[object, ...]", value))
    return copy.deepcopy(value)


@dataclass
class ChatMessage:
    """One message of a chat: ``role`` user, assistant or system. A tool call or result kept
    in the history carries ``metadata["is_tool_call"] = True`` (AgentLab's storage format)."""

    role: str
    content: str
    timestamp: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


@dataclass
class ToolCall:
    """Represents a tool call made by the LLM."""

    tool_name: str
    tool_args: dict[str, Any]
    call_id: str
    timestamp: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


@dataclass
class ToolResult:
    """Result from executing a tool call. ``call_id`` follows ``error`` as in AgentLab's
    listing, so it is given by keyword (a required field cannot follow a default one
    positionally)."""

    tool_name: str
    success: bool
    result: dict[str, Any]
    error: str | None = None
    call_id: str = field(kw_only=True)
    timestamp: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)


@dataclass
class AgentStep:
    """Represents a single step in the agent's reasoning process."""

    step_number: int
    tool_name: str
    tool_args: dict[str, Any]
    result: dict[str, Any]
    reasoning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(self)
