"""The rendered NetworkPolicies admit exactly the agent→tool graph.

Two LanguageClusters are rendered under the mock engine, their NetworkPolicies are fed to
``reachability.Network`` with pods labelled as the rendered pod templates are, and every
(agent, tool) pair is checked. The last tests cover LanguageCluster itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest

from langop_infra._errors import REDACTED
from langop_infra.components.agent import LanguageAgent
from langop_infra.components.cluster import LanguageCluster
from langop_infra.components.tool import LanguageTool
from langop_infra.core.problems import SpecError
from langop_infra.netpol import IPAddress, Network, Pod
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.offline._render import dump_stream
from langop_infra.testing.secrets import secret_leaves
from tests.support.manifests import validate_manifests

NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
ALPHA, BETA = "alpha", "beta"

# tool -> (namespace, port)
TOOLS: dict[str, tuple[str, int]] = {
    "search": (ALPHA, 9000),
    "calc": (ALPHA, 8080),
    "orphan": (ALPHA, 7000),  # referenced by nobody
    "notes": (BETA, 8081),
}
# agent -> (namespace, [(tool, tool namespace, enabled)])
AGENTS: dict[str, tuple[str, list[tuple[str, str, bool]]]] = {
    "planner": (ALPHA, [("search", ALPHA, True), ("calc", ALPHA, True)]),
    "writer": (ALPHA, [("search", ALPHA, True), ("calc", ALPHA, False)]),
    "reviewer": (BETA, [("notes", BETA, True), ("search", ALPHA, True)]),  # cross-namespace
    "summarizer": (BETA, [("notes", BETA, True), ("search", ALPHA, False)]),
}
EGRESS_TO = [{"cidr": "203.0.113.0/24", "ports": [{"port": 443}]}]
KUBE_DNS = Pod("kube-system", {"k8s-app": "kube-dns"}, name="coredns")
MODES = [("open", False), ("restricted", False), ("open", True), ("restricted", True)]


def enabled_reference(agent: str, tool: str) -> bool:
    return any(name == tool and enabled for name, _, enabled in AGENTS[agent][1])


def cluster_document(namespace: str, egress: str, default_deny: bool) -> dict[str, Any]:
    tools = [
        {"name": name, "image": f"ghcr.io/acme/{name}:1", "port": port}
        for name, (ns, port) in TOOLS.items()
        if ns == namespace
    ]
    agents = []
    for name, (ns, refs) in AGENTS.items():
        if ns != namespace:
            continue
        agent: dict[str, Any] = {
            "name": name,
            "image": f"ghcr.io/acme/{name}:1",
            "tools": [
                {"name": tool, "enabled": enabled}
                | ({"namespace": tool_ns} if tool_ns != namespace else {})
                for tool, tool_ns, enabled in refs
            ],
        }
        if name == "reviewer" and egress == "restricted":
            agent["egressTo"] = EGRESS_TO
        agents.append(agent)
    return {
        "namespace": namespace,
        "partOf": "graph",
        "defaults": {"egress": egress, "defaultDeny": default_deny},
        "tools": tools,
        "agents": agents,
    }


def graph_program(egress: str, default_deny: bool) -> Callable[[], None]:
    def program() -> None:
        alpha = LanguageCluster(ALPHA, cluster_document(ALPHA, egress, default_deny))
        LanguageCluster(
            BETA,
            cluster_document(BETA, egress, default_deny),
            external_tools=[alpha.tools["search"]],
        )

    return program


def of_kind(manifests: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [m for m in manifests if m["kind"] == kind]


def workload_pods(manifests: list[dict[str, Any]]) -> dict[str, Pod]:
    """One pod per Deployment, labelled as its pod template, with its named container ports."""
    pods = {}
    for deployment in of_kind(manifests, "Deployment"):
        template = deployment["spec"]["template"]
        ports = {
            port["name"]: port["containerPort"]
            for container in template["spec"]["containers"]
            for port in container.get("ports", [])
        }
        name = deployment["metadata"]["name"]
        pods[name] = Pod(
            deployment["metadata"]["namespace"], template["metadata"]["labels"], name, ports=ports
        )
    return pods


def network_of(manifests: list[dict[str, Any]], *, only: str = "") -> Network:
    return Network(
        [p for p in of_kind(manifests, "NetworkPolicy") if p["metadata"]["name"].endswith(only)],
        {
            ns["metadata"]["name"]: ns["metadata"]["labels"]
            for ns in of_kind(manifests, "Namespace")
        },
    )


def policy_names(manifests: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {
        (p["metadata"]["namespace"], p["metadata"]["name"])
        for p in of_kind(manifests, "NetworkPolicy")
    }


Graph = tuple[list[dict[str, Any]], dict[str, Pod], Network]
_GRAPHS: dict[tuple[str, bool], Graph] = {}


@pytest.fixture
def graph(render: Callable[..., Any]) -> Callable[[str, bool], Graph]:
    """``graph(egress, default_deny)``: manifests (validated), pods and Network, rendered once
    per mode for the whole module: the manifests are plain data."""

    def build(egress: str, default_deny: bool) -> Graph:
        if (egress, default_deny) not in _GRAPHS:
            manifests = render(graph_program(egress, default_deny)).manifests
            _GRAPHS[egress, default_deny] = (
                manifests,
                workload_pods(manifests),
                network_of(manifests),
            )
        return _GRAPHS[egress, default_deny]

    return build


# --- the agent→tool graph ---------------------------------------------------------------------


@pytest.mark.parametrize(("egress", "default_deny"), MODES)
def test_each_agent_reaches_exactly_its_enabled_tools(
    graph: Callable, egress: str, default_deny: bool
) -> None:
    _, pods, network = graph(egress, default_deny)
    assert set(pods) == set(TOOLS) | set(AGENTS)
    for name, (namespace, _) in {**TOOLS, **AGENTS}.items():
        assert pods[name].namespace == namespace
    wrong = []
    for agent in AGENTS:
        for tool, (_, port) in TOOLS.items():
            verdict = network.explain(pods[agent], pods[tool], port)
            if verdict.allowed != enabled_reference(agent, tool):
                wrong.append(f"{agent} -> {tool}:{port}: {verdict.reason}")
            # Only the tool's port is opened, never the rest of its pod.
            assert not network.allows(pods[agent], pods[tool], port + 1)
            assert not network.allows(pods[agent], pods[tool], port, "UDP")
    assert wrong == []
    assert sum(enabled_reference(a, t) for a in AGENTS for t in TOOLS) == 6


@pytest.mark.parametrize(("egress", "default_deny"), MODES)
def test_policies_are_deterministic_labelled_and_linear(
    graph: Callable, egress: str, default_deny: bool
) -> None:
    manifests, _, _ = graph(egress, default_deny)
    policies = of_kind(manifests, "NetworkPolicy")
    validate_manifests(policies)
    expected = {(ns, f"{tool}-ingress") for tool, (ns, _) in TOOLS.items()}
    # Every agent denies ingress (it declares no ports), so every pod is selected.
    expected |= {(ns, f"{agent}-ingress") for agent, (ns, _) in AGENTS.items()}
    # Only the enabled cross-namespace reference brings a policy into the tool's namespace.
    expected.add((ALPHA, "search.from.beta.reviewer"))
    if egress == "restricted":
        expected |= {(ns, f"{agent}-egress") for agent, (ns, _) in AGENTS.items()}
        expected |= {(ns, f"{tool}-egress") for tool, (ns, _) in TOOLS.items()}
    if default_deny:
        expected |= {(ALPHA, "default-deny-ingress"), (BETA, "default-deny-ingress")}
    assert policy_names(manifests) == expected
    for policy in policies:
        labels = policy["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "langop-infra"
        assert labels["app.kubernetes.io/part-of"] == "graph"
        assert labels["app.kubernetes.io/component"] in {"tool", "agent", "cluster"}


@pytest.mark.parametrize("namespace", [ALPHA, BETA])
def test_unrelated_pod_reaches_no_tool(graph: Callable, namespace: str) -> None:
    _, pods, network = graph("open", False)
    strangers = [
        Pod(namespace, {"app": "debug"}, "debug"),
        # Wearing a label that admits agents of *alpha* does not help from elsewhere.
        Pod(namespace, {"access.langop.io/search": "true"}, "impostor")
        if namespace == BETA
        else Pod(namespace, {"langop.io/agent": "reviewer"}, "impostor"),
        Pod("gamma", {"langop.io/agent": "reviewer", "access.langop.io/search": "true"}, "far"),
    ]
    for stranger in strangers:
        for tool, (_, port) in TOOLS.items():
            assert not network.allows(stranger, pods[tool], port), (stranger, tool)


def test_restricted_agent_reaches_its_tools_and_dns_and_nothing_else(graph: Callable) -> None:
    manifests, pods, network = graph("restricted", False)
    bystander = {ns: Pod(ns, {"app": "web"}, f"web-{ns}") for ns in (ALPHA, BETA)}
    for agent, (namespace, _) in AGENTS.items():
        me = pods[agent]
        assert network.allows(me, KUBE_DNS, 53, "UDP"), agent
        assert network.allows(me, KUBE_DNS, 53, "TCP"), agent
        assert not network.allows(me, KUBE_DNS, 5353, "UDP")
        assert not network.allows(me, KUBE_DNS, 80)
        # kube-dns labels outside kube-system are not DNS.
        assert not network.allows(me, Pod(namespace, {"k8s-app": "kube-dns"}), 53, "UDP")
        assert not network.allows(me, IPAddress("1.1.1.1"), 53, "UDP")
        assert not network.allows(me, IPAddress("93.184.216.34"), 443)
        # Unisolated pods show that egress alone stops the agent.
        for pod in bystander.values():
            assert not network.allows(me, pod, 8080)
        assert not network.allows(me, pods["planner" if agent != "planner" else "writer"], 8080)
        # The ingress half allows each of its enabled tools (checked above), so test the
        # egress half on its own: its tools on their ports, no other tool.
        egress_only = network_of(manifests, only="-egress")
        for tool, (_, port) in TOOLS.items():
            assert egress_only.allows(me, pods[tool], port) == enabled_reference(agent, tool), (
                agent,
                tool,
            )
    # egressTo opens exactly the listed CIDR and port.
    reviewer = pods["reviewer"]
    assert network.allows(reviewer, IPAddress("203.0.113.7"), 443)
    assert not network.allows(reviewer, IPAddress("203.0.113.7"), 80)
    assert not network.allows(reviewer, IPAddress("198.51.100.1"), 443)
    assert not network.allows(pods["summarizer"], IPAddress("203.0.113.7"), 443)


def test_open_egress_is_not_restricted(graph: Callable) -> None:
    _, pods, network = graph("open", False)
    web = Pod(ALPHA, {"app": "web"}, "web")
    for agent in AGENTS:
        assert network.allows(pods[agent], IPAddress("93.184.216.34"), 443)
        assert network.allows(pods[agent], web, 8080)


def test_default_deny_leaves_a_non_agent_pod_nothing_to_reach(graph: Callable) -> None:
    _, pods, open_network = graph("open", False)
    _, _, network = graph("open", True)
    for namespace in (ALPHA, BETA):
        stranger = Pod(namespace, {"app": "debug"}, f"debug-{namespace}")
        db = Pod(namespace, {"app": "db"}, f"db-{namespace}")
        # Without default-deny an unselected pod is open to everyone.
        assert open_network.allows(stranger, db, 5432)
        assert not network.allows(stranger, db, 5432)
        for name, pod in pods.items():
            if pod.namespace != namespace:
                continue
            for port in (8080, 9000, 7000, 8081, 443):
                assert not network.allows(stranger, pod, port), (stranger, name, port)
    # Tools are not agents either: one tool cannot call another.
    assert not network.allows(pods["search"], pods["calc"], 8080)


@pytest.mark.slow
def test_policy_count_is_linear_for_50_tools_and_200_agents() -> None:
    tools, agents, per_agent = 50, 200, 5

    def program() -> None:
        LanguageCluster(
            "big",
            {
                "namespace": "big",
                "defaults": {"egress": "restricted", "defaultDeny": True},
                "tools": [{"name": f"t{i}", "image": "ghcr.io/acme/t:1"} for i in range(tools)],
                "agents": [
                    {
                        "name": f"a{j}",
                        "image": "ghcr.io/acme/a:1",
                        "tools": [{"name": f"t{(j * per_agent + k) % tools}"} for k in range(5)],
                    }
                    for j in range(agents)
                ],
            },
        )

    run = run_program(program)
    policies = run.by_type(NETWORK_POLICY)
    # One ingress and one egress policy per tool and per agent, one default deny: linear in
    # tools + agents, never tools x agents (1,000 here). The time it takes is measured by hand
    # in benchmarks/render_overhead.py, never asserted here.
    assert len(policies) == 2 * (tools + agents) + 1 == 501
    assert len({p.name for p in policies}) == len(policies)


# --- LanguageCluster --------------------------------------------------------------------------


def run_cluster(render: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    built: list[LanguageCluster] = []

    def program() -> None:
        built.append(LanguageCluster(*args, **kwargs))

    rendered = render(program)
    return rendered, built[0]


def find(manifests: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def main_container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    return next(c for c in containers if c["name"] == deployment["metadata"]["name"])


DEFAULT_RESOURCES = {
    "requests": {"cpu": "100m", "memory": "128Mi"},
    "limits": {"cpu": "1", "memory": "512Mi"},
}
OWN_RESOURCES = {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}


def shop(**overrides: Any) -> dict[str, Any]:
    return {
        "namespace": "shop",
        "partOf": "storefront",
        "defaults": {
            "imagePullPolicy": "IfNotPresent",
            "resources": DEFAULT_RESOURCES,
            "egress": "restricted",
        },
        "tools": [
            {"name": "catalog", "image": "ghcr.io/acme/catalog:1"},
            {
                "name": "pricing",
                "image": "ghcr.io/acme/pricing:1",
                "imagePullPolicy": "Always",
                "resources": OWN_RESOURCES,
            },
        ],
        "agents": [
            {"name": "seller", "image": "ghcr.io/acme/seller:1", "tools": [{"name": "catalog"}]},
            {
                "name": "auditor",
                "image": "ghcr.io/acme/auditor:1",
                "egress": "open",
                "imagePullPolicy": "Never",
                "tools": [{"name": "pricing"}],
            },
        ],
        **overrides,
    }


def test_cluster_creates_restricted_namespace_applies_defaults_and_exposes_by_name(
    render: Callable[..., Any],
) -> None:
    rendered, cluster = run_cluster(render, "shop", shop())
    manifests = rendered.manifests
    namespace = find(manifests, "Namespace", "shop")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    assert namespace["metadata"]["labels"]["app.kubernetes.io/part-of"] == "storefront"
    assert "namespace" not in namespace["metadata"]
    assert {m["metadata"].get("namespace") for m in manifests if m is not namespace} == {"shop"}

    catalog = main_container(find(manifests, "Deployment", "catalog"))
    assert catalog["imagePullPolicy"] == "IfNotPresent"
    assert catalog["resources"] == DEFAULT_RESOURCES
    pricing = main_container(find(manifests, "Deployment", "pricing"))
    assert pricing["imagePullPolicy"] == "Always"
    assert pricing["resources"] == OWN_RESOURCES
    seller = main_container(find(manifests, "Deployment", "seller"))
    assert seller["imagePullPolicy"] == "IfNotPresent"
    assert seller["resources"] == DEFAULT_RESOURCES
    auditor = main_container(find(manifests, "Deployment", "auditor"))
    assert auditor["imagePullPolicy"] == "Never"
    # The cluster's egress default restricts seller; auditor opts out.
    assert ("shop", "seller-egress") in policy_names(manifests)
    assert ("shop", "auditor-egress") not in policy_names(manifests)

    assert set(cluster.tools) == {"catalog", "pricing"}
    assert set(cluster.agents) == {"seller", "auditor"}
    assert all(isinstance(t, LanguageTool) for t in cluster.tools.values())
    assert all(isinstance(a, LanguageAgent) for a in cluster.agents.values())
    assert cluster.tools["catalog"].target.endpoint == "http://catalog.shop.svc.cluster.local:8080"
    assert [t.name for t in cluster.agents["auditor"].targets] == ["pricing"]
    assert set(cluster.namespace_resources) == {"shop"}
    # Tools and agents are children of the cluster component.
    registrations = rendered.run.registrations
    (cluster_urn,) = [
        r.urn for r in registrations if r.type == "langop-infra:index:LanguageCluster"
    ]
    components = [r for r in registrations if r.type.startswith("langop-infra:index:Lang")]
    assert {r.name for r in components if r.parent == cluster_urn} == {
        "shop/catalog",
        "shop/pricing",
        "shop/seller",
        "shop/auditor",
    }


def test_cluster_adopts_an_existing_namespace(render: Callable[..., Any]) -> None:
    rendered, cluster = run_cluster(render, "shop", shop(createNamespace=False))
    assert cluster.namespace_resources == {}
    assert of_kind(rendered.manifests, "Namespace") == []
    assert {m["metadata"]["namespace"] for m in rendered.manifests} == {"shop"}
    assert find(rendered.manifests, "Deployment", "catalog")["metadata"]["namespace"] == "shop"


def test_cluster_secrets_are_pulumi_secrets_even_from_plain_strings(
    render: Callable[..., Any],
) -> None:
    def values() -> dict[str, Any]:
        return {"token": "plain-token-value", "other": pulumi.Output.secret("wrapped-value")}

    rendered, cluster = run_cluster(render, "shop", shop(secrets={"api-keys": values()}))
    assert set(cluster.secrets) == {"api-keys"}
    secret = find(rendered.manifests, "Secret", "api-keys")
    assert secret["metadata"]["namespace"] == "shop"
    assert secret["type"] == "Opaque"
    assert secret["stringData"] == {"token": REDACTED, "other": REDACTED}
    registration = next(r for r in rendered.run.registrations if r.name == "shop/api-keys")
    assert sorted(secret_leaves(registration.inputs)) == [
        (".stringData.other", "wrapped-value"),
        (".stringData.token", "plain-token-value"),
    ]
    stream = dump_stream(rendered.manifests)
    assert "plain-token-value" not in stream
    assert "wrapped-value" not in stream


def test_unknown_cross_namespace_reference_fails_before_anything_is_registered() -> None:
    spec = {
        "namespace": BETA,
        "tools": [{"name": "notes", "image": "ghcr.io/acme/notes:1"}],
        "agents": [
            {"name": "a", "image": "ghcr.io/acme/a:1", "tools": [{"name": "notes"}]},
            {
                "name": "b",
                "image": "ghcr.io/acme/b:1",
                "tools": [
                    {"name": "notes"},
                    {"name": "search", "namespace": ALPHA},
                    # A disabled reference needs no external tool.
                    {"name": "calc", "namespace": ALPHA, "enabled": False},
                ],
            },
        ],
    }
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(lambda: LanguageCluster(BETA, spec), into=run)
    assert [p.path for p in caught.value.problems] == ["agents[1].tools[1].name"]
    message = caught.value.problems[0].message
    assert "'search'" in message and "'alpha'" in message and "external_tools" in message
    assert run.registrations == []
