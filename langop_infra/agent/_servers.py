"""What the agent's registry connects to: server entries, failures, the servers an agent
config names, per-tool counts, and the tools a reference offers."""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langop_infra.agent.http_tools import HttpToolEntry
from langop_infra.mcp._http import display_url


@dataclass(frozen=True)
class ServerEntry:
    """One MCP server to connect to: its name in tool prefixes, URL, headers, timeout.

    ``transport`` is ``http``, ``url`` (``url`` is a well-known URL to discover the endpoint
    from) or ``stdio`` (``command`` with ``env`` added to the agent's environment).
    """

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    timeout: float | None = None
    source: str = ""
    transport: str = "http"
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict[str, str])
    # A tool reference's allowedTools: only these are offered; None offers every tool.
    allowed_tools: tuple[str, ...] | None = None
    # A tool reference's overrides: {tool: {"name": ..., "description": ...}}.
    overrides: Mapping[str, Mapping[str, str]] = field(default_factory=dict[str, Mapping[str, str]])
    auto_connect: bool = True  # false: listed by servers(), connected only by connect()


@dataclass(frozen=True)
class ServerFailure:
    """A server that was skipped, and why: ``kind`` is an error kind or ``config``."""

    name: str
    kind: str
    message: str

    def __str__(self) -> str:
        return f"{self.name}: {self.message} [{self.kind}]"


@dataclass(frozen=True)
class AgentServers:
    """The servers an agent should connect to, and the entries that were unusable."""

    servers: list[ServerEntry]
    failures: list[ServerFailure] = field(default_factory=list[ServerFailure])
    warnings: list[str] = field(default_factory=list[str])
    http_tools: list[HttpToolEntry] = field(default_factory=list[HttpToolEntry])


@dataclass
class ToolCounts:
    """Calls of one tool since the registry started (STOA's invocationCount, errorCount)."""

    invocations: int = 0
    errors: int = 0


def unique_server(
    entry: ServerEntry, taken: Sequence[ServerEntry], warnings: list[str]
) -> ServerEntry:
    """``entry``, renamed ``<name>-2`` (-3, ...) with a warning if ``taken`` has its name."""
    names = {server.name for server in taken}
    if entry.name not in names:
        return entry
    unique = next(
        f"{entry.name}-{n}" for n in itertools.count(2) if f"{entry.name}-{n}" not in names
    )
    warnings.append(
        f"two servers are named {entry.name!r}; the one at {_shown(entry)} "
        f"({entry.source or 'given'}) is {unique!r}"
    )
    return replace(entry, name=unique)


def _shown(entry: ServerEntry) -> str:
    return display_url(entry.url) if entry.url else shlex.join(entry.command)


def offered(entry: ServerEntry | None, listed: list[dict[str, object]]) -> list[dict[str, Any]]:
    """The listed tools the agent may use: every one, or those ``allowed_tools`` names (a
    tool outside the list is never offered, so never called)."""
    if entry is None or entry.allowed_tools is None:
        return listed
    allowed = set(entry.allowed_tools)
    return [tool for tool in listed if tool.get("name") in allowed]


def refuse_other_settings(
    entry: ServerEntry, entries: Mapping[str, ServerEntry], connected: Mapping[str, object]
) -> None:
    """``ValueError`` when a server of ``entry``'s name is connected with other settings
    (``connect(ServerEntry)`` would otherwise swap a live server's settings under it)."""
    known = entries.get(entry.name)
    if known is not None and known != entry and entry.name in connected:
        raise ValueError(
            f"a server named {entry.name!r} is connected with other settings: "
            "disconnect it first, or give the new one another name"
        )
