"""Agent-side helpers: every MCP server an agent was given, connected at once, as one registry.

An agent learns its servers from ``/etc/agent/config.yaml`` (``tools:``, the language-operator
contract, and ``mcpServers:``, ark style) and from ``MCP_SERVERS``. :func:`load_agent_servers`
reads both; :func:`connect_tool_registry` connects to every server concurrently and names each
tool ``<server>__<tool>`` (ark) or ``mcp:<server>:<tool>``. A server that cannot be used is
reported in ``failures`` and skipped: one broken tool server never takes the agent down.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from langop_infra.mcp.errors import MCPError
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

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class AgentConfigError(ValueError):
    """The agent config file cannot be read at all (missing, not YAML, not a mapping)."""


@dataclass(frozen=True)
class ServerEntry:
    """One MCP server to connect to: its name in tool prefixes, URL, headers, timeout."""

    name: str
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    source: str = ""


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
    """``value`` with every ``${VAR}`` replaced from ``env``; ``KeyError(VAR)`` if one is unset."""

    def substitute(match: re.Match[str]) -> str:
        return env[match.group(1)]

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
        url = join_mcp_path(spec["endpoint"], str(spec.get("mcpPath") or DEFAULT_MCP_PATH))
        self._add(ServerEntry(name, url, source="config.yaml tools"))

    def add_external(self, index: int, spec: Any, env: Mapping[str, str]) -> None:
        where = f"mcpServers[{index}]"
        if not isinstance(spec, dict) or not spec.get("name") or not spec.get("url"):
            given = spec.get("name") if isinstance(spec, dict) else None
            self._fail(
                str(given) if given else where,
                f"{where}: needs a name and a url",
            )
            return
        name, headers = str(spec["name"]), {}
        for header in spec.get("headers") or []:
            header_name = header.get("name") if isinstance(header, dict) else None
            if not header_name:
                self._fail(name, f"{where}.headers: every header needs a name")
                return
            try:
                headers[str(header_name)] = _header_value(header, env)
            except _Unset as unset:
                self._fail(name, f"{where}.headers.{header_name}: {unset}")
                return
        timeout = spec.get("timeoutSeconds")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            self._fail(name, f"{where}.timeoutSeconds: must be a positive number of seconds")
            return
        entry = ServerEntry(name, str(spec["url"]), headers, timeout, "config.yaml mcpServers")
        self._add(entry)

    def add_endpoint(self, endpoint: str) -> None:
        if _origin(endpoint) in self._origins:
            return  # config.yaml has it already, with its real path
        url = join_mcp_path(endpoint, DEFAULT_MCP_PATH)
        self._add(ServerEntry(_name_from_host(endpoint), url, source="MCP_SERVERS"))

    def _add(self, entry: ServerEntry) -> None:
        self.servers.append(_unique_server(entry, self.servers, self.warnings))
        self._origins.add(_origin(entry.url))

    def _fail(self, name: str, message: str) -> None:
        self.failures.append(ServerFailure(name, "config", message))


def join_mcp_path(endpoint: str, path: str) -> str:
    """``endpoint`` with the MCP ``path`` appended, unless it already ends with it (upstream
    agents are given endpoints that carry the path: ``http://m:8080/mcp``)."""
    path = "/" + path.lstrip("/")
    base = endpoint.rstrip("/")
    if urlsplit(base).path.rstrip("/").endswith(path.rstrip("/")):
        return base
    return base + path


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
        f"two servers are named {entry.name!r}; the one at {display_url(entry.url)} "
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


class ToolRegistry:
    """Tools of every connected server under collision-free names; calls go to their server."""

    def __init__(
        self,
        sessions: Mapping[str, Session],
        tools: Mapping[str, RegisteredTool],
        failures: Sequence[ServerFailure] = (),
        warnings: Sequence[str] = (),
    ) -> None:
        self.sessions = dict(sessions)
        self.tools = dict(tools)
        self.failures = list(failures)
        self.warnings = list(warnings)

    def definitions(self) -> list[dict[str, Any]]:
        """Every tool's definition, ``name`` replaced by its registry name (for an LLM)."""
        return [{**tool.definition, "name": tool.name} for tool in self.tools.values()]

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> ToolCallResult:
        """Call a tool by its registry name; ``KeyError`` if there is no such tool."""
        try:
            tool = self.tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r} in the registry") from None
        return await self.sessions[tool.server].call_tool(tool.tool_name, arguments)

    async def aclose(self) -> None:
        """Close every session."""
        await asyncio.gather(*(session.aclose() for session in self.sessions.values()))

    async def __aenter__(self) -> ToolRegistry:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


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
    tools: dict[str, RegisteredTool] = {}
    for entry, outcome in zip(entries, results, strict=True):
        if isinstance(outcome, ServerFailure):
            failures.append(outcome)
            continue
        session, listed = outcome
        sessions[entry.name] = session
        seen: set[str] = set()
        for definition in listed:
            tool_name = definition["name"]
            if tool_name in seen:
                warnings.append(f"{entry.name} lists tool {tool_name!r} twice; kept the first")
                continue
            seen.add(tool_name)
            name = (
                f"{entry.name}__{tool_name}" if naming == "ark" else f"mcp:{entry.name}:{tool_name}"
            )
            if name in tools:
                unique = next(
                    f"{name}_{n}" for n in itertools.count(2) if f"{name}_{n}" not in tools
                )
                warnings.append(
                    f"tool name {name!r} is taken; {entry.name}'s {tool_name!r} is {unique!r}"
                )
                name = unique
            tools[name] = RegisteredTool(name, entry.name, tool_name, definition)
    return ToolRegistry(sessions, tools, failures, warnings)


async def _connect(
    entry: ServerEntry, options: ClientOptions
) -> tuple[Session, list[dict[str, Any]]] | ServerFailure:
    session: Session | None = None
    try:
        session = Session(
            entry.url,
            replace(
                options,
                headers={**options.headers, **entry.headers},
                timeout=entry.timeout or options.timeout,
            ),
        )
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
