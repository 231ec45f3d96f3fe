"""NetworkPolicies of the A2A graph, as plain data, shaped like the tool policies:

- a callee admits, on its A2A port, pods of its namespace carrying its caller label
  (``a2a.langop.io/<callee>: "true"``, set on every same-namespace caller), and
  ``defaults.schemaSyncFrom`` (card sync goes through the API server's service proxy);
- a caller of an agent in another namespace brings one policy into that namespace admitting
  exactly itself (``<callee>.a2a-from.<caller namespace>.<caller>``);
- a restricted caller's egress policy gains its in-cluster peers' A2A ports.
"""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.config._names import a2a_cross_namespace_name, a2a_ingress_name, agent_egress_name
from langop_infra.config._network import NetworkPeer
from langop_infra.config.agent import AgentSpec
from langop_infra.manifests._a2a import PeerTarget, caller_label
from langop_infra.manifests._contract import agent_selector
from langop_infra.manifests._k8s_types import (
    NetworkPolicyEgressRuleDict,
    NetworkPolicyPeerDict,
    NetworkPolicySpecDict,
    PolicyEntry,
)
from langop_infra.manifests._policies import in_namespace, peer_manifest, tcp

Policy = PolicyEntry


def _ingress(selected: str, peers: list[NetworkPolicyPeerDict], port: int) -> NetworkPolicySpecDict:
    return {
        "podSelector": {"matchLabels": agent_selector(selected)},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": peers, "ports": [tcp(port)]}],
    }


def a2a_policies(
    agent: AgentSpec,
    namespace: str,
    peers: Sequence[PeerTarget],
    sync_from: Sequence[NetworkPeer] = (),
) -> list[Policy]:
    """``(name, namespace, spec)`` of the agent's A2A ingress (when it serves A2A: its
    callers, and ``schemaSyncFrom``, where card sync comes from) and of the ingress it needs
    into each peer of another namespace."""
    made: list[Policy] = []
    if agent.a2a is not None:
        callers = [in_namespace(namespace, {caller_label(agent.name): "true"})]
        callers += [peer_manifest(p) for p in sync_from]
        spec = _ingress(agent.name, callers, agent.a2a.port)
        made.append((a2a_ingress_name(agent.name), namespace, spec))
    for peer in peers:
        if peer.agent is None or peer.namespace is None or peer.port is None:
            continue
        if peer.namespace == namespace:
            continue
        caller = [in_namespace(namespace, agent_selector(agent.name))]
        spec = _ingress(peer.agent, caller, peer.port)
        name = a2a_cross_namespace_name(peer.agent, namespace, agent.name)
        made.append((name, peer.namespace, spec))
    return made


def with_peer_egress(
    made: Sequence[Policy], agent: str, peers: Sequence[PeerTarget]
) -> list[Policy]:
    """The agent's policies with its in-cluster peers added to its egress policy, if any."""
    rules: list[NetworkPolicyEgressRuleDict] = [
        {"to": [in_namespace(p.namespace, agent_selector(p.agent))], "ports": [tcp(p.port)]}
        for p in peers
        if p.agent is not None and p.namespace is not None and p.port is not None
    ]
    if not rules:
        return list(made)
    out: list[Policy] = []
    for name, where, spec in made:
        if name == agent_egress_name(agent):
            spec = spec.copy()
            spec["egress"] = [*spec.get("egress", []), *rules]
        out.append((name, where, spec))
    return out
