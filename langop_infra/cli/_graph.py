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
from typing import Any, cast
from urllib.parse import urlsplit

from langop_infra.cli._output import add_output_argument, dump, emit
from langop_infra.cli._stack import add_stack_arguments, run_command, run_stack
from langop_infra.mcp._ports import effective_port

# Stand-ins for "some address on the internet"; the first outside every listed CIDR is used.
PROBES = ("192.0.2.1", "198.51.100.1", "203.0.113.1", "100.64.0.1", "8.8.8.8")
COMPONENT = "app.kubernetes.io/component"
# The source of world-open ingress edges: not a DNS label, so no agent can have this name.
WORLD = "(internet)"
UNKNOWN_DETAIL = "known only at `pulumi up`"
UNKNOWN_POD = "its pod spec is known only at `pulumi up`"
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
    allowed: bool | None  # None: known only at `pulumi up`
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
        edges = [e for e in edges if e.allowed is not False or e.kind == "external"]
    if args.output in ("json", "yaml"):
        emit(dump([asdict(e) for e in edges], args.output))
    elif args.output == "mermaid":
        emit(mermaid(edges))
    else:
        emit(text(edges))
    return 0


def reachability_edges(manifests: list[dict[str, Any]]) -> list[Edge]:
    from langop_infra.cli._unknown_parts import Verdicts

    verdicts = Verdicts(manifests)
    # Registration order varies between runs: sort, so that the graph is stable.
    deployments = sorted((m for m in manifests if m.get("kind") == "Deployment"), key=_key)
    # A scheduled agent runs as a CronJob: a source of connections, never a target.
    agents = sorted((m for m in manifests if m.get("kind") in ("Deployment", "CronJob")), key=_key)
    agents = [m for m in agents if _component(m) == "agent"]
    pods = {id(w): _pod(w) for w in [*deployments, *agents]}
    edges = world_open_edges(verdicts, deployments, pods)
    for agent in agents:
        edges += _agent_edges(agent, manifests, deployments, pods, verdicts)
    return edges


def _agent_edges(
    agent: dict[str, Any],
    manifests: list[dict[str, Any]],
    deployments: list[dict[str, Any]],
    pods: dict[int, Any],
    verdicts: Any,
) -> list[Edge]:
    """One agent's edges: to every other workload's ports, its sidecars, its external
    servers; a part known only at `pulumi up` gives an edge whose verdict is unknown."""
    from langop_infra.cli._unknown_parts import UNKNOWN_MARKER, mapping, pod_spec

    name, namespace = agent["metadata"]["name"], _namespace(agent)
    source = pods[id(agent)]
    if source is None:
        return [Edge(name, "unknown", UNKNOWN_MARKER, None, None, UNKNOWN_POD, namespace)]
    edges: list[Edge] = []
    for other in deployments:
        if other is agent:
            continue
        target, kind = f"{_namespace(other)}/{other['metadata']['name']}", _component(other)
        destination = pods[id(other)]
        if destination is None:
            edges.append(Edge(name, kind, target, None, None, UNKNOWN_POD, namespace))
            continue
        for port in _ports(other):
            allowed = verdicts.allows(source, destination, port)
            detail = "" if allowed is not None else UNKNOWN_DETAIL
            edges.append(Edge(name, kind, target, port, allowed, detail, namespace))
    pod: Any = pod_spec(agent)
    # Native sidecars are init containers that keep running (restartPolicy: Always).
    init: Any = pod.get("initContainers") or []
    native = [mapping(c) for c in _items(init) if mapping(c).get("restartPolicy") == "Always"]
    for container in [*pod["containers"][1:], *native]:
        port = next(iter(_container_ports(container)), None)
        edges.append(Edge(name, "sidecar", container["name"], port, True, "localhost", namespace))
    return edges + _external_edges(agent, manifests, source, verdicts)


def _external_edges(
    agent: dict[str, Any], manifests: list[dict[str, Any]], source: Any, verdicts: Any
) -> list[Edge]:
    from langop_infra.cli._unknown_parts import UNKNOWN_MARKER, has_unknown, mapping
    from langop_infra.core import _yaml_io as yaml_io

    name, namespace = agent["metadata"]["name"], _namespace(agent)
    key = (namespace, f"{name}-config")
    empty: dict[str, Any] = {}
    config = next((m for m in manifests if m.get("kind") == "ConfigMap" and _key(m) == key), empty)
    data: object = config.get("data") or {}
    text: Any = data if isinstance(data, str) else mapping(data).get("config.yaml")
    if has_unknown(text):
        detail = "its config.yaml is known only at `pulumi up`"
        return [Edge(name, "external", UNKNOWN_MARKER, None, None, detail, namespace)]
    document: Any = yaml_io.load(text or "{}") or {}
    cidrs = _egress_cidrs(manifests, namespace)
    edges: list[Edge] = []
    for label, url in _external(mapping(document)):
        host, port = _host_port(url)
        allowed, detail = _external_verdict(verdicts, source, host, port, cidrs)
        edges.append(Edge(name, "external", f"{label} ({host})", port, allowed, detail, namespace))
    return edges


def world_open_edges(
    verdicts: Any, deployments: list[dict[str, Any]], pods: dict[int, Any]
) -> list[Edge]:
    """An edge from :data:`WORLD` for each workload port that any address may reach, or may
    for all that is known before `pulumi up` (its verdict then unknown)."""
    from langop_infra.netpol import IPAddress

    edges: list[Edge] = []
    for deployment in deployments:
        pod = pods[id(deployment)]
        if pod is None:
            continue
        target = f"{_namespace(deployment)}/{deployment['metadata']['name']}"
        for port in _ports(deployment):
            answers = {
                family: {verdicts.allows(IPAddress(p), pod, port) for p in probes}
                for family, probes in WORLD_PROBES.items()
            }
            opened = [family for family, found in answers.items() if found == {True}]
            maybe = [family for family, found in answers.items() if False not in found]
            if opened or maybe:
                allowed = True if opened else None
                detail = f"world-open ingress: {' and '.join(opened or maybe)}"
                detail += "" if opened else f" ({UNKNOWN_DETAIL})"
                edges.append(Edge(WORLD, _component(deployment), target, port, allowed, detail))
    return edges


def _egress_cidrs(manifests: list[dict[str, Any]], namespace: str) -> list[str]:
    from langop_infra.cli._unknown_parts import has_unknown, mapping

    found: list[str] = []
    for m in manifests:
        if m.get("kind") != "NetworkPolicy" or _namespace(m) != namespace:
            continue
        for rule in _items(mapping(m.get("spec")).get("egress")):
            for peer in _items(mapping(rule).get("to")):
                cidr = mapping(mapping(peer).get("ipBlock")).get("cidr")
                if isinstance(cidr, str) and not has_unknown(cidr):
                    found.append(cidr)
    return sorted(set(found))


def _external_verdict(
    verdicts: Any, source: Any, host: str, port: int, cidrs: list[str]
) -> tuple[bool | None, str]:
    from langop_infra.netpol import IPAddress

    if verdicts.doubtful(source.namespace):
        return None, UNKNOWN_DETAIL
    try:
        return verdicts.allows(source, IPAddress(str(ipaddress.ip_address(host))), port), ""
    except ValueError:
        pass
    ranges = [ipaddress.ip_network(c, strict=False) for c in cidrs]
    outside = next(
        (p for p in PROBES if not any(ipaddress.ip_address(p) in r for r in ranges)), None
    )
    if outside is not None and verdicts.allows(source, IPAddress(outside), port):
        return True, "open egress"
    admitted = [
        str(r)
        for r in ranges
        if verdicts.allows(source, IPAddress(str(next(iter(r.hosts()), r[0]))), port)
    ]
    if admitted:
        return True, f"only if {host} resolves into {', '.join(admitted)}"
    return False, "egress restricted and no egressTo range admits it"


def _key(manifest: dict[str, Any]) -> tuple[str, str]:
    return _namespace(manifest), str(manifest["metadata"]["name"])


def _namespace(manifest: dict[str, Any]) -> str:
    return str(manifest["metadata"].get("namespace", ""))


def _component(workload: dict[str, Any]) -> str:
    from langop_infra.cli._unknown_parts import mapping

    return str(mapping(workload["metadata"].get("labels")).get(COMPONENT, "")) or "other"


def _pod(workload: dict[str, Any]) -> Any:
    """The workload's pod for the evaluator, or None when its spec or labels are unknown."""
    from langop_infra.cli._unknown_parts import mapping, pod_labels, pod_spec
    from langop_infra.netpol import Pod

    spec, labels = pod_spec(workload), pod_labels(workload)
    if spec is None or labels is None:
        return None
    declared = [mapping(p) for c in spec["containers"] for p in _items(c.get("ports"))]
    ports: dict[str, int] = {
        p["name"]: p["containerPort"]
        for p in declared
        if isinstance(p.get("name"), str) and isinstance(p.get("containerPort"), int)
    }
    return Pod(
        namespace=_namespace(workload),
        labels=labels,
        name=workload["metadata"]["name"],
        ports=ports,
    )


def _ports(workload: dict[str, Any]) -> list[int | None]:
    """The main container's ports; None for one known only at `pulumi up`."""
    from langop_infra.cli._unknown_parts import pod_spec

    spec = pod_spec(workload)
    return _container_ports(spec["containers"][0]) if spec else []


def _container_ports(container: dict[str, Any]) -> list[int | None]:
    from langop_infra.cli._unknown_parts import mapping

    ports = [mapping(p).get("containerPort") for p in _items(container.get("ports"))]
    return [p if isinstance(p, int) else None for p in ports]


def _external(document: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(f"mcp {s['name']}", s["url"]) for s in _items(document.get("mcpServers"))]
    found += [(f"webhook {w['name']}", w["url"]) for w in _items(document.get("webhookTools"))]
    return found


def _items(value: object) -> list[Any]:
    """A manifest's or config's list field; an empty list when it is unset or unknown."""
    return cast("list[Any]", value) if isinstance(value, list) else []


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
        verdict = {True: "may reach", False: "blocked:", None: "unknown:"}[edge.allowed]
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
        if edge.allowed is None:
            arrow = f"-.->|{label} unknown|"
        lines.append(f"  {source} {arrow} {target}")
    return "\n".join(lines) + "\n"
