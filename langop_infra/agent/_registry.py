"""The agent's tool registry: every MCP server and HTTP tool of an agent, under one roof.

:func:`connect_tool_registry` connects to every server in the background and names each tool
``<server>__<tool>`` (ark) or ``mcp:<server>:<tool>`` (language-operator's MCP client). It
is usable as soon as a server is ready (``wait="first"``); a slow server joins when it
answers, or fails on its own timeout. :meth:`ToolRegistry.connect` and
:meth:`~ToolRegistry.disconnect` add and remove one server (its tools with it);
:meth:`~ToolRegistry.servers` reports each one's status. A tool call never raises: every
failure is an ``isError`` result the LLM can read, including ``structuredContent`` that
violates the tool's ``outputSchema``. A stdio server that crashed is restarted with
exponential backoff and jitter; a server's ``tools/list_changed`` relists it. The
configuration side (config.yaml, ``MCP_SERVERS``, servers.json) is
:mod:`langop_infra.agent.runtime`, which re-exports this.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from langop_infra.agent import _naming as naming_rules
from langop_infra.agent._lifecycle import (
    MAX_RESTARTS,
    RESTART_BASE_SECONDS,
    STABLE_SECONDS,
    ServerStatus,
    Stalls,
    Wait,
    restart_delay,
)
from langop_infra.agent._naming import LlmFormat, Naming, RegisteredTool
from langop_infra.agent._output_check import OutputChecks, failed
from langop_infra.agent._result_scrub import registry_scrubber, scrubbed_result
from langop_infra.agent._servers import (
    AgentServers,
    ServerEntry,
    ServerFailure,
    ToolCounts,
    offered,
    refuse_other_settings,
    unique_server,
)
from langop_infra.agent.http_tools import HttpToolCaller
from langop_infra.mcp._discovery import discover_endpoint
from langop_infra.mcp._errors import JSONRPCError, MCPError, TransportError
from langop_infra.mcp._http import display_url, origin
from langop_infra.mcp._options import ClientOptions
from langop_infra.mcp._session import DEFAULT_OPTIONS, Session, ToolCallResult

__all__ = [
    "AgentServers",
    "Naming",
    "RegisteredTool",
    "ServerEntry",
    "ServerFailure",
    "ServerStatus",
    "ToolCounts",
    "ToolRegistry",
    "connect_tool_registry",
    "unique_server",
]

logger = logging.getLogger(__name__)


class ToolRegistry:
    """Tools of every connected server and every HTTP tool under collision-free names; calls
    go to their server. See the module's docstring for the lifecycle."""

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
        http: HttpToolCaller | None = None,
    ) -> None:
        self.sessions = dict(sessions)
        self.http = http or HttpToolCaller()
        # The one scrubber (the HTTP tools'), which learns what the servers are sent too.
        self.scrubber = registry_scrubber(self.http.scrubber, options, (entries or {}).values())
        self.counts: dict[str, ToolCounts] = {}
        self._output_checks = OutputChecks()
        self._warnings = list(warnings)
        self._naming_warnings: list[str] = []  # redone whenever the tools are renamed
        self._config_failures = list(failures)
        self._server_failures: dict[str, ServerFailure] = {}
        self._entries = dict(entries or {})
        self._options = options
        self._naming: Naming = naming
        self._listed = _listed_by_server(tools)
        self.tools = naming_rules.with_http(dict(tools), self.http, naming, self._naming_warnings)
        self._status = {
            name: ServerStatus(name, "disconnected", entry.transport)
            for name, entry in self._entries.items()
        }
        for server in self.sessions:
            self._status[server] = self._connected_status(server)
        self._connecting: dict[str, asyncio.Task[None]] = {}
        self._restarts: dict[str, int] = {}
        self._started: dict[str, float] = {}
        self.restart_delays: list[float] = []  # the backoff actually waited (for observers)
        self.max_restarts = MAX_RESTARTS
        self.restart_base = RESTART_BASE_SECONDS
        self._relists: set[asyncio.Task[None]] = set()
        self.stalls = Stalls()  # which servers are wedged (see wedged())
        for server, session in self.sessions.items():
            self._watch(server, session)

    @property
    def warnings(self) -> list[str]:
        """Configuration warnings, events (restarts, failed relists), then naming clashes."""
        return [*self._warnings, *self._naming_warnings]

    @property
    def failures(self) -> list[ServerFailure]:
        """Unusable config entries, then each server that failed, in configuration order."""
        order = list(self._entries)
        failed = sorted(
            self._server_failures.values(),
            key=lambda f: order.index(f.name) if f.name in order else len(order),
        )
        return [*self._config_failures, *failed]

    def servers(self) -> list[ServerStatus]:
        """Every configured server's status, in configuration order."""
        return [self._status[name] for name in self._status]

    def definitions(self, format: LlmFormat | None = None) -> list[dict[str, Any]]:
        """Every tool's definition under its registry name (MCP's shape), or in an LLM API's
        shape (``openai``, ``anthropic``) under names that API accepts; for the map back to
        registry names, see :meth:`llm_definitions`."""
        if format is None:
            return [{**tool.definition, "name": tool.name} for tool in self.tools.values()]
        return naming_rules.llm_definitions(self.tools, format)[0]

    def llm_definitions(self, format: LlmFormat) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """Definitions in an LLM API's shape and ``{api name: registry name}``."""
        return naming_rules.llm_definitions(self.tools, format)

    async def call_tool(
        self, name: str, arguments: Mapping[str, object] | None = None
    ) -> ToolCallResult:
        """Call a tool by its registry name; a failure is an ``is_error`` result, never raised."""
        tool = self.tools.get(name)
        if tool is None:
            return _error_result(f"no tool named {name!r}; the tools are: {_names(self.tools)}")
        counts = self.counts.setdefault(name, ToolCounts())
        counts.invocations += 1
        if not tool.server:
            result = await self.http.call(tool.tool_name, arguments)
        else:
            try:
                result = await self._call(tool, arguments)
            except MCPError as exc:
                self.stalls.record(tool.server, exc.kind)
                result = _mcp_error_result(name, exc)
            else:
                self.stalls.record(tool.server, None)
                result = self._output_checks.checked(tool.name, tool.definition, result)
            result = self._scrubbed(result)
        # AgentLab's tools answer {"success": false, ...}: an error, even without isError
        counts.errors += result.is_error or failed(result)
        return result

    def _scrubbed(self, result: ToolCallResult) -> ToolCallResult:
        """``result`` without any credential the agent sent (a server may echo them)."""
        return scrubbed_result(self.scrubber, self._options, result)

    async def _call(
        self, tool: RegisteredTool, arguments: Mapping[str, object] | None
    ) -> ToolCallResult:
        session = self.sessions.get(tool.server)
        if session is None:
            raise TransportError(f"server {tool.server} is disconnected")
        if getattr(session.transport, "exited", False):  # died since the last call
            session = await self._restart(tool.server)
        try:
            return await session.call_tool(tool.tool_name, arguments)
        except TransportError as exc:
            entry = self._entries.get(tool.server)
            if entry is None or entry.transport != "stdio":
                raise
            # Not retried: the call may have done part of its work before the crash.
            await self._restart(tool.server)
            raise TransportError(f"{exc}; restarted it: call the tool again") from None

    async def _restart(self, server: str) -> Session:
        """Start a crashed stdio server again, after a backoff that grows with each restart
        in a row (language-operator's auto-reconnect); give up after ``max_restarts``."""
        entry, old = self._entries.get(server), self.sessions[server]
        if entry is None or entry.transport != "stdio":
            return old
        loop = asyncio.get_running_loop()
        if loop.time() - self._started.get(server, loop.time()) > STABLE_SECONDS:
            self._restarts[server] = 0  # it ran long enough: a new incident
        await old.aclose()
        while True:
            done = self._restarts.get(server, 0)
            if done >= self.max_restarts:
                self._status[server] = ServerStatus(server, "failed", "stdio", 0, "exited")
                raise TransportError(
                    f"stdio server {server} exited again after {done} restarts; gave up "
                    "restarting it: check its logs"
                    + (f" ({old.transport.diagnostics()})" if old.transport else "")
                )
            self._restarts[server] = done + 1
            delay = restart_delay(done, self.restart_base)
            self.restart_delays.append(delay)
            await asyncio.sleep(delay)
            fresh = _session_for(entry, entry.url, self._options)
            self.sessions[server] = fresh
            self._watch(server, fresh)
            try:
                await fresh.initialize()
            except MCPError:
                await fresh.aclose()
                continue
            self._started[server] = loop.time()
            self._warnings.append(f"{server}: the stdio server exited; restarted it ({done + 1})")
            return fresh

    async def connect(self, server: str | ServerEntry) -> ServerStatus:
        """Connect ``server`` now and register its tools: a configured name, or a new
        server's settings (language-operator's ``Connect(config)``), which join the
        configuration."""
        if isinstance(server, ServerEntry):
            refuse_other_settings(server, self._entries, self.sessions)
            self._entries[server.name] = server
            if server.name not in self.sessions:
                self._status[server.name] = ServerStatus(server.name, "disconnected")
            server = server.name
        if server not in self._entries:
            known = ", ".join(self._entries) or "none"
            raise KeyError(f"no server named {server!r}; the servers are: {known}")
        pending = self._connecting.get(server)
        if pending is not None:
            await asyncio.shield(pending)
        elif server not in self.sessions:
            await self._join(server)
        return self._status[server]

    def start(self, server: str) -> None:
        """Connect ``server`` in the background; its tools appear when it answers."""
        if server in self.sessions or server in self._connecting:
            return
        self._status[server] = ServerStatus(server, "connecting", self._entries[server].transport)
        task = asyncio.get_running_loop().create_task(self._join(server))
        self._connecting[server] = task
        task.add_done_callback(lambda _: self._connecting.pop(server, None))

    async def _join(self, server: str) -> None:
        entry = self._entries[server]
        self._status[server] = ServerStatus(server, "connecting", entry.transport)
        outcome = await _connect(entry, self._options, self._warnings)
        if isinstance(outcome, ServerFailure):
            outcome = replace(outcome, message=self.scrubber.line(outcome.message, 2000))
            self._server_failures[server] = outcome
            self._status[server] = ServerStatus(
                server, "failed", entry.transport, 0, f"{outcome.message} [{outcome.kind}]"
            )
            logger.warning("tool server unusable: %s", outcome)
            return
        self._server_failures.pop(server, None)
        self.sessions[server], self._listed[server] = outcome
        self._started[server] = asyncio.get_running_loop().time()
        self._watch(server, outcome[0])
        self._reregister()
        self._status[server] = self._connected_status(server)
        logger.info("tool server %s connected: %d tools", server, self._status[server].tools)

    async def disconnect(self, server: str) -> ServerStatus:
        """Close ``server`` and unregister its tools (language-operator's lifecycle, steps 6-8)."""
        pending = self._connecting.pop(server, None)
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)
        session = self.sessions.pop(server, None)
        self._listed.pop(server, None)
        self._reregister()
        if session is not None:
            await session.aclose()
        transport = self._entries[server].transport if server in self._entries else "http"
        self._status[server] = ServerStatus(server, "disconnected", transport)
        return self._status[server]

    async def wait(self, first: bool = False, timeout: float | None = None) -> None:
        """Until every background connection ended, or (``first``) one server is ready."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            pending = [t for t in self._connecting.values() if not t.done()]
            if not pending or (first and self.sessions):
                return
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return
            # Each connection's end (success or failure) wakes this loop to look again.
            await asyncio.wait(pending, timeout=left, return_when=asyncio.FIRST_COMPLETED)

    def wedged(self) -> list[str]:
        """Connected servers whose last calls timed out or found them busy (:class:`Stalls`)."""
        return self.stalls.wedged(self.sessions)

    def _connected_status(self, server: str) -> ServerStatus:
        entry = self._entries.get(server)
        count = sum(1 for tool in self.tools.values() if tool.server == server)
        return ServerStatus(server, "connected", entry.transport if entry else "http", count)

    def _reregister(self) -> None:
        order = [name for name in self._entries if name in self._listed]
        order += [name for name in self._listed if name not in order]
        listed = {name: self._listed[name] for name in order}
        found: list[str] = []
        overrides = {name: entry.overrides for name, entry in self._entries.items()}
        tools = naming_rules.register(listed, self._naming, found, overrides)
        self.tools = naming_rules.with_http(tools, self.http, self._naming, found)
        self._naming_warnings = found

    async def refresh(self, server: str) -> list[dict[str, Any]]:
        """List ``server``'s tools again, rename the registry's tools to match, and return
        that server's tools as :meth:`definitions` gives them (under registry names)."""
        listed = offered(self._entries.get(server), await self.sessions[server].list_tools())
        self._listed[server] = listed
        self._reregister()
        self._status[server] = self._connected_status(server)
        return [{**t.definition, "name": t.name} for t in self.tools.values() if t.server == server]

    def _watch(self, server: str, session: Session) -> None:
        def notified(message: Mapping[str, object]) -> None:
            if message.get("method") == "notifications/tools/list_changed":
                task = asyncio.get_running_loop().create_task(self._relist(server))
                self._relists.add(task)
                task.add_done_callback(self._relists.discard)

        session.on_notification = notified

    async def _relist(self, server: str) -> None:
        try:
            await self.refresh(server)
        except MCPError as exc:
            self._warnings.append(f"{server}: relisting after tools/list_changed failed: {exc}")

    async def aclose(self) -> None:
        """Stop connecting and relisting, then close every session and the HTTP client."""
        tasks = [*self._relists, *self._connecting.values(), *self.stalls.tasks()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)  # type: ignore[arg-type]
        await asyncio.gather(*(session.aclose() for session in self.sessions.values()))
        await self.http.aclose()

    async def __aenter__(self) -> ToolRegistry:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _error_result(text: str) -> ToolCallResult:
    return ToolCallResult(content=[{"type": "text", "text": text}], is_error=True)


MAX_ERROR_DATA = 4096  # characters of a JSON-RPC error's data shown to the LLM


def _mcp_error_result(name: str, exc: MCPError) -> ToolCallResult:
    """The failure as an error result; a JSON-RPC error keeps its ``code``, ``message`` and
    ``data`` (language-operator's LanguageTool contract: ``{"reason": "connection
    refused"}``), in the text and structured."""
    result = _error_result(f"tool {name} failed: {exc} [{exc.kind}]")
    if not isinstance(exc, JSONRPCError):
        return result
    error: dict[str, object] = {"code": exc.code, "message": exc.message}
    if exc.data is not None:
        error["data"] = exc.data
        shown = json.dumps(exc.data, ensure_ascii=False, default=str)
        if len(shown) > MAX_ERROR_DATA:
            shown = shown[:MAX_ERROR_DATA] + "... (cut)"
        result.content.append({"type": "text", "text": f"error data: {shown}"})
    return replace(result, structured_content={"error": error})


def _names(tools: Mapping[str, RegisteredTool], shown: int = 20) -> str:
    names = sorted(tools)
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return (", ".join(names[:shown]) or "none") + more


def _listed_by_server(tools: Mapping[str, RegisteredTool]) -> dict[str, list[dict[str, object]]]:
    listed: dict[str, list[dict[str, object]]] = {}
    for tool in tools.values():
        if tool.server:
            listed.setdefault(tool.server, []).append(tool.definition)
    return listed


async def connect_tool_registry(
    servers: AgentServers | Sequence[ServerEntry],
    options: ClientOptions = DEFAULT_OPTIONS,
    *,
    naming: Naming = "ark",
    http: HttpToolCaller | None = None,
    wait: Wait = "all",
) -> ToolRegistry:
    """A registry of the servers (those with ``auto_connect``, connected in the background)
    and the HTTP tools (``servers.http_tools``, or the given ``http`` caller).

    ``wait``: ``all`` returns once every server answered or failed; ``first`` as soon as one
    server is ready (or all failed); ``none`` at once.
    """
    if isinstance(servers, AgentServers):
        given, failures, warnings = servers.servers, list(servers.failures), list(servers.warnings)
        http = http or HttpToolCaller(servers.http_tools)
    else:
        given, failures, warnings = list(servers), [], []
    entries: list[ServerEntry] = []
    for entry in given:  # names key the sessions and prefix the tools: they must be unique
        entries.append(unique_server(entry, entries, warnings))
    registry = ToolRegistry(
        {},
        {},
        failures,
        warnings,
        entries={entry.name: entry for entry in entries},
        options=options,
        naming=naming,
        http=http,
    )
    for entry in entries:
        if entry.auto_connect:
            registry.start(entry.name)
    if wait != "none":
        await registry.wait(first=wait == "first")
    return registry


def _session_for(entry: ServerEntry, url: str, options: ClientOptions) -> Session:
    options = replace(
        options,
        headers={**options.headers, **entry.headers},
        timeout=entry.timeout or options.timeout,
    )
    if entry.transport == "stdio":
        return Session(list(entry.command), replace(options, transport="stdio"), env=entry.env)
    return Session(url, options)


async def _endpoint(
    entry: ServerEntry, options: ClientOptions, warnings: list[str]
) -> tuple[str, ServerEntry, ClientOptions]:
    """Where to connect, and with what. A discovery document may name an endpoint on another
    origin; like a redirect, that must not carry what was configured for this one: the
    endpoint is then called with no headers, OAuth or client certificate, with a warning."""
    if entry.transport != "url":
        return entry.url, entry, options
    endpoint = await discover_endpoint(
        entry.url, replace(options, headers={**options.headers, **entry.headers})
    )
    if origin(endpoint) == origin(entry.url):
        return endpoint, entry, options
    warnings.append(
        f"{entry.name}: {display_url(entry.url)} names the endpoint {display_url(endpoint)} "
        "on another origin; connecting without the configured headers or credentials "
        "(give that endpoint itself with transport: http to send them there)"
    )
    bare = replace(options, headers={}, auth=None, cert=None)
    return endpoint, replace(entry, headers={}), bare


async def _connect(
    entry: ServerEntry, options: ClientOptions, warnings: list[str]
) -> tuple[Session, list[dict[str, object]]] | ServerFailure:
    session: Session | None = None
    try:
        url, entry, options = await _endpoint(entry, options, warnings)
        session = _session_for(entry, url, options)
        await session.initialize()
        return session, offered(entry, await session.list_tools())
    except MCPError as exc:
        if session is not None:
            await session.aclose()
        return ServerFailure(entry.name, exc.kind, str(exc))
    except Exception as exc:  # a bug of ours or a library's: the server failed, not the agent
        if session is not None:
            await session.aclose()
        return ServerFailure(entry.name, "error", f"{type(exc).__name__}: {exc}")
    except BaseException:
        if session is not None:
            await session.aclose()
        raise
