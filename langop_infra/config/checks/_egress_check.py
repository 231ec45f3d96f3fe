"""Does an agent's restricted egress admit the servers and models it was given? Checked at
render.

A NetworkPolicy names addresses, not hosts. An IP literal in a URL is checked exactly against
``egressTo``; an in-cluster Service host (``<svc>.<ns>.svc…``) against namespace peers; any
other host name only through an ``egressTo`` entry that names it in ``host``. What cannot be
shown admitted is reported: a warning, or an error under ``defaults.strictEgress: true``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Sequence
from urllib.parse import urlsplit

from langop_infra.config._http_tool import resolved_webhook_tools
from langop_infra.config._model import via_gateway
from langop_infra.config._network import EgressRule
from langop_infra.config.agent import AgentSpec, model_refs
from langop_infra.config.cluster import ClusterSpec, gateway_defaults
from langop_infra.core.problems import Problem, join_path
from langop_infra.mcp._ports import effective_port


def _admits_port(rule: EgressRule, port: int) -> bool:
    return not rule.ports or any(p.port == port and p.protocol == "TCP" for p in rule.ports)


def _ip_admitted(
    rule: EgressRule, address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int
) -> bool:
    if rule.cidr is None or not _admits_port(rule, port):
        return False
    if address not in ipaddress.ip_network(rule.cidr, strict=False):
        return False
    return not any(address in ipaddress.ip_network(e, strict=False) for e in rule.except_)


def url_verdict(url: str, rules: list[EgressRule]) -> str | None:
    """None when ``rules`` admit ``url``; otherwise why not, with the fix."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = effective_port(parts.scheme, parts.port, 80)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        if any(_ip_admitted(r, address, port) for r in rules):
            return None
        bits = 32 if address.version == 4 else 128
        return (
            f"restricted egress does not admit {host} port {port}; add egressTo "
            f"{{cidr: {host}/{bits}, ports: [{{port: {port}}}]}}"
        )
    labels = host.split(".")
    if len(labels) >= 3 and labels[2] == "svc":
        namespace = labels[1]
        if any(r.namespace == namespace and _admits_port(r, port) for r in rules):
            return None
        return (
            f"restricted egress does not admit namespace {namespace!r} port {port}; add egressTo "
            f"{{namespace: {namespace}, ports: [{{port: {port}}}]}}"
        )
    named = [r for r in rules if r.host is not None and r.host.lower() == host]
    if any(_admits_port(r, port) for r in named):
        return None
    if named:
        return f"the egressTo entry for {host} does not admit port {port}; add it to its ports"
    return (
        f"cannot verify that restricted egress admits {host} port {port}: a NetworkPolicy "
        f"matches addresses, not names; add host: {host} to the egressTo entry whose cidr "
        "covers it"
    )


def _agent_urls(agent: AgentSpec) -> Iterator[tuple[str, str]]:
    for j, server in enumerate(agent.mcp_servers):
        yield f"mcpServers[{j}].url", server.url
    for j, tool in enumerate(agent.webhook_tools):
        if tool.enabled:
            yield f"webhookTools[{j}].url", tool.url


def _model_urls(
    agent: AgentSpec, cluster: ClusterSpec
) -> Iterator[tuple[str, str, list[EgressRule]]]:
    """Endpoints of the models the agent calls directly, with the model's own ``egressTo``
    (which the agent's egress policy also gets); the gateway's models are the gateway's."""
    models = {m.name: m for m in cluster.models}
    gateway = gateway_defaults(cluster.defaults)
    for j, ref in enumerate(model_refs(agent, models)):
        model = models.get(ref.name)
        if model is None or model.endpoint is None or via_gateway(model, gateway):
            continue
        where = "model" if agent.model is not None else f"models[{j}]"
        yield where, model.endpoint, list(model.egress_to)


def egress_findings(
    cluster: ClusterSpec, path: str = "", agent_index: Sequence[int] | None = None
) -> list[Problem]:
    """Each URL of a restricted agent's own servers and direct-mode models that its egress
    may not admit."""
    index = agent_index if agent_index is not None else range(len(cluster.agents))
    problems: list[Problem] = []
    for i, agent in zip(index, cluster.agents, strict=True):
        if (agent.egress or cluster.defaults.egress) != "restricted":
            continue
        checks: list[tuple[str, str, list[EgressRule]]] = [
            (where, url, []) for where, url in _agent_urls(agent)
        ]
        checks += [
            (f"httpTools.{tool.name}", tool.url, [])
            for tool in resolved_webhook_tools(cluster.http_tools, agent, cluster.namespace)
        ]
        checks += list(_model_urls(agent, cluster))
        for where, url, extra in checks:
            verdict = url_verdict(url, [*agent.egress_to, *extra])
            if verdict is not None:
                problems.append(Problem(join_path(path, f"agents[{i}].{where}"), verdict))
    return problems
