"""Agent-side helpers: every MCP server an agent was given, connected at once, as one registry.

An agent learns its servers from ``/etc/agent/config.yaml`` (``tools:``, the language-operator
contract, and ``mcpServers:``, ark style) and from ``MCP_SERVERS``. :func:`load_agent_servers`
reads both; :func:`connect_tool_registry` connects to every server concurrently and names each
tool ``<server>__<tool>`` (ark) or ``mcp:<server>:<tool>``. A server that cannot be used is
reported in ``failures`` and skipped: one broken tool server never takes the agent down.

``mcpServers`` entries are ``http`` (the default), ``url`` (the endpoint is discovered from
a well-known URL) or ``stdio`` (``command``, ``args``, ``env``); ``${VAR}`` and
``${VAR:-default}`` expand in URLs, headers and ``env``. A tool call through the registry
never raises for a server's failure: it returns an ``isError`` result the LLM can read. A
stdio server that crashed is restarted once; a server's ``tools/list_changed`` relists it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from langop_infra.mcp.discovery import discover_endpoint
from langop_infra.mcp.errors import MCPError, TransportError
from langop_infra.mcp.http import display_url
from langop_infra.mcp.options import ClientOptions
from langop_infra.mcp.session import DEFAULT_OPTIONS, Session, ToolCallResult

__all__ = [
    "AGENT_CONFIG_PATH",
    "AgentConfigError",
    "AgentServers",
    "RegisteredTool",
    "ServerEntry",
    "ServerFailure",
    "ToolRegistry",
    "connect_tool_registry",
    "expand_env",
    "load_agent_servers",
]

AGENT_CONFIG_PATH = "/etc/agent/config.yaml"
DEFAULT_MCP_PATH = "/mcp"
Naming = Literal["ark", "mcp"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
TRANSPORTS = ("http", "url", "stdio")


class AgentConfigError(ValueError):
    """The agent config file cannot be read at all (missing, not YAML, not a mapping)."""


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


def expand_env(value: str, env: Mapping[str, str]) -> str:
    """``value`` with ``${VAR}`` and ``${VAR:-default}`` replaced from ``env``.

    As in a shell, the default stands in for a variable that is unset or empty;
    ``KeyError(VAR)`` for a variable without default that is unset.
    """

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if default is not None:
            return env.get(name) or default
        return env[name]

    return _VARIABLE.sub(substitute, value)


def load_agent_servers(
    config: str | Path | Mapping[str, Any] | None = AGENT_CONFIG_PATH,
    *,
    env: Mapping[str, str] | None = None,
) -> AgentServers:
    """The MCP servers of an agent, from its config.yaml (a path or a parsed document) and
    ``MCP_SERVERS`` in ``env`` (default: this process's environment).

    A missing file at the default path counts as empty (the agent may only have
    ``MCP_SERVERS``); an explicit path that cannot be read raises :class:`AgentConfigError`.
    """
    env = os.environ if env is None else env
    document = _read_document(config)
    found = _Collector()
    for name, spec in _mapping(document.get("tools"), "tools").items():
        found.add_tool(str(name), spec)
    servers = document.get("mcpServers") or []
    if not isinstance(servers, list):
        raise AgentConfigError("config.yaml: mcpServers must be a list of {name, url, headers}")
    for index, spec in enumerate(servers):
        found.add_external(index, spec, env)
    for endpoint in env.get("MCP_SERVERS", "").split(","):
        if endpoint.strip():
            found.add_endpoint(endpoint.strip())
    return AgentServers(found.servers, found.failures, found.warnings)


class _Collector:
    def __init__(self) -> None:
        self.servers: list[ServerEntry] = []
        self.failures: list[ServerFailure] = []
        self.warnings: list[str] = []
        self._origins: set[tuple[str, str, int | None]] = set()

    def add_tool(self, name: str, spec: Any) -> None:
        if not isinstance(spec, dict) or not isinstance(spec.get("endpoint"), str):
            self._fail(name, f"tools.{name}: needs an endpoint URL string")
            return
        if spec.get("protocol", "mcp") != "mcp":
            return  # not an MCP tool: nothing to list
        path = str(spec.get("mcpPath") or DEFAULT_MCP_PATH)
        url = spec["endpoint"].rstrip("/") + ("" if path.startswith("/") else "/") + path
        self._add(ServerEntry(name, url, source="config.yaml tools"))

    def add_external(self, index: int, spec: Any, env: Mapping[str, str]) -> None:
        where = f"mcpServers[{index}]"
        transport = spec.get("transport", "http") if isinstance(spec, dict) else "http"
        needs = "command" if transport == "stdio" else "url"
        if not isinstance(spec, dict) or not spec.get("name") or not spec.get(needs):
            given = spec.get("name") if isinstance(spec, dict) else None
            self._fail(str(given) if given else where, f"{where}: needs a name and a {needs}")
            return
        name = str(spec["name"])
        if transport not in TRANSPORTS:
            self._fail(name, f"{where}.transport: must be one of {', '.join(TRANSPORTS)}")
            return
        try:
            url = expand_env(str(spec.get("url") or ""), env)
            headers = self._headers(where, spec.get("headers") or [], env)
            command, child_env = self._command(where, spec, env)
        except _Unset as unset:
            self._fail(name, str(unset))
            return
        timeout = spec.get("timeoutSeconds")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            self._fail(name, f"{where}.timeoutSeconds: must be a positive number of seconds")
            return
        source = "config.yaml mcpServers"
        self._add(ServerEntry(name, url, headers, timeout, source, transport, command, child_env))

    @staticmethod
    def _headers(where: str, specs: Any, env: Mapping[str, str]) -> dict[str, str]:
        headers: dict[str, str] = {}
        for header in specs if isinstance(specs, list) else []:
            header_name = header.get("name") if isinstance(header, dict) else None
            if not header_name:
                raise _Unset(f"{where}.headers: every header needs a name")
            try:
                headers[str(header_name)] = _header_value(header, env)
            except _Unset as unset:
                raise _Unset(f"{where}.headers.{header_name}: {unset}") from None
        return headers

    @staticmethod
    def _command(
        where: str, spec: Mapping[str, Any], env: Mapping[str, str]
    ) -> tuple[tuple[str, ...], dict[str, str]]:
        if spec.get("transport") != "stdio":
            return (), {}
        args = spec.get("args") or []
        if not isinstance(args, list):
            raise _Unset(f"{where}.args: must be a list of strings")
        child_env: dict[str, str] = {}
        for key, value in (spec.get("env") or {}).items():
            try:
                child_env[str(key)] = expand_env(str(value), env)
            except KeyError as exc:
                raise _Unset(
                    f"{where}.env.{key}: ${{{exc.args[0]}}} is not set in the environment"
                ) from None
        return (str(spec["command"]), *map(str, args)), child_env

    def add_endpoint(self, endpoint: str) -> None:
        if _origin(endpoint) in self._origins:
            return  # config.yaml has it already, with its real path
        url = endpoint.rstrip("/") + DEFAULT_MCP_PATH
        self._add(ServerEntry(_name_from_host(endpoint), url, source="MCP_SERVERS"))

    def _add(self, entry: ServerEntry) -> None:
        self.servers.append(_unique_server(entry, self.servers, self.warnings))
        if entry.url:
            self._origins.add(_origin(entry.url))

    def _fail(self, name: str, message: str) -> None:
        self.failures.append(ServerFailure(name, "config", message))


def _unique_server(
    entry: ServerEntry, taken: Sequence[ServerEntry], warnings: list[str]
) -> ServerEntry:
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


class _Unset(Exception):
    """A header needs an environment variable that is not set."""


def _header_value(header: Mapping[str, Any], env: Mapping[str, str]) -> str:
    if header.get("valueFromEnv"):
        variable = str(header["valueFromEnv"])
        if variable not in env:
            raise _Unset(f"environment variable {variable} is not set")
        return env[variable]
    try:
        return expand_env(str(header.get("value", "")), env)
    except KeyError as exc:
        raise _Unset(f"${{{exc.args[0]}}} is not set in the environment") from None


def _read_document(config: str | Path | Mapping[str, Any] | None) -> Mapping[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return config
    path = Path(config)
    if not path.exists() and str(config) == AGENT_CONFIG_PATH:
        return {}
    from langop_infra import yaml_io

    try:
        document = yaml_io.load(path.read_text(encoding="utf-8"))
    except (OSError, yaml_io.YAMLError) as exc:
        raise AgentConfigError(f"cannot read agent config {path}: {exc}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise AgentConfigError(f"agent config {path} is not a YAML mapping")
    return document


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentConfigError(f"config.yaml: {key} must be a mapping of name to settings")
    return value


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port = None
    return (
        parts.scheme,
        (parts.hostname or "").lower(),
        port or {"https": 443}.get(parts.scheme, 80),
    )


def _name_from_host(endpoint: str) -> str:
    _, host, port = _origin(endpoint)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host.split(".")[0] or "server"
    return re.sub(r"[^0-9A-Za-z]+", "-", f"{host}-{port}").strip("-")


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
        self.relisted = 0  # how many list_changed relists finished (for observers and tests)
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
        self.relisted += 1

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
        entries.append(_unique_server(entry, entries, warnings))
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
