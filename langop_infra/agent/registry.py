"""The agent's tool registry: every MCP server connected at once, its tools under one roof.

:func:`connect_tool_registry` connects to every server concurrently and names each tool
``<server>__<tool>`` (ark) or ``mcp:<server>:<tool>``. A server that cannot be used is
reported in ``failures`` and skipped. A tool call never raises for a server's failure: it
returns an ``isError`` result the LLM can read. A stdio server that crashed is restarted
once; a server's ``tools/list_changed`` relists it. The configuration side (reading
config.yaml and ``MCP_SERVERS``) is :mod:`langop_infra.agent.runtime`, which re-exports this.
"""

from __future__ import annotations

import asyncio
import itertools
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langop_infra.mcp.discovery import discover_endpoint
from langop_infra.mcp.errors import MCPError, TransportError
from langop_infra.mcp.http import display_url
from langop_infra.mcp.options import ClientOptions
from langop_infra.mcp.session import DEFAULT_OPTIONS, Session, ToolCallResult

__all__ = [
    "AgentServers",
    "Naming",
    "RegisteredTool",
    "ServerEntry",
    "ServerFailure",
    "ToolRegistry",
    "connect_tool_registry",
    "unique_server",
]

Naming = Literal["ark", "mcp"]


@dataclass(frozen=True)
class ServerEntry:
    """One MCP server to connect to: its name in tool prefixes, URL, headers, timeout.

    ``transport`` is ``http``, ``url`` (``url`` is a well-known URL to discover the endpoint
    from) or ``stdio`` (``command`` with ``env`` added to the agent's environment).
    """

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    source: str = ""
    transport: str = "http"
    command: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)


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
    failures: list[ServerFailure] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RegisteredTool:
    """A tool under its registry name, with the server and name to call it by."""

    name: str
    server: str
    tool_name: str
    definition: dict[str, Any]


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


class ToolRegistry:
    """Tools of every connected server under collision-free names; calls go to their server.

    ``call_tool`` returns every failure as an ``isError`` result (the LLM reads it as the
    tool's answer); a stdio server that crashed is restarted once; a server's
    ``notifications/tools/list_changed`` relists its tools in the background.
    """

    def __init__(
        self,
        sessions: Mapping[str, Session],
        tools: Mapping[str, RegisteredTool],
        failures: Sequence[ServerFailure] = (),
        warnings: Sequence[str] = (),
        *,
        entries: Mapping[str, ServerEntry] | None = None,
        options: ClientOptions = DEFAULT_OPTIONS,
        naming: Naming = "ark",
    ) -> None:
        self.sessions = dict(sessions)
        self.tools = dict(tools)
        self.failures = list(failures)
        self.warnings = list(warnings)
        self._entries = dict(entries or {})
        self._options = options
        self._naming: Naming = naming
        self._listed = _listed_by_server(self.tools)
        self._restarted: set[str] = set()
        self._relists: set[asyncio.Task[None]] = set()
        for server, session in self.sessions.items():
            self._watch(server, session)

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool's definition, ``name`` replaced by its registry name (for an LLM)."""
        return [{**tool.definition, "name": tool.name} for tool in self.tools.values()]

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        """Call a tool by its registry name; a failure is an ``is_error`` result, never raised."""
        tool = self.tools.get(name)
        if tool is None:
            return _error_result(f"no tool named {name!r}; the tools are: {_names(self.tools)}")
        try:
            return await self._call(tool, arguments)
        except MCPError as exc:
            return _error_result(f"tool {name} failed: {exc} [{exc.kind}]")

    async def _call(
        self, tool: RegisteredTool, arguments: Mapping[str, Any] | None
    ) -> ToolCallResult:
        session = self.sessions[tool.server]
        if getattr(session.transport, "exited", False):  # died since the last call
            session = await self._restart(tool.server)
        try:
            return await session.call_tool(tool.tool_name, arguments)
        except TransportError as exc:
            entry = self._entries.get(tool.server)
            if entry is None or entry.transport != "stdio" or tool.server in self._restarted:
                raise
            # Not retried: the call may have done part of its work before the crash.
            await self._restart(tool.server)
            raise TransportError(f"{exc}; restarted it: call the tool again") from None

    async def _restart(self, server: str) -> Session:
        """Start a crashed stdio server again, once (the seed's auto-reconnect)."""
        entry, old = self._entries.get(server), self.sessions[server]
        if entry is None or entry.transport != "stdio":
            return old
        if server in self._restarted:
            raise TransportError(
                f"stdio server {server} exited again; it is restarted only once: check its "
                "logs" + (f" ({old.transport.diagnostics()})" if old.transport else "")
            )
        self._restarted.add(server)
        await old.aclose()
        fresh = _session_for(entry, entry.url, self._options)
        self.sessions[server] = fresh
        self._watch(server, fresh)
        await fresh.initialize()
        self.warnings.append(f"{server}: the stdio server exited; restarted it once")
        return fresh

    async def refresh(self, server: str) -> None:
        """List ``server``'s tools again and rename the registry's tools to match."""
        listed = await self.sessions[server].list_tools()
        self._listed[server] = listed
        self.tools = _register(self._listed, self._naming, self.warnings)

    def _watch(self, server: str, session: Session) -> None:
        def notified(message: Mapping[str, Any]) -> None:
            if message.get("method") == "notifications/tools/list_changed":
                task = asyncio.get_running_loop().create_task(self._relist(server))
                self._relists.add(task)
                task.add_done_callback(self._relists.discard)

        session.on_notification = notified

    async def _relist(self, server: str) -> None:
        try:
            await self.refresh(server)
        except MCPError as exc:
            self.warnings.append(f"{server}: relisting after tools/list_changed failed: {exc}")

    async def aclose(self) -> None:
        """Stop relisting, then close every session."""
        for task in list(self._relists):
            task.cancel()
        await asyncio.gather(*self._relists, return_exceptions=True)
        await asyncio.gather(*(session.aclose() for session in self.sessions.values()))

    async def __aenter__(self) -> ToolRegistry:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _error_result(text: str) -> ToolCallResult:
    return ToolCallResult(content=[{"type": "text", "text": text}], is_error=True)


def _names(tools: Mapping[str, RegisteredTool], shown: int = 20) -> str:
    names = sorted(tools)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return (", ".join(names[:shown]) or "none") + more


def _listed_by_server(tools: Mapping[str, RegisteredTool]) -> dict[str, list[dict[str, Any]]]:
    listed: dict[str, list[dict[str, Any]]] = {}
    for tool in tools.values():
        listed.setdefault(tool.server, []).append(tool.definition)
    return listed


def _register(
    listed: Mapping[str, Sequence[dict[str, Any]]], naming: Naming, warnings: list[str]
) -> dict[str, RegisteredTool]:
    """Registry names for every server's tools, in server order, without collisions."""
    tools: dict[str, RegisteredTool] = {}
    for server, definitions in listed.items():
        seen: set[str] = set()
        for definition in definitions:
            tool_name = definition["name"]
            if tool_name in seen:
                warnings.append(f"{server} lists tool {tool_name!r} twice; kept the first")
                continue
            seen.add(tool_name)
            name = f"{server}__{tool_name}" if naming == "ark" else f"mcp:{server}:{tool_name}"
            if name in tools:
                unique = next(
                    f"{name}_{n}" for n in itertools.count(2) if f"{name}_{n}" not in tools
                )
                warnings.append(
                    f"tool name {name!r} is taken; {server}'s {tool_name!r} is {unique!r}"
                )
                name = unique
            tools[name] = RegisteredTool(name, server, tool_name, definition)
    return tools


async def connect_tool_registry(
    servers: AgentServers | Sequence[ServerEntry],
    options: ClientOptions = DEFAULT_OPTIONS,
    *,
    naming: Naming = "ark",
) -> ToolRegistry:
    """Connect to every server concurrently and register the tools of those that answered."""
    if isinstance(servers, AgentServers):
        given, failures, warnings = servers.servers, list(servers.failures), list(servers.warnings)
    else:
        given, failures, warnings = list(servers), [], []
    entries: list[ServerEntry] = []
    for entry in given:  # names key the sessions and prefix the tools: they must be unique
        entries.append(unique_server(entry, entries, warnings))
    results = await asyncio.gather(*(_connect(entry, options) for entry in entries))
    sessions: dict[str, Session] = {}
    listed: dict[str, list[dict[str, Any]]] = {}
    for entry, outcome in zip(entries, results, strict=True):
        if isinstance(outcome, ServerFailure):
            failures.append(outcome)
            continue
        sessions[entry.name], listed[entry.name] = outcome
    tools = _register(listed, naming, warnings)
    return ToolRegistry(
        sessions,
        tools,
        failures,
        warnings,
        entries={entry.name: entry for entry in entries},
        options=options,
        naming=naming,
    )


def _session_for(entry: ServerEntry, url: str, options: ClientOptions) -> Session:
    options = replace(
        options,
        headers={**options.headers, **entry.headers},
        timeout=entry.timeout or options.timeout,
    )
    if entry.transport == "stdio":
        return Session(list(entry.command), replace(options, transport="stdio"), env=entry.env)
    return Session(url, options)


async def _endpoint(entry: ServerEntry, options: ClientOptions) -> str:
    if entry.transport != "url":
        return entry.url
    return await discover_endpoint(
        entry.url, replace(options, headers={**options.headers, **entry.headers})
    )


async def _connect(
    entry: ServerEntry, options: ClientOptions
) -> tuple[Session, list[dict[str, Any]]] | ServerFailure:
    session: Session | None = None
    try:
        session = _session_for(entry, await _endpoint(entry, options), options)
        await session.initialize()
        return session, await session.list_tools()
    except MCPError as exc:
        if session is not None:
            await session.aclose()
        return ServerFailure(entry.name, exc.kind, str(exc))
    except BaseException:
        if session is not None:
            await session.aclose()
        raise
