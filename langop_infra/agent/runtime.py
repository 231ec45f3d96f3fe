"""Agent-side helpers: every MCP server an agent was given, connected at once, as one registry.

An agent learns its servers from ``/etc/agent/config.yaml`` (``tools:``, the language-operator
contract, and ``mcpServers:``, ark style) and from ``MCP_SERVERS``. :func:`load_agent_servers`
reads both; :func:`connect_tool_registry` (from :mod:`langop_infra.agent._registry`,
re-exported here) connects to them all. A server that cannot be used is reported in
``failures`` and skipped: one broken tool server never takes the agent down.

``mcpServers`` entries are ``http`` (the default), ``url`` (the endpoint is discovered from
a well-known URL) or ``stdio`` (``command``, ``args``, ``env``); ``${VAR}`` and
``${VAR:-default}`` expand from the agent's environment in headers, ``args`` and ``env``,
and in a URL only from the entry's own ``env``: a URL names no variable its config does not
declare. ``webhookTools`` are the agent's
HTTP tools (:mod:`langop_infra.agent.http_tools`), registered beside the MCP tools.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from langop_infra._errors import LangopError
from langop_infra.agent._ark_env import ARK_SERVERS_ENV, ark_sections
from langop_infra.agent._expand import ExpansionProblem, declared_env, expand_env
from langop_infra.agent._naming import tool_overrides
from langop_infra.agent._registry import (
    AgentServers,
    Naming,
    RegisteredTool,
    ServerEntry,
    ServerFailure,
    ToolRegistry,
    connect_tool_registry,
    unique_server,
)
from langop_infra.agent.http_tools import HttpToolEntry, load_http_tools
from langop_infra.mcp._ports import effective_port

__all__ = [
    "AGENT_CONFIG_PATH",
    "AgentConfigError",
    "AgentServers",
    "HttpToolEntry",
    "Naming",
    "RegisteredTool",
    "ServerEntry",
    "ServerFailure",
    "ToolRegistry",
    "connect_tool_registry",
    "expand_env",
    "load_agent_servers",
]

AGENT_CONFIG_PATH = "/etc/agent/config.yaml"
# language-operator keeps servers.json at {dataDir}/mcp/servers.json; the data dir comes from the
# ``data_dir`` argument or this env var.
DATA_DIR_ENV = "AGENT_DATA_DIR"
DEFAULT_MCP_PATH = "/mcp"

TRANSPORTS = ("http", "url", "stdio")
# Keys of the agent's config.yaml (manifests/_contract.py, manifests/_agent_models.py) and
# servers.json.
CONFIG_KEYS = frozenset(
    {
        "tools",
        "mcpServers",
        "webhookTools",
        "servers",
        "agent",
        "models",
        "instructions",
        "personas",
    }
)


class AgentConfigError(LangopError, ValueError):
    """The agent config file cannot be read at all (missing, not YAML, not a mapping)."""


def load_agent_servers(
    config: str | Path | Mapping[str, object] | None = AGENT_CONFIG_PATH,
    *,
    env: Mapping[str, str] | None = None,
    data_dir: str | Path | None = None,
) -> AgentServers:
    """The MCP servers of an agent, from its config.yaml (a path or a parsed document),
    ``MCP_SERVERS`` in ``env`` (default: this process's environment), ark's env
    (``AGENT_MCP_SERVERS`` with its ``ARK_MCP_*_HEADER_*`` variables, ``AGENT_WEBHOOK_TOOLS``)
    for what config.yaml does not say, and language-operator's ``{data_dir}/mcp/servers.json``
    (``data_dir`` or ``AGENT_DATA_DIR``) when it exists.

    A missing file at the default path counts as empty (the agent may only have
    ``MCP_SERVERS``); an explicit path that cannot be read raises :class:`AgentConfigError`.
    """
    env = os.environ if env is None else env
    document = _read_document(config)
    found = _Collector()
    ark = ark_sections(document, env)  # ark's env, for the sections config.yaml lacks
    found.failures += [ServerFailure(name, "config", problem) for name, problem in ark.failures]
    found.warnings += ark.warnings
    for index, spec in enumerate(ark.sections.get("mcpServers", [])):
        found.add_external(index, spec, env, key=ARK_SERVERS_ENV)
    if "webhookTools" in ark.sections:
        document = {**document, "webhookTools": ark.sections["webhookTools"]}
    document = _with_data_dir_servers(document, data_dir or env.get(DATA_DIR_ENV))
    for name, spec in _mapping(document.get("tools"), "tools").items():
        found.add_tool(str(name), spec, env)
    servers: object = document.get("mcpServers") or []
    if not isinstance(servers, list):
        raise AgentConfigError("config.yaml: mcpServers must be a list of {name, url, headers}")
    for index, spec in enumerate(cast("list[Any]", servers)):
        found.add_external(index, spec, env)
    # language-operator's servers.json: {"servers": [{name, transport, command, args, env, url,
    # auto_connect}]}. A `servers` key that is not a list is an error, never 0 servers.
    listed = document.get("servers", [])
    if not isinstance(listed, list):
        raise AgentConfigError("servers.json: servers must be a list of server settings")
    for index, spec in enumerate(cast("list[Any]", listed)):
        found.add_external(index, spec, env, key="servers")
    for endpoint in env.get("MCP_SERVERS", "").split(","):
        if endpoint.strip():
            found.add_endpoint(endpoint.strip())
    http_tools, unusable = load_http_tools(document, env)
    found.failures += [ServerFailure(name, "config", problem) for name, problem in unusable]
    if not set(document) & CONFIG_KEYS and document:
        # A file of another shape would read as 0 servers: say so, with what it holds.
        keys = ", ".join(sorted(map(str, document))[:8])
        found.warnings.append(
            f"the agent config has none of the keys an agent config has (it has: {keys}); "
            "expected tools, mcpServers, webhookTools or a servers.json `servers` list"
        )
    return AgentServers(found.servers, found.failures, found.warnings, http_tools)


class _Collector:
    def __init__(self) -> None:
        self.servers: list[ServerEntry] = []
        self.failures: list[ServerFailure] = []
        self.warnings: list[str] = []
        self._origins: set[tuple[str, str, int | None]] = set()

    def add_tool(self, name: str, spec: Any, env: Mapping[str, str]) -> None:
        fields = _object(spec)
        if fields is None or not isinstance(fields.get("endpoint"), str):
            self._fail(name, f"tools.{name}: needs an endpoint URL string")
            return
        if fields.get("protocol", "mcp") != "mcp":
            return  # not an MCP tool: nothing to list
        allowed = fields.get("allowedTools")
        if allowed is not None and not _string_list(allowed):
            self._fail(name, f"tools.{name}.allowedTools: must be a list of tool names")
            return
        try:
            headers = self._headers(f"tools.{name}", fields.get("headers") or [], env)
        except _Unset as unset:
            self._fail(name, str(unset))
            return
        overrides = tool_overrides(fields.get("overrides"))
        if overrides is None:
            self._fail(
                name, f"tools.{name}.overrides: must map tool names to {{name, description}}"
            )
            return
        url = join_mcp_path(fields["endpoint"], str(fields.get("mcpPath") or DEFAULT_MCP_PATH))
        entry = ServerEntry(name, url, headers, source="config.yaml tools")
        allowed_tools = None if allowed is None else tuple(allowed)
        self._add(replace(entry, allowed_tools=allowed_tools, overrides=overrides))

    def add_external(
        self, index: int, spec: object, env: Mapping[str, str], key: str = "mcpServers"
    ) -> None:
        where = f"{key}[{index}]"
        fields = _object(spec)
        transport = fields.get("transport", "http") if fields is not None else "http"
        needs = "command" if transport == "stdio" else "url"
        if fields is None or not fields.get("name") or not fields.get(needs):
            given = fields.get("name") if fields is not None else None
            self._fail(str(given) if given else where, f"{where}: needs a name and a {needs}")
            return
        name = str(fields["name"])
        if transport not in TRANSPORTS:
            self._fail(name, f"{where}.transport: must be one of {', '.join(TRANSPORTS)}")
            return
        try:
            declared = self._declared(where, fields, env)
            url = _expand_url(where, str(fields.get("url") or ""), declared)
            headers = self._headers(where, fields.get("headers") or [], env)
            command, child_env = self._command(where, fields, env)
        except _Unset as unset:
            self._fail(name, str(unset))
            return
        timeout = fields.get("timeoutSeconds")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
        ):
            self._fail(name, f"{where}.timeoutSeconds: must be a positive number of seconds")
            return
        auto = fields.get("autoConnect", fields.get("auto_connect", True))
        if not isinstance(auto, bool):
            self._fail(name, f"{where}.autoConnect: must be true or false")
            return
        allowed = fields.get("allowedTools")
        if allowed is not None and not _string_list(allowed):
            self._fail(name, f"{where}.allowedTools: must be a list of tool names")
            return
        source = {"mcpServers": "config.yaml mcpServers", "servers": "servers.json"}.get(key, key)
        self._add(
            ServerEntry(
                name,
                url,
                headers,
                timeout,
                source,
                transport,
                command,
                child_env,
                auto_connect=auto,
                allowed_tools=None if allowed is None else tuple(cast("list[str]", allowed)),
            )
        )

    @staticmethod
    def _headers(where: str, specs: object, env: Mapping[str, str]) -> dict[str, str]:
        headers: dict[str, str] = {}
        for header in cast("list[object]", specs) if isinstance(specs, list) else []:
            fields = _object(header)
            if fields is None or not fields.get("name"):
                raise _Unset(f"{where}.headers: every header needs a name")
            header_name = fields["name"]
            try:
                headers[str(header_name)] = _header_value(fields, env)
            except _Unset as unset:
                raise _Unset(f"{where}.headers.{header_name}: {unset}") from None
        return headers

    @staticmethod
    def _command(
        where: str, spec: Mapping[str, object], env: Mapping[str, str]
    ) -> tuple[tuple[str, ...], dict[str, str]]:
        if spec.get("transport") != "stdio":
            return (), {}
        args: object = spec.get("args") or []
        if not isinstance(args, list):
            raise _Unset(f"{where}.args: must be a list of strings")
        expanded: list[str] = []
        # language-operator's MCP client: ${VAR} expands in args too
        for position, arg in enumerate(cast("list[object]", args)):
            try:
                expanded.append(expand_env(str(arg), env))
            except KeyError as exc:
                raise _Unset(
                    f"{where}.args[{position}]: ${{{exc.args[0]}}} is not set in the environment"
                ) from None
        return (str(spec["command"]), *expanded), _Collector._declared(where, spec, env)

    @staticmethod
    def _declared(where: str, spec: Mapping[str, object], env: Mapping[str, str]) -> dict[str, str]:
        """The entry's ``env``, expanded from the agent's (:func:`declared_env`)."""
        try:
            return declared_env(where, spec, env)
        except ExpansionProblem as problem:
            raise _Unset(str(problem)) from None

    def add_endpoint(self, endpoint: str) -> None:
        if _origin(endpoint) in self._origins:
            return  # config.yaml has it already, with its real path
        url = join_mcp_path(endpoint, DEFAULT_MCP_PATH)
        self._add(ServerEntry(_name_from_host(endpoint), url, source="MCP_SERVERS"))

    def _add(self, entry: ServerEntry) -> None:
        self.servers.append(unique_server(entry, self.servers, self.warnings))
        if entry.url:
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


def _expand_url(where: str, url: str, declared: Mapping[str, str]) -> str:
    """``url`` with ``${VAR}`` taken from the entry's own ``env`` only: a URL must not pick
    up any variable of the agent (``?k=${OPENAI_API_KEY}`` would send the key)."""
    try:
        return expand_env(url, declared)
    except KeyError as exc:
        raise _Unset(
            f"{where}.url: ${{{exc.args[0]}}} is not declared in this server's env; a URL "
            f"expands only the variables its entry declares (env: {{{exc.args[0]}: ...}})"
        ) from None


class _Unset(Exception):
    """A header needs an environment variable that is not set."""


def _header_value(header: Mapping[str, object], env: Mapping[str, str]) -> str:
    if header.get("valueFromEnv"):
        variable = str(header["valueFromEnv"])
        if variable not in env:
            raise _Unset(f"environment variable {variable} is not set")
        return env[variable]
    try:
        return expand_env(str(header.get("value", "")), env)
    except KeyError as exc:
        raise _Unset(f"${{{exc.args[0]}}} is not set in the environment") from None


def _read_document(config: str | Path | Mapping[str, object] | None) -> Mapping[str, Any]:
    if config is None:
        return {}
    if isinstance(config, Mapping):
        return config
    path = Path(config)
    if not path.exists() and str(config) == AGENT_CONFIG_PATH:
        return {}
    from langop_infra.core import _yaml_io as yaml_io

    try:
        if path.stat().st_size > yaml_io.MAX_CONFIG_BYTES:
            raise yaml_io.ConfigYAMLError(f"over {yaml_io.MAX_CONFIG_BYTES} bytes")
        # Bounded as stack files are: the file may come from a pull request.
        document = yaml_io.load_config(path.read_bytes())
    except (OSError, yaml_io.YAMLError) as exc:
        raise AgentConfigError(f"cannot read agent config {path}: {exc}") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise AgentConfigError(f"agent config {path} is not a YAML mapping")
    return cast("dict[str, Any]", document)


def _with_data_dir_servers(
    document: Mapping[str, object], data_dir: str | Path | None
) -> Mapping[str, Any]:
    """``document`` with the ``servers`` of ``{data_dir}/mcp/servers.json`` appended."""
    if not data_dir:
        return document
    path = Path(data_dir) / "mcp" / "servers.json"
    if not path.is_file():
        return document
    extra = _read_document(path).get("servers", [])
    if not isinstance(extra, list):
        raise AgentConfigError(f"{path}: servers must be a list of server settings")
    given: object = document.get("servers", [])
    listed = cast("list[Any]", given) if isinstance(given, list) else []
    return {**document, "servers": [*listed, *cast("list[Any]", extra)]}


def _mapping(value: object, key: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise AgentConfigError(f"config.yaml: {key} must be a mapping of name to settings")
    return cast("dict[str, Any]", value)


def _object(value: object) -> dict[str, Any] | None:
    """``value`` when it is a mapping of settings (a dict), else None."""
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _string_list(value: object) -> bool:
    """Whether ``value`` is a list of strings."""
    return isinstance(value, list) and all(isinstance(t, str) for t in cast("list[object]", value))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url if "://" in url else f"http://{url}")
    try:
        port = parts.port
    except ValueError:
        port = None
    return (
        parts.scheme,
        (parts.hostname or "").lower(),
        effective_port(parts.scheme, port, 80),
    )


def _name_from_host(endpoint: str) -> str:
    _, host, port = _origin(endpoint)
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host.split(".")[0] or "server"
    return re.sub(r"[^0-9A-Za-z]+", "-", f"{host}-{port}").strip("-")
