"""``langop_infra.manifests._policies``: the NetworkPolicies built from the agent→tool graph,
as plain data, builder by builder. The survivor of #37's mutation run is here: ``allowFrom``
without ports must never render ``ports: []`` (which Kubernetes reads as every port)."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.config._network import EgressRule, NetworkPeer, PeerSpec
from langop_infra.config.agent import AgentPort, AgentSpec
from langop_infra.manifests import _policies as p
from langop_infra.manifests._contract import ToolTarget

WEB = PeerSpec.model_validate({"podSelector": {"matchLabels": {"app": "web"}}})
DNS = {
    "to": [
        {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
        }
    ],
    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
}


def agent(**fields: Any) -> AgentSpec:
    return AgentSpec.model_validate({"name": "bot", "image": "ghcr.io/a/bot:1", **fields})


def test_network_policy_wraps_a_spec_and_copies_the_labels() -> None:
    labels = {"a": "b"}
    made = p.network_policy("n", "ns", labels, {"podSelector": {}})
    assert made == {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "n", "namespace": "ns", "labels": {"a": "b"}},
        "spec": {"podSelector": {}},
    }
    made["metadata"]["labels"]["c"] = "d"
    assert labels == {"a": "b"}


def test_in_namespace_is_one_peer_with_both_selectors() -> None:
    assert p.in_namespace("tools", {"x": "y"}) == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "tools"}},
        "podSelector": {"matchLabels": {"x": "y"}},
    }


# --- peer_manifest ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "made"),
    [
        ({"cidr": "10.0.0.0/8"}, {"ipBlock": {"cidr": "10.0.0.0/8"}}),
        (
            {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]},
            {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}},
        ),
        (
            {"namespace": "web"},
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "web"}}},
        ),
        ({"podLabels": {"app": "ui"}}, {"podSelector": {"matchLabels": {"app": "ui"}}}),
        (
            {"namespace": "web", "podLabels": {"app": "ui"}},
            {
                "podSelector": {"matchLabels": {"app": "ui"}},
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "web"}},
            },
        ),
    ],
)
def test_peer_manifest_of_a_network_peer(given: dict[str, Any], made: dict[str, Any]) -> None:
    assert p.peer_manifest(NetworkPeer.model_validate(given)) == made


@pytest.mark.parametrize(
    ("given", "made"),
    [
        ({"ipBlock": {"cidr": "10.0.0.0/8"}}, {"ipBlock": {"cidr": "10.0.0.0/8"}}),
        (
            {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.2.0.0/16"]}},
            {"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.2.0.0/16"]}},
        ),
        (
            {"podSelector": {"matchLabels": {"a": "b"}}},
            {"podSelector": {"matchLabels": {"a": "b"}}},
        ),
        (
            {"namespaceSelector": {"matchLabels": {"team": "x"}}},
            {"namespaceSelector": {"matchLabels": {"team": "x"}}},
        ),
        (
            {"podSelector": {"matchLabels": {}}, "namespaceSelector": {"matchLabels": {"t": "x"}}},
            {"podSelector": {"matchLabels": {}}, "namespaceSelector": {"matchLabels": {"t": "x"}}},
        ),
    ],
)
def test_peer_manifest_of_a_peer_spec(given: dict[str, Any], made: dict[str, Any]) -> None:
    assert p.peer_manifest(PeerSpec.model_validate(given)) == made


def test_tcp() -> None:
    assert p.tcp(8080) == {"protocol": "TCP", "port": 8080}


# --- tool ingress -----------------------------------------------------------------------------


def test_tool_ingress_admits_agents_with_the_access_label_on_the_tool_port_only() -> None:
    sync = NetworkPeer.model_validate({"namespace": "ci"})
    spec = p.tool_ingress_spec("memory", "tools", 8080, [WEB], [sync])
    assert spec == {
        "podSelector": {"matchLabels": {"langop.io/tool": "memory"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [
                    p.in_namespace("tools", {"access.langop.io/memory": "true"}),
                    {"podSelector": {"matchLabels": {"app": "web"}}},
                    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ci"}}},
                ],
                "ports": [{"protocol": "TCP", "port": 8080}],
            }
        ],
    }


def test_cross_namespace_spec_admits_exactly_one_agent() -> None:
    target = ToolTarget("memory", "tools", port=9000)
    assert p.cross_namespace_spec(target, "agents", "bot") == {
        "podSelector": {"matchLabels": {"langop.io/tool": "memory"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [p.in_namespace("agents", {"langop.io/agent": "bot"})],
                "ports": [{"protocol": "TCP", "port": 9000}],
            }
        ],
    }


# --- agent ingress ----------------------------------------------------------------------------


def test_agent_ingress_without_ports_or_peers_admits_nothing() -> None:
    nothing = {
        "podSelector": {"matchLabels": {"langop.io/agent": "bot"}},
        "policyTypes": ["Ingress"],
    }
    assert p.agent_ingress_spec("bot") == nothing
    assert p.agent_ingress_spec("bot", [AgentPort(name="http", port=8000)]) == nothing


def test_allow_from_without_ports_never_renders_an_empty_port_list() -> None:
    """``ports: []`` in a NetworkPolicy rule means every port: with no port to admit the
    peers to, no rule is made at all (the spec refuses such an agent too)."""
    spec = p.agent_ingress_spec("bot", (), [WEB])
    assert "ingress" not in spec
    with pytest.raises(ValueError, match="allowFrom admits peers to the agent's ports; add ports"):
        agent(allowFrom=[{"podSelector": {"matchLabels": {"app": "web"}}}])


def test_agent_ingress_admits_its_peers_on_its_ports() -> None:
    ports = [AgentPort(name="http", port=8000), AgentPort(name="grpc", port=9000)]
    assert p.agent_ingress_spec("bot", ports, [WEB])["ingress"] == [
        {
            "from": [{"podSelector": {"matchLabels": {"app": "web"}}}],
            "ports": [{"protocol": "TCP", "port": 8000}, {"protocol": "TCP", "port": 9000}],
        }
    ]


def test_with_sync_ingress_adds_a_rule_to_the_agents_ingress_only() -> None:
    made = [
        ("bot-ingress", "agents", {"ingress": [{"from": []}], "podSelector": {}}),
        ("bot-egress", "agents", {"egress": []}),
    ]
    peer = NetworkPeer.model_validate({"namespace": "ci"})
    out = p.with_sync_ingress(made, "bot", [peer], [8080, 9090])
    assert out == [
        (
            "bot-ingress",
            "agents",
            {
                "ingress": [
                    {"from": []},
                    {
                        "from": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "ci"}
                                }
                            }
                        ],
                        "ports": [
                            {"protocol": "TCP", "port": 8080},
                            {"protocol": "TCP", "port": 9090},
                        ],
                    },
                ],
                "podSelector": {},
            },
        ),
        ("bot-egress", "agents", {"egress": []}),
    ]
    assert made[0][2]["ingress"] == [{"from": []}]  # the input is not changed


def test_with_sync_ingress_without_peers_or_ports_changes_nothing() -> None:
    made = [("bot-ingress", "agents", {"ingress": []})]
    peer = NetworkPeer.model_validate({"namespace": "ci"})
    assert p.with_sync_ingress(made, "bot", [], [8080]) == made
    assert p.with_sync_ingress(made, "bot", [peer], []) == made
    assert p.with_sync_ingress(made, "bot", [], [8080]) is not made


# --- egress -----------------------------------------------------------------------------------


def test_egress_spec_allows_dns_service_tools_and_egress_to() -> None:
    targets = [
        ToolTarget("memory", "tools", port=8080),
        ToolTarget("side", "agents", port=7000, deployment_mode="sidecar"),
    ]
    rules = [
        EgressRule.model_validate({"cidr": "10.0.0.0/8", "ports": [{"port": 443}]}),
        EgressRule.model_validate({"namespace": "db", "ports": [{"port": 53, "protocol": "UDP"}]}),
        EgressRule.model_validate({"podLabels": {"app": "cache"}}),
    ]
    assert p.egress_spec({"x": "y"}, targets, rules) == {
        "podSelector": {"matchLabels": {"x": "y"}},
        "policyTypes": ["Egress"],
        "egress": [
            DNS,
            {
                "to": [p.in_namespace("tools", {"langop.io/tool": "memory"})],
                "ports": [{"protocol": "TCP", "port": 8080}],
            },
            {
                "to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}],
                "ports": [{"protocol": "TCP", "port": 443}],
            },
            {
                "to": [
                    {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "db"}}}
                ],
                "ports": [{"protocol": "UDP", "port": 53}],
            },
            {"to": [{"podSelector": {"matchLabels": {"app": "cache"}}}]},
        ],
    }


def test_egress_spec_alone_allows_dns_only() -> None:
    assert p.egress_spec({"x": "y"})["egress"] == [DNS]
    assert (p.DNS_NAMESPACE, p.DNS_POD_LABELS) == ("kube-system", {"k8s-app": "kube-dns"})


def test_agent_egress_spec_selects_the_agent() -> None:
    spec = p.agent_egress_spec("bot", [ToolTarget("memory", "tools")])
    assert spec == p.egress_spec({"langop.io/agent": "bot"}, [ToolTarget("memory", "tools")])
    assert spec["podSelector"] == {"matchLabels": {"langop.io/agent": "bot"}}


def test_default_deny_selects_every_pod_for_ingress() -> None:
    assert p.default_deny_spec() == {"podSelector": {}, "policyTypes": ["Ingress"]}


# --- agent_policies ---------------------------------------------------------------------------


def test_agent_policies_open_egress_same_namespace_tool() -> None:
    made = p.agent_policies(agent(), "agents", [ToolTarget("memory", "agents")], "open")
    assert made == [("bot-ingress", "agents", p.agent_ingress_spec("bot"))]


def test_agent_policies_cross_namespace_and_restricted() -> None:
    spec = agent(
        ports=[{"name": "http", "port": 8000}],
        allowFrom=[{"podSelector": {"matchLabels": {"app": "web"}}}],
        egressTo=[{"cidr": "10.0.0.0/8"}],
    )
    targets = [
        ToolTarget("local", "agents"),
        ToolTarget("side", "other", deployment_mode="sidecar"),
        ToolTarget("memory", "tools", port=9000),
    ]
    made = p.agent_policies(spec, "agents", targets, "restricted")
    assert [(name, ns) for name, ns, _ in made] == [
        ("bot-ingress", "agents"),
        ("memory.from.agents.bot", "tools"),
        ("bot-egress", "agents"),
    ]
    assert made[0][2] == p.agent_ingress_spec("bot", spec.ports, spec.allow_from)
    assert made[1][2] == p.cross_namespace_spec(targets[2], "agents", "bot")
    assert made[2][2] == p.agent_egress_spec("bot", targets, spec.egress_to)
    assert made[2][2]["egress"][-1] == {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}
