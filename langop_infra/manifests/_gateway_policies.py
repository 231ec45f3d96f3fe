"""NetworkPolicies of the model gateway, as plain data.

- The gateway admits, on port 8000 only, agents of its namespace that carry its access label
  (``access.langop.io/gateway: "true"``, set on every agent that references a gateway model);
  the policy never names agents, so adding an agent never edits it.
- Under ``egress: restricted`` the gateway reaches only DNS, its models' ``egressTo`` and the
  OTLP collector; a restricted agent adds the gateway's port, the ``egressTo`` of models it
  calls directly, and the collector.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from urllib.parse import urlsplit

from langop_infra.config._model import ModelSpec
from langop_infra.config._network import EgressRule
from langop_infra.manifests._contract import access_label
from langop_infra.manifests._gateway import GATEWAY_NAME, GATEWAY_PORT, gateway_selector
from langop_infra.manifests._k8s_types import (
    IPBlockDict,
    NetworkPolicyEgressRuleDict,
    NetworkPolicyPeerDict,
    NetworkPolicySpecDict,
    PolicyEntry,
)
from langop_infra.manifests._policies import (
    DNS_NAMESPACE,
    DNS_POD_LABELS,
    NAMESPACE_NAME_LABEL,
    agent_egress_name,
    in_namespace,
    peer_manifest,
    tcp,
)
from langop_infra.mcp._ports import effective_port


def egress_rule(rule: EgressRule) -> NetworkPolicyEgressRuleDict:
    """One ``egressTo`` entry (a CIDR, or pods by namespace and labels) as an egress rule."""
    entry: NetworkPolicyEgressRuleDict = {"to": [peer_manifest(rule)]}
    if rule.ports:
        entry["ports"] = [{"protocol": p.protocol, "port": p.port} for p in rule.ports]
    return entry


def dns_egress_rule() -> NetworkPolicyEgressRuleDict:
    return {
        "to": [in_namespace(DNS_NAMESPACE, DNS_POD_LABELS)],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }


def collector_egress_rules(otlp_endpoint: str | None) -> list[NetworkPolicyEgressRuleDict]:
    """Egress to the OTLP collector: a Service URL ``<svc>.<ns>.svc[.cluster.local]`` admits
    that namespace on the URL's port, an IP URL that address; other hosts need ``egressTo``."""
    if otlp_endpoint is None:
        return []
    url = urlsplit(otlp_endpoint)
    host = url.hostname or ""
    port = effective_port(url.scheme, url.port, 80)
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        parts = host.split(".")
        if len(parts) >= 3 and parts[2] == "svc" and parts[3:] in ([], ["cluster", "local"]):
            peer: NetworkPolicyPeerDict = {
                "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: parts[1]}}
            }
            return [{"to": [peer], "ports": [tcp(port)]}]
        return []
    block: IPBlockDict = {"cidr": f"{address}/{address.max_prefixlen}"}
    return [{"to": [{"ipBlock": block}], "ports": [tcp(port)]}]


def gateway_ingress_name() -> str:
    return f"{GATEWAY_NAME}-ingress"


def gateway_ingress_spec(namespace: str) -> NetworkPolicySpecDict:
    """Ingress to the gateway on port 8000 from same-namespace agents with its access label."""
    return {
        "podSelector": {"matchLabels": gateway_selector()},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [in_namespace(namespace, {access_label(GATEWAY_NAME): "true"})],
                "ports": [tcp(GATEWAY_PORT)],
            }
        ],
    }


def gateway_egress_name() -> str:
    return f"{GATEWAY_NAME}-egress"


def gateway_egress_spec(
    models: Sequence[ModelSpec], otlp_endpoint: str | None = None
) -> NetworkPolicySpecDict:
    """Egress of the gateway under ``egress: restricted``: DNS, each model's ``egressTo``,
    the OTLP collector."""
    rules = [dns_egress_rule()]
    rules += [egress_rule(rule) for model in models for rule in model.egress_to]
    rules += collector_egress_rules(otlp_endpoint)
    return {
        "podSelector": {"matchLabels": gateway_selector()},
        "policyTypes": ["Egress"],
        "egress": rules,
    }


def agent_model_egress_rules(
    namespace: str,
    uses_gateway: bool,
    direct_models: Sequence[ModelSpec] = (),
    otlp_endpoint: str | None = None,
) -> list[NetworkPolicyEgressRuleDict]:
    """What a restricted agent's egress policy adds for its models: the gateway's port, the
    ``egressTo`` of models it calls directly, the OTLP collector."""
    rules: list[NetworkPolicyEgressRuleDict] = []
    if uses_gateway:
        peer = in_namespace(namespace, gateway_selector())
        rules.append({"to": [peer], "ports": [tcp(GATEWAY_PORT)]})
    rules += [egress_rule(rule) for model in direct_models for rule in model.egress_to]
    rules += collector_egress_rules(otlp_endpoint)
    return rules


def with_model_egress(
    made: Sequence[PolicyEntry], agent: str, rules: Sequence[NetworkPolicyEgressRuleDict]
) -> list[PolicyEntry]:
    """An agent's ``(name, namespace, spec)`` policies with ``rules`` added to its restricted
    egress policy (there is none under open egress, and then nothing to add)."""
    out: list[PolicyEntry] = []
    for name, namespace, spec in made:
        if name == agent_egress_name(agent) and rules:
            spec = spec.copy()
            spec["egress"] = [*spec.get("egress", []), *rules]
        out.append((name, namespace, spec))
    return out
