"""NetworkPolicy semantics of langop_infra.netpol, on hand-written policies."""

from __future__ import annotations

import copy
from typing import Any

import kubernetes_validate
import pytest
from hypothesis import given, settings, strategies as st

from langop_infra.netpol import (
    NAMESPACE_NAME_LABEL,
    IPAddress,
    Network,
    Pod,
    Verdict,
    may_reach,
)

K8S_VERSION = "1.30.0"
ALL: dict[str, Any] = {}  # the empty selector: every pod, or every namespace


def netpol(
    name: str,
    namespace: str,
    pod_selector: dict[str, Any],
    *,
    policy_types: list[str] | None = None,
    ingress: list[dict[str, Any]] | None = None,
    egress: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A NetworkPolicy manifest, checked against the Kubernetes schema; None omits a field."""
    spec: dict[str, Any] = {"podSelector": pod_selector}
    for field, value in (("policyTypes", policy_types), ("ingress", ingress), ("egress", egress)):
        if value is not None:
            spec[field] = value
    manifest = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
    kubernetes_validate.validate(copy.deepcopy(manifest), K8S_VERSION, strict=True)
    return manifest


def labels(**pairs: str) -> dict[str, Any]:
    return {"matchLabels": pairs}


def deny_all(namespace: str, *types: str) -> dict[str, Any]:
    return netpol(f"deny-{'-'.join(types).lower()}", namespace, ALL, policy_types=list(types))


web = Pod("app", {"app": "web"}, name="web", ip="10.1.0.5")
api = Pod("app", {"app": "api"}, name="api", ip="10.1.0.6", ports={"http": 8080, "metrics": 9090})
db = Pod("data", {"app": "db"}, name="db", ip="10.2.0.7")
external = IPAddress("203.0.113.10")


def test_no_policies_allow_everything() -> None:
    network = Network([])
    for source, destination in ((web, api), (api, db), (web, external), (external, db)):
        assert network.allows(source, destination, 8080)
        assert network.allows(source, destination, 53, "UDP")
    assert network.explain(web, api, 8080) == Verdict(
        True, "allowed: app/web is not isolated for egress; app/api is not isolated for ingress"
    )


def test_selected_pod_with_empty_ingress_is_denied_everything() -> None:
    network = Network(
        [netpol("lock-api", "app", labels(app="api"), policy_types=["Ingress"], ingress=[])]
    )
    assert not network.allows(web, api, 8080)
    assert not network.allows(db, api, 8080)
    assert not network.allows(external, api, 8080)
    assert network.allows(api, web, 8080), "ingress isolation leaves api's egress open"
    assert network.allows(api, db, 5432)
    assert network.allows(api, web, 8080) and network.allows(db, web, 80), "web is not selected"


def test_allows_are_additive_across_policies() -> None:
    from_web = netpol(
        "api-from-web",
        "app",
        labels(app="api"),
        ingress=[{"from": [{"podSelector": labels(app="web")}]}],
    )
    from_db = netpol(
        "api-from-data",
        "app",
        labels(app="api"),
        ingress=[{"from": [{"namespaceSelector": labels(**{NAMESPACE_NAME_LABEL: "data"})}]}],
    )
    network = Network([from_web, from_db])
    other = Pod("app", {"app": "other"}, name="other")
    assert network.allows(web, api, 8080)
    assert network.allows(db, api, 8080)
    assert not network.allows(other, api, 8080)
    assert Network([from_web]).allows(web, api, 80) and not Network([from_web]).allows(db, api, 80)
    assert Network([from_db]).allows(db, api, 80) and not Network([from_db]).allows(web, api, 80)


def test_policy_types_omitted_without_egress_section_isolates_ingress_only() -> None:
    network = Network([netpol("api", "app", labels(app="api"))])
    assert not network.allows(web, api, 8080)
    assert network.allows(api, db, 5432)
    assert network.allows(api, external, 443)


def test_policy_types_omitted_with_egress_section_isolates_both() -> None:
    network = Network(
        [
            netpol(
                "api",
                "app",
                labels(app="api"),
                egress=[{"to": [{"podSelector": labels(app="web")}]}],
            )
        ]
    )
    assert network.allows(api, web, 80)
    assert not network.allows(api, db, 5432)
    assert not network.allows(web, api, 8080), "Ingress is always implied, and nothing is admitted"


def test_policy_types_omitted_with_empty_egress_list_does_not_isolate_egress() -> None:
    # The API server turns Egress on only for a non-empty egress list.
    network = Network([netpol("api", "app", labels(app="api"), egress=[])])
    assert network.allows(api, db, 5432)
    assert not network.allows(web, api, 8080)


def test_egress_only_policy_does_not_isolate_ingress() -> None:
    network = Network([deny_all("app", "Egress")])
    assert network.allows(db, api, 8080)
    assert network.allows(external, web, 80)
    assert not network.allows(web, api, 8080)
    assert not network.allows(api, db, 5432)
    assert not network.allows(web, external, 443)
    assert network.allows(db, external, 443)


def test_empty_pod_selector_selects_every_pod_of_its_own_namespace_only() -> None:
    network = Network([deny_all("app", "Ingress")])
    assert not network.allows(db, web, 80)
    assert not network.allows(db, api, 8080)
    assert not network.allows(web, api, 8080), "same-namespace traffic is denied too"
    assert network.allows(web, db, 5432), "pods of other namespaces are not selected"


def test_one_peer_with_both_selectors_ands_them_and_two_peers_or_them() -> None:
    team_a_agents = {"namespaceSelector": labels(team="a"), "podSelector": labels(role="agent")}
    one_peer = netpol("tool", "tools", labels(app="tool"), ingress=[{"from": [team_a_agents]}])
    two_peers = netpol(
        "tool",
        "tools",
        labels(app="tool"),
        ingress=[
            {
                "from": [
                    {"namespaceSelector": labels(team="a")},
                    {"podSelector": labels(role="agent")},
                ]
            }
        ],
    )
    namespaces = {"team-a": {"team": "a"}, "team-b": {"team": "b"}}
    tool = Pod("tools", {"app": "tool"}, name="tool")
    agent_in_a = Pod("team-a", {"role": "agent"}, name="agent-a")
    other_in_a = Pod("team-a", {"role": "batch"}, name="batch-a")
    agent_in_tools = Pod("tools", {"role": "agent"}, name="agent-tools")
    agent_in_b = Pod("team-b", {"role": "agent"}, name="agent-b")

    anded, ored = Network([one_peer], namespaces), Network([two_peers], namespaces)
    assert anded.allows(agent_in_a, tool, 8080) and ored.allows(agent_in_a, tool, 8080)
    assert not anded.allows(other_in_a, tool, 8080)
    assert ored.allows(other_in_a, tool, 8080), "any pod of a team=a namespace"
    assert not anded.allows(agent_in_tools, tool, 8080)
    assert ored.allows(agent_in_tools, tool, 8080), (
        "a lone podSelector means the policy's namespace"
    )
    assert not anded.allows(agent_in_b, tool, 8080) and not ored.allows(agent_in_b, tool, 8080)


def test_empty_namespace_selector_means_every_namespace() -> None:
    every_pod = netpol(
        "api", "app", labels(app="api"), ingress=[{"from": [{"namespaceSelector": ALL}]}]
    )
    network = Network([every_pod])
    assert network.allows(db, api, 8080)
    assert network.allows(web, api, 8080)
    assert network.allows(Pod("elsewhere", {}), api, 8080)
    assert not network.allows(external, api, 8080), "selectors never match addresses"

    web_anywhere = netpol(
        "api",
        "app",
        labels(app="api"),
        ingress=[{"from": [{"namespaceSelector": ALL, "podSelector": labels(app="web")}]}],
    )
    network = Network([web_anywhere])
    assert network.allows(Pod("elsewhere", {"app": "web"}), api, 8080)
    assert network.allows(web, api, 8080)
    assert not network.allows(db, api, 8080)


@pytest.mark.parametrize(
    ("expression", "pod_labels", "expected"),
    [
        ({"key": "tier", "operator": "In", "values": ["a", "b"]}, {"tier": "a"}, True),
        ({"key": "tier", "operator": "In", "values": ["a", "b"]}, {"tier": "c"}, False),
        ({"key": "tier", "operator": "In", "values": ["a", "b"]}, {}, False),
        ({"key": "tier", "operator": "NotIn", "values": ["a", "b"]}, {"tier": "c"}, True),
        ({"key": "tier", "operator": "NotIn", "values": ["a", "b"]}, {"tier": "b"}, False),
        ({"key": "tier", "operator": "NotIn", "values": ["a", "b"]}, {}, True),
        ({"key": "tier", "operator": "Exists"}, {"tier": ""}, True),
        ({"key": "tier", "operator": "Exists"}, {"other": "a"}, False),
        ({"key": "tier", "operator": "DoesNotExist"}, {"other": "a"}, True),
        ({"key": "tier", "operator": "DoesNotExist"}, {"tier": "a"}, False),
    ],
)
def test_match_expressions_operators(
    expression: dict[str, Any], pod_labels: dict[str, str], expected: bool
) -> None:
    selector = {"matchExpressions": [expression]}
    network = Network(
        [netpol("api", "app", labels(app="api"), ingress=[{"from": [{"podSelector": selector}]}])]
    )
    assert network.allows(Pod("app", pod_labels), api, 8080) is expected


def test_match_labels_and_match_expressions_are_anded() -> None:
    selector = {
        "matchLabels": {"role": "agent"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}],
    }
    network = Network(
        [netpol("api", "app", labels(app="api"), ingress=[{"from": [{"podSelector": selector}]}])]
    )
    assert network.allows(Pod("app", {"role": "agent", "tier": "gold"}), api, 8080)
    assert not network.allows(Pod("app", {"role": "agent", "tier": "silver"}), api, 8080)
    assert not network.allows(Pod("app", {"role": "batch", "tier": "gold"}), api, 8080)


def test_ports_protocols_and_ranges() -> None:
    network = Network(
        [
            netpol(
                "api",
                "app",
                labels(app="api"),
                ingress=[
                    {"ports": [{"port": 8080}]},
                    {"ports": [{"protocol": "UDP", "port": 5353}]},
                    {"ports": [{"port": 30000, "endPort": 30010}]},
                    {"ports": [{"protocol": "SCTP"}]},
                ],
            )
        ]
    )
    assert network.allows(web, api, 8080)
    assert not network.allows(web, api, 8081)
    assert not network.allows(web, api, 8080, "UDP"), "a port without protocol means TCP"
    assert network.allows(web, api, 5353, "UDP")
    assert not network.allows(web, api, 5353, "TCP")
    assert network.allows(web, api, 30000) and network.allows(web, api, 30010)
    assert not network.allows(web, api, 29999) and not network.allows(web, api, 30011)
    assert network.allows(web, api, 1, "SCTP") and network.allows(web, api, 65535, "SCTP")


def test_named_ports_resolve_against_the_destination_pod() -> None:
    ingress = netpol("api", "app", labels(app="api"), ingress=[{"ports": [{"port": "http"}]}])
    network = Network([ingress])
    assert network.allows(web, api, 8080)
    assert not network.allows(web, api, 9090), "9090 is named metrics, not http"
    assert not network.allows(web, api, 8080, "UDP")

    egress = netpol(
        "web",
        "app",
        labels(app="web"),
        policy_types=["Egress"],
        egress=[{"ports": [{"port": "http"}]}],
    )
    network = Network([egress])
    assert network.allows(web, api, 8080)
    assert not network.allows(web, db, 8080), "db declares no port named http"
    assert not network.allows(web, external, 8080), "an address has no named ports"


def test_ip_block_with_except_for_egress_to_external_addresses() -> None:
    network = Network(
        [
            netpol(
                "web-out",
                "app",
                labels(app="web"),
                policy_types=["Egress"],
                egress=[
                    {
                        "to": [
                            {"ipBlock": {"cidr": "203.0.113.0/24", "except": ["203.0.113.128/25"]}}
                        ],
                        "ports": [{"port": 443}],
                    }
                ],
            )
        ]
    )
    assert network.allows(web, IPAddress("203.0.113.10"), 443)
    assert not network.allows(web, IPAddress("203.0.113.200"), 443), "inside except"
    assert not network.allows(web, IPAddress("198.51.100.1"), 443), "outside cidr"
    assert not network.allows(web, IPAddress("2001:db8::1"), 443), "other address family"
    assert not network.allows(web, IPAddress("203.0.113.10"), 80)
    assert not network.allows(web, api, 443), "ipBlock matches a pod only through its ip"
    assert network.allows(web, Pod("app", {}, ip="203.0.113.20"), 443)


def test_ip_block_for_ingress_from_addresses() -> None:
    network = Network(
        [
            netpol(
                "api",
                "app",
                labels(app="api"),
                ingress=[{"from": [{"ipBlock": {"cidr": "10.1.0.0/16"}}]}],
            )
        ]
    )
    assert network.allows(IPAddress("10.1.200.1"), api, 8080)
    assert not network.allows(external, api, 8080)
    assert network.allows(web, api, 8080), "web's ip is inside the block"
    assert not network.allows(Pod("app", {"app": "web"}), api, 8080), "a pod without ip"


def test_both_sides_must_admit() -> None:
    web_may_call_api = netpol(
        "web-egress",
        "app",
        labels(app="web"),
        policy_types=["Egress"],
        egress=[{"to": [{"podSelector": labels(app="api")}]}],
    )
    api_admits_web = netpol(
        "api-ingress",
        "app",
        labels(app="api"),
        ingress=[{"from": [{"podSelector": labels(app="web")}]}],
    )
    api_locked = netpol("api-ingress", "app", labels(app="api"), ingress=[])
    web_locked = netpol("web-egress", "app", labels(app="web"), policy_types=["Egress"])
    assert Network([web_may_call_api, api_admits_web]).allows(web, api, 8080)
    assert not Network([web_may_call_api, api_locked]).allows(web, api, 8080)
    assert not Network([web_locked, api_admits_web]).allows(web, api, 8080)
    assert not Network([web_locked, api_locked]).allows(web, api, 8080)


def test_dns_egress_to_kube_dns() -> None:
    kube_dns = Pod("kube-system", {"k8s-app": "kube-dns"}, name="coredns-1", ip="10.96.0.10")
    metrics_server = Pod("kube-system", {"k8s-app": "metrics-server"}, name="metrics-server")
    agent = Pod("agents", {"app": "agent"}, name="agent")
    dns = {
        "to": [
            {
                "namespaceSelector": labels(**{NAMESPACE_NAME_LABEL: "kube-system"}),
                "podSelector": labels(**{"k8s-app": "kube-dns"}),
            }
        ],
        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
    }
    network = Network(
        [netpol("agent-egress", "agents", ALL, policy_types=["Egress"], egress=[dns])]
    )
    assert network.allows(agent, kube_dns, 53, "UDP")
    assert network.allows(agent, kube_dns, 53, "TCP")
    assert not network.allows(agent, kube_dns, 80)
    assert not network.allows(agent, kube_dns, 5353, "UDP")
    assert not network.allows(agent, metrics_server, 53, "UDP")
    assert not network.allows(agent, Pod("default", {"k8s-app": "kube-dns"}), 53, "UDP")
    assert not network.allows(agent, IPAddress("8.8.8.8"), 53, "UDP")


def test_namespace_labels_always_carry_the_name_label() -> None:
    network = Network([], {"team-a": {"team": "a"}})
    assert network.namespace_labels("team-a") == {"team": "a", NAMESPACE_NAME_LABEL: "team-a"}
    assert network.namespace_labels("unknown") == {NAMESPACE_NAME_LABEL: "unknown"}
    assert Network([], {"x": {NAMESPACE_NAME_LABEL: "x"}}).namespace_labels("x") == {
        NAMESPACE_NAME_LABEL: "x"
    }
    with pytest.raises(ValueError, match=r"namespace_labels\['x'\].*got 'y'"):
        Network([], {"x": {NAMESPACE_NAME_LABEL: "y"}})


def test_a_pod_may_always_reach_itself() -> None:
    network = Network([deny_all("app", "Ingress", "Egress")])
    assert network.explain(web, web, 80) == Verdict(
        True, "allowed: app/web may always reach itself"
    )
    assert not network.allows(web, api, 80)


def test_explain_names_the_policies() -> None:
    tool = Pod("ns", {"app": "tool-x"}, name="b")
    caller = Pod("ns", {"app": "caller"}, name="a")
    tool_x = netpol(
        "tool-x",
        "ns",
        labels(app="tool-x"),
        ingress=[{"from": [{"podSelector": labels(app="agent")}]}],
    )
    network = Network([deny_all("ns", "Ingress"), tool_x])
    assert network.explain(caller, tool, 8080) == Verdict(
        False,
        "blocked: ns/b is isolated for ingress by [ns/deny-ingress, ns/tool-x] "
        "and no rule admits ns/a on TCP 8080",
    )
    agent = Pod("ns", {"app": "agent"})
    assert network.explain(agent, tool, 8080) == Verdict(
        True,
        "allowed: ns/pod{app=agent} is not isolated for egress; "
        "ingress of ns/b admitted by [ns/tool-x]",
    )
    egress = Network([netpol("out", "ns", ALL, policy_types=["Egress"])])
    assert egress.explain(caller, external, 443, "UDP") == Verdict(
        False,
        "blocked: ns/a is isolated for egress by [ns/out] "
        "and no rule admits 203.0.113.10 on UDP 443",
    )


def test_may_reach_is_a_one_off_network() -> None:
    policies = [deny_all("app", "Ingress")]
    assert not may_reach(policies, db, api, 8080)
    assert may_reach(policies, api, db, 5432)
    open_to_team = netpol(
        "api",
        "app",
        labels(app="api"),
        ingress=[{"from": [{"namespaceSelector": labels(team="a")}]}],
    )
    member = Pod("data", {})
    assert may_reach([open_to_team], member, api, 80, namespace_labels={"data": {"team": "a"}})
    assert not may_reach([open_to_team], member, api, 80)


def raw(spec: Any, name: str = "bad", **top: Any) -> dict[str, Any]:
    """A manifest that skips schema validation, for malformed-input tests."""
    manifest = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": spec,
    }
    manifest.update(top)
    return manifest


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (
            raw({"podSelector": {}, "policyTypes": ["Ingres"]}),
            r"ns/bad: spec\.policyTypes: 'Ingres'",
        ),
        (
            raw(
                {
                    "podSelector": {
                        "matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]
                    }
                }
            ),
            r"ns/bad: spec\.podSelector\.matchExpressions\[0\]\.operator: 'Equals' is not one of",
        ),
        (
            raw({"podSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]}}),
            r"matchExpressions\[0\]\.values: In/NotIn need values",
        ),
        (
            raw(
                {
                    "podSelector": {
                        "matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]
                    }
                }
            ),
            r"matchExpressions\[0\]\.values: .*Exists/DoesNotExist take none",
        ),
        (
            raw({"podSelector": "app=web"}),
            r"ns/bad: spec\.podSelector: expected a mapping, got str",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"from": [{"podSelector": ["app"]}]}]}),
            r"spec\.ingress\[0\]\.from\[0\]\.podSelector: expected a mapping, got list",
        ),
        (
            raw(
                {
                    "podSelector": {},
                    "ingress": [{"from": [{"namespaceSelector": {"matchLabel": {}}}]}],
                }
            ),
            r"from\[0\]\.namespaceSelector: unknown field\(s\) \['matchLabel'\]",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"to": [{"podSelector": {}}]}]}),
            r"spec\.ingress\[0\]: unknown field\(s\) \['to'\]",
        ),
        (raw({"podSelector": {}, "ingress": [{"from": [{}]}]}), r"from\[0\]: a peer needs"),
        (
            raw(
                {
                    "podSelector": {},
                    "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}, "podSelector": {}}]}],
                }
            ),
            r"egress\[0\]\.to\[0\]: ipBlock cannot be combined",
        ),
        (
            raw(
                {
                    "podSelector": {},
                    "egress": [
                        {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["11.0.0.0/16"]}}]}
                    ],
                }
            ),
            r"ipBlock\.except\[0\]: 11\.0\.0\.0/16 is not strictly inside 10\.0\.0\.0/8",
        ),
        (
            raw(
                {
                    "podSelector": {},
                    "egress": [
                        {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.0.0.0/8"]}}]}
                    ],
                }
            ),
            r"ipBlock\.except\[0\]: 10\.0\.0\.0/8 is not strictly inside",
        ),
        (
            raw({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "example.com"}}]}]}),
            r"ipBlock\.cidr: 'example\.com' is not a CIDR",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"port": "8080"}]}]}),
            r"ports\[0\]\.port: expected a number",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"port": 0}]}]}),
            r"ports\[0\]\.port: expected a number",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"port": "http", "endPort": 90}]}]}),
            r"ports\[0\]\.endPort",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80}]}]}),
            r"ports\[0\]\.endPort",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"endPort": 80}]}]}),
            r"ports\[0\]\.endPort: needs a numeric port",
        ),
        (
            raw({"podSelector": {"matchLabels": {"app": None}}}),
            r"podSelector\.matchLabels: expected strings mapped to strings",
        ),
        (
            raw({"podSelector": {}, "ingress": [{"ports": [{"protocol": "tcp"}]}]}),
            r"ports\[0\]\.protocol: 'tcp'",
        ),
        (
            raw({"podSelector": {"matchLabels": {"enabled": True}}}),
            r"matchLabels: expected strings mapped to strings, got \{'enabled': True\}",
        ),
        (
            raw(
                {
                    "podSelector": {
                        "matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]
                    }
                }
            ),
            r"matchExpressions\[0\]\.values: expected strings, got \[1\]",
        ),
        (raw({"ingress": []}), r"ns/bad: spec\.podSelector is required"),
        (
            raw({"podSelector": {}, "podselector": {}}),
            r"ns/bad: spec: unknown field\(s\) \['podselector'\]",
        ),
        (
            raw({"podSelector": {}}, kind="Deployment"),
            r"ns/bad: expected networking\.k8s\.io/v1 NetworkPolicy",
        ),
        (
            raw({"podSelector": {}}, metadata={"name": "bad"}),
            r"None/bad: metadata\.name and metadata\.namespace",
        ),
    ],
)
def test_malformed_policies_are_rejected_naming_policy_and_field(
    manifest: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Network([manifest])


def test_duplicate_policies_and_bad_queries_are_rejected() -> None:
    with pytest.raises(ValueError, match=r"ns/bad: given twice"):
        Network([raw({"podSelector": {}}), raw({"podSelector": {}})])
    network = Network([])
    with pytest.raises(ValueError, match=r"port: expected a number from 1 to 65535, got 0"):
        network.allows(web, api, 0)
    with pytest.raises(ValueError, match=r"protocol: 'ICMP' is not one of"):
        network.allows(web, api, 80, "ICMP")
    with pytest.raises(TypeError, match=r"expected a Pod or IPAddress"):
        network.allows(web, "10.0.0.1", 80)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        IPAddress("not-an-ip")
    with pytest.raises(ValueError):
        Pod("app", {}, ip="10.0.0.300")


def test_null_fields_mean_omitted() -> None:
    # Serializers (and kubectl's JSON) may write null for an omitted list.
    network = Network(
        [raw({"podSelector": {}, "policyTypes": None, "ingress": [{"from": None, "ports": None}]})]
    )
    assert network.allows(Pod("elsewhere", {}), Pod("ns", {}), 8080)


def test_many_checks_reuse_one_network() -> None:
    namespaces = ("agents", "tools")
    agents = [
        Pod("agents", {"app": f"agent-{i}", f"uses-tool-{i % 3}": "true"}, name=f"agent-{i}")
        for i in range(4)
    ]
    tools = [Pod("tools", {"app": f"tool-{j}"}, name=f"tool-{j}") for j in range(3)]
    policies = [deny_all(ns, "Ingress") for ns in namespaces] + [
        netpol(
            f"tool-{j}",
            "tools",
            labels(app=f"tool-{j}"),
            ingress=[
                {
                    "from": [
                        {
                            "namespaceSelector": ALL,
                            "podSelector": labels(**{f"uses-tool-{j}": "true"}),
                        }
                    ],
                    "ports": [{"port": 8080}],
                }
            ],
        )
        for j in range(3)
    ]
    network = Network(policies)
    for _ in range(50):
        reachable = {(a.name, t.name) for a in agents for t in tools if network.allows(a, t, 8080)}
        assert reachable == {
            ("agent-0", "tool-0"),
            ("agent-1", "tool-1"),
            ("agent-2", "tool-2"),
            ("agent-3", "tool-0"),
        }


# Property tests: generated policies over a small label space, so selectors often match.
LABEL_KEYS = ("app", "role")
LABEL_VALUES = ("a", "b")
NAMESPACES = ("n1", "n2")
NAMESPACE_LABELS = {"n1": {"app": "a"}, "n2": {"app": "b", "role": "a"}}

label_maps = st.dictionaries(st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=2)
pods = st.builds(Pod, namespace=st.sampled_from(NAMESPACES), labels=label_maps)
selectors = label_maps.map(lambda pairs: {"matchLabels": pairs} if pairs else {})
peers = st.one_of(
    st.builds(lambda s: {"podSelector": s}, selectors),
    st.builds(lambda s: {"namespaceSelector": s}, selectors),
    st.builds(lambda p, n: {"podSelector": p, "namespaceSelector": n}, selectors, selectors),
)
port_entries = st.builds(
    lambda port, protocol: {"port": port, "protocol": protocol},
    st.sampled_from((80, 443)),
    st.sampled_from(("TCP", "UDP")),
)
rules = st.fixed_dictionaries(
    {}, optional={"peers": st.lists(peers, max_size=2), "ports": st.lists(port_entries, max_size=2)}
)


@st.composite
def policies(draw: st.DrawFn, name: str) -> dict[str, Any]:
    def section(peers_field: str) -> list[dict[str, Any]]:
        out = []
        for rule in draw(st.lists(rules, max_size=2)):
            entry = {}
            if "peers" in rule:
                entry[peers_field] = rule["peers"]
            if "ports" in rule:
                entry["ports"] = rule["ports"]
            out.append(entry)
        return out

    types = draw(st.sampled_from((["Ingress"], ["Egress"], ["Ingress", "Egress"])))
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": draw(st.sampled_from(NAMESPACES))},
        "spec": {
            "podSelector": draw(selectors),
            "policyTypes": types,
            "ingress": section("from"),
            "egress": section("to"),
        },
    }


policy_sets = st.integers(0, 4).flatmap(lambda n: st.tuples(*(policies(f"p{i}") for i in range(n))))
queries = st.tuples(pods, pods, st.sampled_from((80, 443, 8080)), st.sampled_from(("TCP", "UDP")))


@given(queries)
def test_property_no_policies_allow_all(query: tuple[Pod, Pod, int, str]) -> None:
    assert Network([]).allows(*query)


@settings(max_examples=25, deadline=None)  # kubernetes-validate is slow under load
@given(policy_sets)
def test_property_generated_policies_are_valid_kubernetes(base: tuple[dict[str, Any], ...]) -> None:
    for policy in base:
        kubernetes_validate.validate(copy.deepcopy(policy), K8S_VERSION, strict=True)


def selects(policy: dict[str, Any], pod: Pod, policy_type: str) -> bool:
    """Whether a generated policy (matchLabels only, explicit policyTypes) isolates ``pod``."""
    wanted = policy["spec"]["podSelector"].get("matchLabels", {})
    return (
        policy_type in policy["spec"]["policyTypes"]
        and policy["metadata"]["namespace"] == pod.namespace
        and all(pod.labels.get(key) == value for key, value in wanted.items())
    )


@settings(max_examples=100)
@given(policy_sets, policies("added"), st.lists(queries, min_size=1, max_size=5))
def test_property_adding_a_policy_never_removes_reachability_unless_it_isolates_anew(
    base: tuple[dict[str, Any], ...], added: dict[str, Any], checks: list[tuple[Pod, Pod, int, str]]
) -> None:
    before = Network(base, NAMESPACE_LABELS)
    after = Network([*base, added], NAMESPACE_LABELS)
    for source, destination, port, protocol in checks:
        isolates_anew = any(
            selects(added, pod, direction) and not any(selects(p, pod, direction) for p in base)
            for pod, direction in ((source, "Egress"), (destination, "Ingress"))
        )
        if before.allows(source, destination, port, protocol) and not isolates_anew:
            assert after.allows(source, destination, port, protocol), after.explain(
                source, destination, port, protocol
            )


@settings(max_examples=100)
@given(policy_sets, policies("added"), st.lists(queries, min_size=1, max_size=5))
def test_property_a_policy_isolating_neither_end_changes_nothing(
    base: tuple[dict[str, Any], ...], added: dict[str, Any], checks: list[tuple[Pod, Pod, int, str]]
) -> None:
    before = Network(base, NAMESPACE_LABELS)
    after = Network([*base, added], NAMESPACE_LABELS)
    for source, destination, port, protocol in checks:
        if selects(added, source, "Egress") or selects(added, destination, "Ingress"):
            continue
        assert after.allows(source, destination, port, protocol) == before.allows(
            source, destination, port, protocol
        )


@settings(max_examples=100)
@given(policy_sets, st.lists(queries, min_size=1, max_size=5), st.randoms())
def test_property_policy_order_does_not_matter(
    base: tuple[dict[str, Any], ...], checks: list[tuple[Pod, Pod, int, str]], random: Any
) -> None:
    shuffled = list(base)
    random.shuffle(shuffled)
    forward, reordered = Network(base, NAMESPACE_LABELS), Network(shuffled, NAMESPACE_LABELS)
    for query in checks:
        assert forward.allows(*query) == reordered.allows(*query)


def test_peer_label_keys_name_what_ingress_and_egress_peers_look_at() -> None:
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "apps"},
        "spec": {
            "podSelector": {"matchLabels": {"app": "db"}},
            "ingress": [
                {
                    "from": [
                        {"podSelector": {"matchLabels": {"role": "api"}}},
                        {
                            "podSelector": {
                                "matchExpressions": [{"key": "tier", "operator": "Exists"}]
                            }
                        },
                        {"ipBlock": {"cidr": "10.0.0.0/8"}},
                    ]
                }
            ],
            "egress": [{"to": [{"podSelector": {"matchLabels": {"kind": "cache"}}}]}],
        },
    }
    network = Network([policy])
    assert network.peer_label_keys("ingress") == {"role", "tier"}
    assert network.peer_label_keys("egress") == {"kind"}
    db = Pod("apps", {"app": "db"})
    assert network.selecting(db) == ["apps/p"]
    assert network.isolated(db, "ingress") and network.isolated(db, "egress")
    assert not network.isolated(Pod("apps", {"app": "web"}), "ingress")
