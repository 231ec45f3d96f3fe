"""NetworkPolicy openness: rules that admit the world, judged one NetworkPolicy at a time.

A NetworkPolicy that selects a pod makes it "selected" (``langop-pods-selected``), whatever
it admits; this rule says whether what it admits is open:

- an ``ingress`` rule without ``from`` (or an ``egress`` rule without ``to``): every peer;
- an empty peer ``{}``: every peer;
- an ``ipBlock`` whose CIDR has prefix length 0 (``0.0.0.0/0``, ``::/0``), ``except`` or not;
- a ``namespaceSelector: {}`` with no ``podSelector`` or an empty one: every pod of every
  namespace.

``ingress: []`` and ``egress: []`` admit nothing: they are closed.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from langop_infra.policy._rules import Finding, Resource

DIRECTIONS = (("ingress", "from"), ("egress", "to"))


def open_network_policies(resources: Sequence[Resource]) -> list[Finding]:
    """A finding for each world-open rule or peer of each NetworkPolicy."""
    findings: list[Finding] = []
    for resource in sorted(resources, key=lambda r: r.urn):
        if resource.kind != "NetworkPolicy":
            continue
        manifest = resource.manifest
        meta: Mapping[str, object] = manifest.get("metadata") or {}
        where = f"NetworkPolicy {meta.get('namespace', '')}/{meta.get('name')}"
        spec: Mapping[str, object] = manifest.get("spec") or {}
        findings += [
            Finding(resource.urn, f"{where}: {problem}; name the peers it admits")
            for problem in openings(spec)
        ]
    return findings


def openings(spec: Mapping[str, object]) -> Iterator[str]:
    """What in ``spec`` admits every peer, one line each."""
    for direction, peers_key in DIRECTIONS:
        rules: object = spec.get(direction)
        if not isinstance(rules, list):
            continue
        for index, rule in enumerate(cast("list[Any]", rules)):
            path = f"{direction}[{index}]"
            empty: Mapping[str, object] = {}
            fields = cast("Mapping[str, Any]", rule) if isinstance(rule, Mapping) else empty
            peers: object = fields.get(peers_key)
            if not peers:
                yield f"{path} has no {peers_key}: it admits every peer"
                continue
            for number, peer in enumerate(cast("list[Any]", peers)):
                problem = peer_opening(peer)
                if problem:
                    yield f"{path}.{peers_key}[{number}] {problem}"


def peer_opening(peer: object) -> str | None:
    """Why one peer admits the world, or ``None``."""
    if not isinstance(peer, Mapping) or not peer:
        return "is empty: it admits every peer"
    fields = cast("Mapping[str, Any]", peer)
    block: object = fields.get("ipBlock")
    if isinstance(block, Mapping):
        cidr = str(cast("Mapping[str, Any]", block).get("cidr") or "")
        try:
            whole = ipaddress.ip_network(cidr, strict=False).prefixlen == 0
        except ValueError:
            whole = False
        if whole:
            return f"is ipBlock {cidr}: the whole internet"
    pods: object = fields.get("podSelector")
    if empty_selector(fields.get("namespaceSelector")) and (pods is None or empty_selector(pods)):
        return "is namespaceSelector {} without a podSelector: every pod of every namespace"
    return None


def empty_selector(selector: object) -> bool:
    """A label selector that selects everything: ``{}``, or no labels and no expressions."""
    if not isinstance(selector, Mapping):
        return False
    fields = cast("Mapping[str, Any]", selector)
    return not fields.get("matchLabels") and not fields.get("matchExpressions")
