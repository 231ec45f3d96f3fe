"""Peers that are the whole internet: ``0.0.0.0/0`` or ``::/0`` (any ``/0``) in a tool's or
agent's ``allowFrom``, an ``egressTo`` or ``defaults.schemaSyncFrom``. Valid, and sometimes
meant, but easy to write by accident: each one is reported as a warning."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator

from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

KIND = "langop_world_open"


_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")  # IPv4 addresses written as IPv6


def is_world(cidr: str | None) -> bool:
    """Whether ``cidr`` is a whole address family (``0.0.0.0/0``, ``::/0``, and
    ``::ffff:0.0.0.0/96``: every IPv4 address, mapped)."""
    return bool(cidr) and bool(world_families([cidr or ""]))


def world_families(cidrs: Iterable[str]) -> list[str]:
    """The address families (``IPv4``, ``IPv6``) that ``cidrs`` cover whole together:
    ``0.0.0.0/1`` and ``128.0.0.0/1`` are the whole internet as surely as ``0.0.0.0/0``."""
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    for cidr in cidrs:
        try:
            network = ipaddress.ip_network(cidr, strict=False)
        except ValueError:  # validation reports a malformed CIDR
            continue
        if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_MAPPED):
            v4.append(_unmapped(network))
        elif isinstance(network, ipaddress.IPv6Network):
            v6.append(network)
        else:
            v4.append(network)
    whole: list[str] = []
    if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(v4)):
        whole.append("IPv4")
    if any(n.prefixlen == 0 for n in ipaddress.collapse_addresses(v6)):
        whole.append("IPv6")
    return whole


def _unmapped(network: ipaddress.IPv6Network) -> ipaddress.IPv4Network:
    """``::ffff:a.b.c.d/(96+n)`` as ``a.b.c.d/n``."""
    address = ipaddress.IPv4Address(int(network.network_address) & 0xFFFFFFFF)
    return ipaddress.IPv4Network((address, network.prefixlen - 96))


def _world_peers(cluster: ClusterSpec) -> Iterator[tuple[str, str, str]]:
    """``(field path, cidr, what it opens)`` of every world-wide peer."""
    for i, tool in enumerate(cluster.tools):
        for j, peer in enumerate(tool.allow_from):
            if peer.ip_block is not None:
                yield f"tools[{i}].allowFrom[{j}].ipBlock.cidr", peer.ip_block.cidr, "ingress"
    for i, agent in enumerate(cluster.agents):
        for j, peer in enumerate(agent.allow_from):
            if peer.ip_block is not None:
                yield f"agents[{i}].allowFrom[{j}].ipBlock.cidr", peer.ip_block.cidr, "ingress"
    for kind, items in (("tools", cluster.tools), ("agents", cluster.agents)):
        for i, item in enumerate(items):
            for j, rule in enumerate(item.egress_to):
                yield f"{kind}[{i}].egressTo[{j}].cidr", rule.cidr or "", "egress"
    for i, model in enumerate(cluster.models):
        for j, rule in enumerate(model.egress_to):
            yield f"models[{i}].egressTo[{j}].cidr", rule.cidr or "", "egress"
    for j, peer in enumerate(cluster.defaults.schema_sync_from):
        yield f"defaults.schemaSyncFrom[{j}].cidr", peer.cidr or "", "sync"


_WHAT = {
    "ingress": "admits every address on the internet to this workload's ports",
    "egress": "lets the pod reach every address (on the rule's ports), so restricted egress "
    "no longer limits where it connects",
    "sync": "admits every address to every synced tool's port, not only the sync's source",
}


def world_open_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """One warning for each ``/0`` peer, and for each list of peers whose ranges together
    are the world, saying what it opens and how to narrow it."""
    warnings: list[Problem] = []
    groups: dict[str, tuple[list[str], str]] = {}
    for where, cidr, what in _world_peers(cluster):
        if is_world(cidr):
            warnings.append(Problem(join_path(path, where), f"{cidr} {_narrow(what)}", KIND))
        else:
            groups.setdefault(where.rpartition("[")[0], ([], what))[0].append(cidr)
    for where, (cidrs, what) in groups.items():
        if world_families(cidrs):
            together = f"{', '.join(cidrs)} together"
            warnings.append(Problem(join_path(path, where), f"{together} {_narrow(what)}", KIND))
    return warnings


def _narrow(what: str) -> str:
    return (
        f"{_WHAT[what]}; if that is not meant, name the range you need "
        "(the control plane's, a load balancer's, a provider's)"
    )
