"""NetworkPolicies derived from the agent→tool graph, as plain data.

- A service tool admits, on its port only, agents of its own namespace that carry its access
  label (``access.langop.io/<tool>: "true"``, set on every agent that references it), plus the
  user's ``allowFrom`` peers. The policy never names agents, so adding an agent never edits it.
- An agent that references a tool in another namespace brings one policy into that namespace
  admitting exactly itself (``<tool>-from-<agent-namespace>-<agent>``).
- ``egress: restricted`` gives an agent (or tool) one egress policy: DNS, its service tools,
  ``egressTo`` (CIDRs, or pods by namespace and labels).
- Every agent gets ``<agent>-ingress``: it admits nothing, or only its ``allowFrom`` peers on
  its declared ``ports`` (sidecar ports listen on the pod's IP, yet are for the agent alone).
- ``defaults.schemaSyncFrom`` peers reach every synced tool on its port.
- ``defaultDeny`` adds one default-deny-ingress policy to the namespace.

Objects grow with tools + agents + cross-namespace references, never tools times agents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langop_infra.config._builtin import BUILTIN_HEALTH_PORT
from langop_infra.config._names import agent_egress_name, agent_ingress_name, cross_namespace_name
from langop_infra.config._network import EgressRule, NetworkPeer, PeerSpec
from langop_infra.config.agent import AgentPort, AgentSpec
from langop_infra.manifests._contract import ToolTarget, access_label, agent_selector, tool_selector
from langop_infra.manifests._k8s_types import (
    IPBlockDict,
    NetworkPolicyDict,
    NetworkPolicyEgressRuleDict,
    NetworkPolicyIngressRuleDict,
    NetworkPolicyPeerDict,
    NetworkPolicyPortDict,
    NetworkPolicySpecDict,
    PolicyEntry,
)

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
DNS_NAMESPACE = "kube-system"
DNS_POD_LABELS = {"k8s-app": "kube-dns"}


def network_policy(
    name: str, namespace: str, labels: Mapping[str, str], spec: NetworkPolicySpecDict
) -> NetworkPolicyDict:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": spec,
    }


def in_namespace(namespace: str, pod_labels: Mapping[str, str]) -> NetworkPolicyPeerDict:
    """A peer: pods with these labels in exactly this namespace (one peer, so both must hold)."""
    return {
        "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}},
        "podSelector": {"matchLabels": dict(pod_labels)},
    }


def peer_manifest(peer: PeerSpec | NetworkPeer) -> NetworkPolicyPeerDict:
    """One NetworkPolicy peer from either form a spec gives: ``{podSelector,
    namespaceSelector, ipBlock}`` (PeerSpec) or ``{cidr, except}`` / ``{namespace,
    podLabels}`` (NetworkPeer; podLabels alone means pods of the policy's own namespace)."""
    if isinstance(peer, NetworkPeer):
        cidr, excepts = peer.cidr, peer.except_
        pods = peer.pod_labels
        spaces = None if peer.namespace is None else {NAMESPACE_NAME_LABEL: peer.namespace}
    else:
        block = peer.ip_block
        cidr, excepts = (block.cidr, block.except_) if block is not None else (None, [])
        pods = peer.pod_selector.match_labels if peer.pod_selector is not None else None
        selector = peer.namespace_selector
        spaces = selector.match_labels if selector is not None else None
    if cidr is not None:
        ip_block: IPBlockDict = {"cidr": cidr}
        if excepts:
            ip_block["except"] = list(excepts)
        return {"ipBlock": ip_block}
    out: NetworkPolicyPeerDict = {}
    if pods is not None:
        out["podSelector"] = {"matchLabels": dict(pods)}
    if spaces is not None:
        out["namespaceSelector"] = {"matchLabels": dict(spaces)}
    return out


def tcp(port: int) -> NetworkPolicyPortDict:
    return {"protocol": "TCP", "port": port}


def tool_ingress_spec(
    tool: str,
    namespace: str,
    port: int,
    allow_from: Sequence[PeerSpec] = (),
    sync_from: Sequence[NetworkPeer] = (),
) -> NetworkPolicySpecDict:
    """Ingress to the tool's pods on its port: same-namespace agents with its access label,
    the user's extra peers, and where schema sync comes from."""
    peers = [in_namespace(namespace, {access_label(tool): "true"})]
    peers += [peer_manifest(p) for p in allow_from]
    peers += [peer_manifest(p) for p in sync_from]
    return {
        "podSelector": {"matchLabels": tool_selector(tool)},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": peers, "ports": [tcp(port)]}],
    }


def cross_namespace_spec(
    target: ToolTarget, agent_namespace: str, agent: str
) -> NetworkPolicySpecDict:
    """Ingress to a tool in another namespace from exactly one agent."""
    return {
        "podSelector": {"matchLabels": tool_selector(target.name)},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [in_namespace(agent_namespace, agent_selector(agent))],
                "ports": [tcp(target.port)],
            }
        ],
    }


def agent_ingress_spec(
    agent: str,
    ports: Sequence[AgentPort] = (),
    allow_from: Sequence[PeerSpec] = (),
    metrics_from: Sequence[PeerSpec] = (),
) -> NetworkPolicySpecDict:
    """Ingress into an agent's pods: nothing, or its ``allowFrom`` peers on its ``ports``,
    and its ``metricsFrom`` peers on the built-in runtime's health port only. Sidecar tools
    listen on the pod's IP too, and only the agent, over localhost, may use them; agents
    are clients, so without ports nothing needs to reach them."""
    rules: list[NetworkPolicyIngressRuleDict] = []
    if ports and allow_from:
        rules.append(
            {"from": [peer_manifest(p) for p in allow_from], "ports": [tcp(p.port) for p in ports]}
        )
    if metrics_from:
        rules.append(
            {
                "from": [peer_manifest(p) for p in metrics_from],
                "ports": [tcp(BUILTIN_HEALTH_PORT)],
            }
        )
    spec: NetworkPolicySpecDict = {
        "podSelector": {"matchLabels": agent_selector(agent)},
        "policyTypes": ["Ingress"],
    }
    # No `ingress: []`: the API server drops an empty list (omitempty), and so does the
    # provider; `policyTypes: [Ingress]` alone admits nothing, and render shows what is stored.
    if rules:
        spec["ingress"] = rules
    return spec


def with_sync_ingress(
    made: Sequence[PolicyEntry],
    agent: str,
    peers: Sequence[NetworkPeer],
    ports: Sequence[int],
) -> list[PolicyEntry]:
    """The agent's policies with ``schemaSyncFrom`` admitted to its synced sidecars' ports:
    schema sync reaches a sidecar through the agent's pods (the API server's pod proxy)."""
    if not peers or not ports:
        return list(made)
    rule: NetworkPolicyIngressRuleDict = {
        "from": [peer_manifest(p) for p in peers],
        "ports": [tcp(p) for p in ports],
    }
    out: list[PolicyEntry] = []
    for name, namespace, spec in made:
        if name == agent_ingress_name(agent):
            spec = spec.copy()
            spec["ingress"] = [*spec.get("ingress", []), rule]
        out.append((name, namespace, spec))
    return out


def agent_egress_spec(
    agent: str, targets: Sequence[ToolTarget], egress_to: Sequence[EgressRule] = ()
) -> NetworkPolicySpecDict:
    """Egress of a restricted agent: DNS, its service tools on their ports, ``egressTo``."""
    return egress_spec(agent_selector(agent), targets, egress_to)


def egress_spec(
    selector: Mapping[str, str],
    targets: Sequence[ToolTarget] = (),
    egress_to: Sequence[EgressRule] = (),
) -> NetworkPolicySpecDict:
    """Egress of the pods ``selector`` picks: DNS, the service tools, ``egressTo``."""
    rules: list[NetworkPolicyEgressRuleDict] = [
        {
            "to": [in_namespace(DNS_NAMESPACE, DNS_POD_LABELS)],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        }
    ]
    for target in targets:
        if target.deployment_mode == "service":
            rules.append(
                {
                    "to": [in_namespace(target.namespace, tool_selector(target.name))],
                    "ports": [tcp(target.port)],
                }
            )
    for rule in egress_to:
        entry: NetworkPolicyEgressRuleDict = {"to": [peer_manifest(rule)]}
        if rule.ports:
            entry["ports"] = [{"protocol": p.protocol, "port": p.port} for p in rule.ports]
        rules.append(entry)
    return {
        "podSelector": {"matchLabels": dict(selector)},
        "policyTypes": ["Egress"],
        "egress": rules,
    }


def default_deny_spec() -> NetworkPolicySpecDict:
    """Every pod of the namespace isolated for ingress; the other policies open what is needed."""
    return {"podSelector": {}, "policyTypes": ["Ingress"]}


def agent_policies(
    agent: AgentSpec,
    namespace: str,
    targets: Sequence[ToolTarget],
    egress: str,
) -> list[PolicyEntry]:
    """An agent's policies as ``(name, namespace, spec)``: its own ingress (its ports'
    ``allowFrom`` or nothing), ingress into each tool of another namespace, and restricted
    egress."""
    made = [
        (
            agent_ingress_name(agent.name),
            namespace,
            agent_ingress_spec(agent.name, agent.ports, agent.allow_from, agent.metrics_from),
        )
    ]
    for target in targets:
        if target.deployment_mode != "service" or target.namespace == namespace:
            continue
        made.append(
            (
                cross_namespace_name(target.name, namespace, agent.name),
                target.namespace,
                cross_namespace_spec(target, namespace, agent.name),
            )
        )
    if egress == "restricted":
        made.append(
            (
                agent_egress_name(agent.name),
                namespace,
                agent_egress_spec(agent.name, targets, agent.egress_to),
            )
        )
    return made
