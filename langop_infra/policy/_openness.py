"""NetworkPolicy openness: rules that admit the world, judged one NetworkPolicy at a time.

A NetworkPolicy that selects a pod makes it "selected" (``langop-pods-selected``), whatever
it admits; this rule says whether what it admits is open:

- an ``ingress`` rule without ``from`` (or an ``egress`` rule without ``to``): every peer;
- an empty peer ``{}``: every peer;
- an ``ipBlock`` whose CIDR has prefix length 0 (``0.0.0.0/0``, ``::/0``) or is every IPv4
  address mapped (``::ffff:0.0.0.0/96``), ``except`` or not; and the ``ipBlock``s of one
  direction that cover an address family together (``0.0.0.0/1`` + ``128.0.0.0/1``);
- a ``namespaceSelector`` that selects (nearly) every namespace, with no ``podSelector`` or
  one that selects (nearly) every pod: ``{}``, or only expressions that exclude
  (``NotIn``, ``DoesNotExist``) or ask for a label every namespace has
  (``kubernetes.io/metadata.name`` ``Exists``).

``ingress: []`` and ``egress: []`` admit nothing: they are closed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from langop_infra.config.checks._world_open import is_world, world_families
from langop_infra.policy._rules import Finding, Resource

DIRECTIONS = (("ingress", "from"), ("egress", "to"))
BROAD_OPERATORS = frozenset({"NotIn", "DoesNotExist"})  # all but what they name
EVERYWHERE_LABELS = frozenset({"kubernetes.io/metadata.name"})  # the API server sets it


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
        yield from _rule_openings(direction, peers_key, cast("list[Any]", rules))
        yield from _union_openings(direction, peers_key, cast("list[Any]", rules))


def _rule_openings(direction: str, peers_key: str, rules: list[Any]) -> Iterator[str]:
    for index, rule in enumerate(rules):
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


def _union_openings(direction: str, peers_key: str, rules: list[Any]) -> Iterator[str]:
    """The ipBlocks of a direction's rules that are the world together, none alone."""
    cidrs = [cidr for cidr in _cidrs(rules, peers_key) if not is_world(cidr)]
    for family in world_families(cidrs):
        yield (
            f"{direction} ipBlocks {', '.join(cidrs)} together cover every {family} address: "
            "the whole internet"
        )


def _cidrs(rules: list[Any], peers_key: str) -> list[str]:
    found: list[str] = []
    empty: Mapping[str, Any] = {}
    for rule in rules:
        fields = cast("Mapping[str, Any]", rule) if isinstance(rule, Mapping) else empty
        peers: object = fields.get(peers_key)
        for peer in cast("list[Any]", peers) if isinstance(peers, list) else []:
            entry = cast("Mapping[str, Any]", peer) if isinstance(peer, Mapping) else empty
            block: object = entry.get("ipBlock")
            if isinstance(block, Mapping):
                found.append(str(cast("Mapping[str, Any]", block).get("cidr") or ""))
    return found


def peer_opening(peer: object) -> str | None:
    """Why one peer admits the world, or ``None``."""
    if not isinstance(peer, Mapping) or not peer:
        return "is empty: it admits every peer"
    fields = cast("Mapping[str, Any]", peer)
    block: object = fields.get("ipBlock")
    if isinstance(block, Mapping):
        cidr = str(cast("Mapping[str, Any]", block).get("cidr") or "")
        if is_world(cidr):
            return f"is ipBlock {cidr}: the whole internet"
    pods: object = fields.get("podSelector")
    namespaces: object = fields.get("namespaceSelector")
    if empty_selector(namespaces) and (pods is None or empty_selector(pods)):
        return "is namespaceSelector {} without a podSelector: every pod of every namespace"
    if broad_selector(namespaces) and (pods is None or broad_selector(pods)):
        return (
            "has a namespaceSelector that only excludes (NotIn, DoesNotExist) or asks for a "
            "label every namespace has: (nearly) every pod of every namespace"
        )
    return None


def empty_selector(selector: object) -> bool:
    """A label selector that selects everything: ``{}``, or no labels and no expressions."""
    if not isinstance(selector, Mapping):
        return False
    fields = cast("Mapping[str, Any]", selector)
    return not fields.get("matchLabels") and not fields.get("matchExpressions")


def broad_selector(selector: object) -> bool:
    """A label selector that selects (nearly) everything: no labels asked for, and every
    expression an exclusion or a label every namespace carries."""
    if not isinstance(selector, Mapping):
        return False
    fields = cast("Mapping[str, Any]", selector)
    expressions: object = fields.get("matchExpressions") or []
    if fields.get("matchLabels") or not isinstance(expressions, list):
        return False
    return all(_broad(e) for e in cast("list[Any]", expressions))


def _broad(expression: object) -> bool:
    if not isinstance(expression, Mapping):
        return False
    fields = cast("Mapping[str, Any]", expression)
    operator, key = fields.get("operator"), fields.get("key")
    return operator in BROAD_OPERATORS or (operator == "Exists" and key in EVERYWHERE_LABELS)
