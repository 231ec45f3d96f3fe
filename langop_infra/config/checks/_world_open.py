"""Peers that are the whole internet: ``0.0.0.0/0`` or ``::/0`` (any ``/0``) in a tool's or
agent's ``allowFrom``, an ``egressTo`` or ``defaults.schemaSyncFrom``. Valid, and sometimes
meant, but easy to write by accident: each one is reported as a warning."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

KIND = "langop_world_open"


def is_world(cidr: str | None) -> bool:
    """Whether ``cidr`` is a whole address family (``0.0.0.0/0``, ``::/0``)."""
    if not cidr:
        return False
    try:
        return ipaddress.ip_network(cidr, strict=False).prefixlen == 0
    except ValueError:  # validation reports a malformed CIDR
        return False


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
    """One warning for each ``/0`` peer, saying what it opens and how to narrow it."""
    return [
        Problem(
            join_path(path, where),
            f"{cidr} {_WHAT[what]}; if that is not meant, name the range you need "
            "(the control plane's, a load balancer's, a provider's)",
            KIND,
        )
        for where, cidr, what in _world_peers(cluster)
        if is_world(cidr)
    ]
