"""Addresses that name an in-cluster Service the stack neither creates nor declares.

A model endpoint, an MCP server, a remote A2A peer or an external memory at
``http://<svc>.<ns>.svc.cluster.local`` (or ``<svc>.<ns>.svc``, or ``<svc>.<ns>`` when ``<ns>``
is one of the stack's namespaces) is reachable only if that Service exists. The stack makes
a Service for each service-mode tool and managed memory, each agent with ports or A2A, and
the model gateway of each namespace that uses one; any other must be declared under
``externalServices`` (it runs already), or ``validate`` would pass a deploy whose pods call
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

from langop_infra.config._managed_memory import with_managed_memories
from langop_infra.config.checks._gateway_routes import gateway_namespaces
from langop_infra.config.checks._references import cluster_namespaces
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

KIND = "langop_unknown_service"
GATEWAY_SERVICE = "gateway"
# The API server's own Service, in every cluster: calling it is a risk the endpoint advice
# names (a pod's credentials sent to the API server), not a Service that is missing.
EVERY_CLUSTER = {("default", "kubernetes")}


def service_of(url: str, namespaces: set[str]) -> tuple[str, str] | None:
    """(namespace, name) of the in-cluster Service ``url`` names, or None when it names none
    (a public host, an IP, loopback, or a short name that is not ``<svc>.<ns>`` of the stack)."""
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    labels = host.split(".")
    if labels[-3:] == ["svc", "cluster", "local"]:
        core = labels[:-3]
    elif labels[-1] == "svc":
        core = labels[:-1]
    elif len(labels) == 2 and labels[1] in namespaces:
        core = labels
    else:
        return None
    return (core[-1], core[-2]) if len(core) >= 2 else None


def stack_services(cluster: ClusterSpec) -> set[tuple[str, str]]:
    """(namespace, name) of every Service the stack creates or declares as external, and the
    API server's, which every cluster has."""
    full = with_managed_memories(cluster)
    home = cluster.namespace
    made = {(t.namespace or home, t.name) for t in full.tools if t.deployment_mode == "service"}
    made |= {(a.namespace or home, a.name) for a in full.agents if a.ports or a.a2a is not None}
    made |= {(ns, GATEWAY_SERVICE) for ns in gateway_namespaces(cluster)}
    return made | EVERY_CLUSTER | {(s.namespace, s.name) for s in cluster.external_services}


def _addresses(
    cluster: ClusterSpec, model_index: list[int], agent_index: list[int]
) -> Iterator[tuple[str, str]]:
    """(config path, URL) of every address the user wrote that pods call."""
    for i, model in zip(model_index, cluster.models, strict=True):
        if model.endpoint:
            yield f"models[{i}].endpoint", str(model.endpoint)
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        for j, server in enumerate(agent.mcp_servers):
            yield f"agents[{i}].mcpServers[{j}].url", str(server.url)
        for j, peer in enumerate(agent.agents):
            if peer.url is not None:
                yield f"agents[{i}].agents[{j}].url", str(peer.url)
    for i, memory in enumerate(cluster.memories):
        if memory.address is not None and memory.address.value is not None:
            yield f"memories[{i}].address.value", str(memory.address.value)


def unknown_service_problems(
    cluster: ClusterSpec,
    path: str = "",
    *,
    model_index: list[int] | None = None,
    agent_index: list[int] | None = None,
) -> list[Problem]:
    """A problem for each address at an in-cluster Service the stack does not have."""
    model_index = model_index if model_index is not None else list(range(len(cluster.models)))
    agent_index = agent_index if agent_index is not None else list(range(len(cluster.agents)))
    namespaces = cluster_namespaces(cluster) | {s.namespace for s in cluster.external_services}
    services = stack_services(cluster)
    problems: list[Problem] = []
    for where, url in _addresses(cluster, model_index, agent_index):
        found = service_of(url, namespaces)
        if found is None or found in services:
            continue
        namespace, name = found
        problems.append(
            Problem(
                join_path(path, where),
                f"{url} is Service {name!r} in namespace {namespace!r}, which this stack does "
                "not create, so pods would call nothing: point it at a Service the stack makes "
                "(a tool, an agent, the gateway), or, if it runs already, declare it under "
                f"externalServices: [{{name: {name}, namespace: {namespace}}}]",
                KIND,
            )
        )
    return problems
