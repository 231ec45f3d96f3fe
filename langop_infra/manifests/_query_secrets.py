"""Query-string credentials routed into the agent's Secret (#36 §5).

An MCP server or webhook tool URL such as ``https://api.example.com/mcp?apikey=abc123`` is
given to the agent as ``https://api.example.com/mcp?apikey=${ARK_MCP_API_QUERY_APIKEY}``:
the value goes into the agent's own Secret ``<agent>-env`` under that env var's name and
reaches the pod through ``secretKeyRef``; the config entry declares the variable in its
``env``, the only place the agent runtime takes a URL's variables from. The value is kept as
written (still percent-encoded), so the expanded URL is the configured one, byte for byte.

Which parameters count is :mod:`langop_infra.config.checks._endpoint_advice`'s decision, the
one validate warns with; a value that is already a ``${VAR}`` reference, or that holds one,
is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from langop_infra.config._names import HEADER_ENV_PREFIX, WEBHOOK_ENV_PREFIX, env_token
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._endpoint_advice import is_credential_param

# ``${VAR}`` and ``${VAR:-default}``, as the agent runtime expands them.
URL_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")


@dataclass(frozen=True)
class RoutedUrl:
    """A URL with each query credential replaced by ``${VAR}``, and ``{VAR: value}``."""

    url: str
    secrets: dict[str, str] = field(default_factory=dict[str, str])


def server_query_prefix(server: str) -> str:
    """``ARK_MCP_<SERVER>_QUERY_``: the env vars of an MCP server's query credentials."""
    return f"{HEADER_ENV_PREFIX}{env_token(server)}_QUERY_"


def webhook_query_prefix(tool: str) -> str:
    """``AGENT_WEBHOOK_<TOOL>_QUERY_``: the env vars of a webhook tool's query credentials."""
    return f"{WEBHOOK_ENV_PREFIX}{env_token(tool)}_QUERY_"


def server_url(name: str, url: str) -> RoutedUrl:
    """An MCP server's URL as the agent is given it: query credentials read from env."""
    return route_query(url, server_query_prefix(name))


def webhook_url(name: str, url: str) -> RoutedUrl:
    """A webhook tool's URL as the agent is given it: query credentials read from env."""
    return route_query(url, webhook_query_prefix(name))


def url_variables(url: str) -> dict[str, str]:
    """``{VAR: "${VAR}"}`` for each variable ``url`` names: the declaration that lets the
    agent expand it (a URL expands only what its entry declares)."""
    return dict(sorted({m.group(1): m.group(0) for m in URL_VARIABLE.finditer(url)}.items()))


def routed_query_env(agent: AgentSpec) -> dict[str, str]:
    """``{VAR: value}`` of every query credential of the agent's MCP servers and enabled
    webhook tools: what its own Secret holds for them."""
    routed: dict[str, str] = {}
    for server in agent.mcp_servers:
        routed.update(server_url(server.name, server.url).secrets)
    for tool in agent.webhook_tools:
        if tool.enabled:
            routed.update(webhook_url(tool.name, tool.url).secrets)
    return routed


def route_query(url: str, prefix: str) -> RoutedUrl:
    """``url`` with every credential-bearing query value replaced by ``${<prefix><NAME>}``
    (``_2``, ``_3``, ... when two parameters share a name's token), and those values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return RoutedUrl(url)
    if not parts.query:
        return RoutedUrl(url)
    secrets: dict[str, str] = {}
    pieces: list[str] = []
    for piece in parts.query.split("&"):
        raw_name, equals, raw_value = piece.partition("=")
        name = unquote_plus(raw_name)
        if not equals or not raw_value or "${" in raw_value or not is_credential_param(name):
            pieces.append(piece)
            continue
        variable = _unused(prefix + env_token(name), secrets)
        secrets[variable] = raw_value
        pieces.append(f"{raw_name}=${{{variable}}}")
    if not secrets:
        return RoutedUrl(url)
    return RoutedUrl(urlunsplit(parts._replace(query="&".join(pieces))), secrets)


def _unused(variable: str, taken: dict[str, str]) -> str:
    if variable not in taken:
        return variable
    n = 2
    while f"{variable}_{n}" in taken:
        n += 1
    return f"{variable}_{n}"
