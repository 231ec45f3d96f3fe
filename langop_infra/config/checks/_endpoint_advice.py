"""Endpoints that deserve a second look, reported as warnings by validate and render (and
judged by the policy pack's ``langop-endpoints``, which configuration can make mandatory):

- a URL whose query carries a credential (``?apikey=``, ``&token=``, ``sig=``): it lands in
  plain text in a ConfigMap, env and Pulumi state, and in every access log on the way; each
  warning names the field that takes it from a Secret instead;
- a URL on a link-local address (``169.254.0.0/16``, ``fe80::/10``), a cloud metadata
  service (``169.254.169.254``, ``metadata.google.internal``, ``fd00:ec2::254``,
  ``100.100.100.200``) or the Kubernetes API server (``kubernetes.default…``): a tool, an MCP
  server or a model there hands the agent the node's or the cluster's credentials.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from urllib.parse import parse_qsl, urlsplit

from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

_CREDENTIAL_PARAM = re.compile(
    r"(?i)^(api[_-]?key|apikey|key|token|access[_-]?token|auth|authorization|secret|"
    r"client[_-]?secret|password|passwd|pwd|sig|signature|code|x-api-key|.*[_-](key|token|"
    r"secret|password))$"
)
METADATA_HOSTS = frozenset(
    {
        "169.254.169.254",
        "169.254.170.2",
        "fd00:ec2::254",
        "100.100.100.200",
        "metadata",
        "metadata.google.internal",
        "metadata.azure.internal",
    }
)
API_SERVER_HOSTS = frozenset(
    {
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    }
)
# Where each field's credential goes instead of its query string.
SECRET_ROUTES = {
    "mcpServers": "a header with valueFrom: {secretKeyRef: {name, key}}",
    "webhookTools": "authentication: {type: apiKey, headerName, ...} from a Secret",
    "httpTools": "authentication: {type: apiKey, headerName, ...} from a Secret",
    "models": "apiKey: {secretKeyRef: {name, key}}",
    "schemaSync": "schemaSync.headers with valueFrom: {secretKeyRef: {name, key}}",
}


def query_credentials(url: str) -> list[str]:
    """The names of the query parameters of ``url`` that look like credentials."""
    try:
        query = urlsplit(url).query
    except ValueError:
        return []
    names = [name for name, value in parse_qsl(query, keep_blank_values=True) if value]
    return sorted({name for name in names if _CREDENTIAL_PARAM.match(name)})


def endpoint_risk(url: str) -> str | None:
    """Why ``url``'s host deserves a warning (metadata, link-local, API server), or None."""
    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    if host in METADATA_HOSTS:
        return f"{host} is a cloud metadata service, which hands out the node's credentials"
    if host in API_SERVER_HOSTS:
        return f"{host} is the Kubernetes API server"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.is_link_local:
        return f"{host} is a link-local address, where metadata services answer"
    return None


def endpoints(cluster: ClusterSpec) -> Iterator[tuple[str, str, str]]:
    """``(path, url, kind)`` of every URL the stack config gives an agent or the gateway."""
    for i, agent in enumerate(cluster.agents):
        for j, server in enumerate(agent.mcp_servers):
            yield f"agents[{i}].mcpServers[{j}].url", server.url, "mcpServers"
        for j, hook in enumerate(agent.webhook_tools):
            yield f"agents[{i}].webhookTools[{j}].url", hook.url, "webhookTools"
    for i, tool in enumerate(cluster.http_tools):
        if tool.endpoint:
            yield f"httpTools[{i}].endpoint", tool.endpoint, "httpTools"
    for i, model in enumerate(cluster.models):
        if model.endpoint:
            yield f"models[{i}].endpoint", model.endpoint, "models"
    for i, tool in enumerate(cluster.tools):
        if tool.schema_sync.sync_url:
            yield f"tools[{i}].schemaSync.syncUrl", tool.schema_sync.sync_url, "schemaSync"


def endpoint_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """A warning for each query-string credential and each risky host among the stack's
    endpoints; the messages never quote a query value."""
    warnings: list[Problem] = []
    for where, url, kind in endpoints(cluster):
        names = query_credentials(url)
        if names:
            warnings.append(
                Problem(
                    join_path(path, where),
                    f"the query parameter{'s' if len(names) > 1 else ''} {', '.join(names)} "
                    "look like a credential, which lands in plain text in a ConfigMap, env, "
                    f"Pulumi state and access logs; send it with {SECRET_ROUTES[kind]}",
                    "langop_query_credential",
                )
            )
        risk = endpoint_risk(url)
        if risk:
            warnings.append(
                Problem(
                    join_path(path, where),
                    f"{risk}; an agent calling it may be handed credentials it must not "
                    "have. Point it at the service meant, or accept it in the policy pack "
                    "(langop-endpoints)",
                    "langop_risky_endpoint",
                )
            )
    return warnings
