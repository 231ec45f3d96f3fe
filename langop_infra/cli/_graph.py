"""``langop-infra graph``: who may reach whom, from a stack's rendered NetworkPolicies.

Workloads any address on the internet may reach (``0.0.0.0/0`` or ``::/0`` ingress) come
first, as edges from ``(internet)``. Then, for every agent (a Deployment, or a scheduled
agent's CronJob): the tools, models (any other Deployment: a model gateway) and A2A peers it
may open a connection to, on their container ports, decided by
:class:`langop_infra.netpol.Network` over the rendered policies; its sidecar
tools (over localhost, always); and its external MCP servers and webhook tools. A policy
cannot name a hostname: an IP literal is checked as is; for a host name the evaluator is asked
about an address outside every CIDR the policies list (open egress reaches it) and about each
listed CIDR, and the edge says which ranges the host must resolve into.
"""

from __future__ import annotations

import argparse
import ipaddress
import re
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import add_stack_arguments, run_command, run_stack
from langop_infra.mcp._ports import effective_port

# Stand-ins for "some address on the internet"; the first outside every listed CIDR is used.
PROBES = ("192.0.2.1", "198.51.100.1", "203.0.113.1", "100.64.0.1", "8.8.8.8")
COMPONENT = "app.kubernetes.io/component"
# The source of world-open ingress edges: not a DNS label, so no agent can have this name.
WORLD = "(internet)"
# Addresses no range but a whole family's /0 holds together (``except`` may still carve
# some out): admitting all of one family's is world-open ingress.
WORLD_PROBES = {
    "0.0.0.0/0": ("1.2.3.4", "100.64.0.1", "200.1.1.1"),
    "::/0": ("2001:db8::1", "a000::1", "fc00::1"),
}


@dataclass(frozen=True)
class Edge:
    agent: str
    kind: str  # tool | gateway | agent | <component> | sidecar | external
    target: str
    port: int | None
    allowed: bool
    detail: str = ""
    namespace: str = ""  # the agent's: with it, an agent that is a source and a target is one node


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_stack_arguments(parser)
    add_output_argument(
        parser,
        ("text", "mermaid", "json", "yaml"),
        "text",
        "text (default), mermaid (a flowchart), json or yaml",
        format_alias=True,
    )
    parser.add_argument(
        "--all", action="store_true", help="also list blocked in-cluster pairs (text, json)"
    )


def run(args: argparse.Namespace) -> int:
    return run_command("graph", lambda: _graph(args))


def _graph(args: argparse.Namespace) -> int:
    edges = reachability_edges(run_stack(args, "graph").manifests())
    if not args.all:
        edges = [e for e in edges if e.allowed or e.kind == "external"]
    if args.output in ("json", "yaml"):
        emit(dump([asdict(e) for e in edges], args.output))
    elif args.output == "mermaid":
        emit(mermaid(edges))
    else:
        emit(text(edges))
    return 0


def reachability_edges(manifests: list[dict[str, Any]]) -> list[Edge]:
    from langop_infra.core import _yaml_io as yaml_io
    from langop_infra.netpol import IPAddress, Network, Pod

    network = Network([m for m in manifests if m.get("kind") == "NetworkPolicy"])
    # Registration order varies between runs: sort, so that the graph is stable.
    deployments = sorted(
        (m for m in manifests if m.get("kind") == "Deployment"),
        key=lambda m: (m["metadata"].get("namespace", ""), m["metadata"]["name"]),
    )
    config_maps = {
        (m["metadata"].get("namespace", ""), m["metadata"]["name"]): m
        for m in manifests
        if m.get("kind") == "ConfigMap"
    }
    # A scheduled agent runs as a CronJob: a source of connections, never a target.
    agents = sorted(
        (m for m in manifests if m.get("kind") in ("Deployment", "CronJob")),
        key=lambda m: (m["metadata"].get("namespace", ""), m["metadata"]["name"]),
    )
    agents = [m for m in agents if _component(m) == "agent"]
    pods = {id(w): _pod(w, Pod) for w in [*deployments, *agents]}
    edges = world_open_edges(network, deployments, pods, IPAddress)
    for agent in agents:
        name, namespace = agent["metadata"]["name"], agent["metadata"].get("namespace", "")
        source = pods[id(agent)]
        for other in deployments:
            if other is agent:
                continue
            for port in _ports(other):
                allowed = network.allows(source, pods[id(other)], port)
                target = f"{other['metadata'].get('namespace', '')}/{other['metadata']['name']}"
                kind = _component(other) or "other"
                edges.append(Edge(name, kind, target, port, allowed, namespace=namespace))
        pod = pod_template(agent)["spec"]
        # Native sidecars are init containers that keep running (restartPolicy: Always).
        init: Any = pod.get("initContainers") or []
        native = [c for c in init if c.get("restartPolicy") == "Always"]
        for container in [*pod["containers"][1:], *native]:
            ports: Any = container.get("ports") or []
            port = next((p["containerPort"] for p in ports), None)
            edges.append(
                Edge(name, "sidecar", container["name"], port, True, "localhost", namespace)
            )
        config = config_maps.get((namespace, f"{name}-config"))
        document = yaml_io.load((config or {}).get("data", {}).get("config.yaml") or "{}")
        cidrs = _egress_cidrs(manifests, namespace)
        for label, url in _external(document or {}):
            host, port = _host_port(url)
            allowed, detail = _external_verdict(network, source, host, port, cidrs, IPAddress)
            target = f"{label} ({host})"
            edges.append(Edge(name, "external", target, port, allowed, detail, namespace))
    return edges


def world_open_edges(
    network: Any, deployments: list[dict[str, Any]], pods: dict[int, Any], address_type: Any
) -> list[Edge]:
    """An edge from :data:`WORLD` for each workload port that any address may reach."""
    edges: list[Edge] = []
    for deployment in deployments:
        target = f"{deployment['metadata'].get('namespace', '')}/{deployment['metadata']['name']}"
        for port in _ports(deployment):
            opened = [
                family
                for family, probes in WORLD_PROBES.items()
                if all(network.allows(address_type(p), pods[id(deployment)], port) for p in probes)
            ]
            if opened:
                detail = f"world-open ingress: {' and '.join(opened)}"
                kind = _component(deployment) or "other"
                edges.append(Edge(WORLD, kind, target, port, True, detail))
    return edges


def _egress_cidrs(manifests: list[dict[str, Any]], namespace: str) -> list[str]:
    found: list[str] = []
    for m in manifests:
        if m.get("kind") != "NetworkPolicy" or m["metadata"].get("namespace") != namespace:
            continue
        rules: Any = m["spec"].get("egress") or []
        for rule in rules:
            peers: Any = rule.get("to") or []
            found += [p["ipBlock"]["cidr"] for p in peers if "ipBlock" in p]
    return sorted(set(found))


def _external_verdict(
    network: Any, source: Any, host: str, port: int, cidrs: list[str], address_type: Any
) -> tuple[bool, str]:
    try:
        return network.allows(source, address_type(str(ipaddress.ip_address(host))), port), ""
    except ValueError:
        pass
    ranges = [ipaddress.ip_network(c, strict=False) for c in cidrs]
    outside = next(
        (p for p in PROBES if not any(ipaddress.ip_address(p) in r for r in ranges)), None
    )
    if outside is not None and network.allows(source, address_type(outside), port):
        return True, "open egress"
    admitted = [
        str(r)
        for r in ranges
        if network.allows(source, address_type(str(next(iter(r.hosts()), r[0]))), port)
    ]
    if admitted:
        return True, f"only if {host} resolves into {', '.join(admitted)}"
    return False, "egress restricted and no egressTo range admits it"


def _component(deployment: dict[str, Any]) -> str:
    labels: Any = deployment["metadata"].get("labels") or {}
    return str(labels.get(COMPONENT, ""))


def pod_template(workload: dict[str, Any]) -> Any:
    """A Deployment's or a CronJob's pod template."""
    if workload["kind"] == "CronJob":
        return workload["spec"]["jobTemplate"]["spec"]["template"]
    return workload["spec"]["template"]


def _pod(deployment: dict[str, Any], pod_type: Any) -> Any:
    template = pod_template(deployment)
    ports: dict[Any, Any] = {
        p["name"]: p["containerPort"]
        for c in template["spec"]["containers"]
        for p in _items(c.get("ports"))
        if p.get("name")
    }
    meta: Any = template.get("metadata") or {}
    labels: Any = meta.get("labels") or {}
    return pod_type(
        namespace=deployment["metadata"].get("namespace", ""),
        labels=labels,
        name=deployment["metadata"]["name"],
        ports=ports,
    )


def _ports(deployment: dict[str, Any]) -> list[int]:
    main = pod_template(deployment)["spec"]["containers"][0]
    return [p["containerPort"] for p in _items(main.get("ports"))]


def _external(document: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(f"mcp {s['name']}", s["url"]) for s in _items(document.get("mcpServers"))]
    found += [(f"webhook {w['name']}", w["url"]) for w in _items(document.get("webhookTools"))]
    return found


def _items(value: object) -> Any:
    """A manifest's or config's list field, or an empty list when it is unset."""
    return value or []


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "", effective_port(parts.scheme, parts.port, 80)


def text(edges: list[Edge]) -> str:
    lines: list[str] = []
    current = None
    for edge in edges:
        if edge.agent != current:
            current = edge.agent
            lines.append("from the internet" if edge.agent == WORLD else f"agent {edge.agent}")
        verdict = "may reach" if edge.allowed else "blocked:"
        port = f":{edge.port}" if edge.port else ""
        detail = f" ({edge.detail})" if edge.detail else ""
        lines.append(f"  {verdict} {edge.kind} {edge.target}{port}{detail}")
    return "\n".join(lines) + "\n" if lines else "no agents\n"


def mermaid(edges: list[Edge]) -> str:
    """A Mermaid flowchart: solid arrows for allowed connections, crossed ones for blocked."""
    lines = ["flowchart LR"]
    declared: set[str] = set()

    def node(kind: str, name: str, key: str = "") -> str:
        ident = re.sub(r"[^A-Za-z0-9_]", "_", f"{kind}_{key or name}")
        if ident not in declared:
            declared.add(ident)
            lines.append(f'  {ident}["{kind} {name}"]')
        return ident

    for edge in edges:
        if edge.agent == WORLD:
            source = node("world", "internet")
        else:
            source = node("agent", edge.agent, f"{edge.namespace}/{edge.agent}")
        if edge.kind == "agent":  # the node of that agent as a source too
            target = node("agent", edge.target.rpartition("/")[2], edge.target)
        else:
            target = node(edge.kind, edge.target)
        label = f"{edge.port}" if edge.port else ""
        if edge.kind == "sidecar":
            label = f"localhost:{edge.port}" if edge.port else "localhost"
        arrow = f"-->|{label}|" if edge.allowed else f"--x|{label} blocked|"
        lines.append(f"  {source} {arrow} {target}")
    return "\n".join(lines) + "\n"
