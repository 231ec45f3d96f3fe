"""``langop_infra.policy._rules``: the policy pack's rules as pure functions over hand-built
resources. The survivors of #37's mutation run are here: a truncated digest counted as
pinned, and ``svc.otherns`` resolved in the agent's own namespace."""

from __future__ import annotations

from typing import Any

import pytest

from langop_infra.policy import _rules as r

DIGEST = "@sha256:" + "ab" * 32
RESTRICTED = {
    "runAsNonRoot": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def container(name: str = "main", image: str = "ghcr.io/a/b:1" + DIGEST, **more: Any) -> dict:
    return {"name": name, "image": image, "securityContext": RESTRICTED, **more}


def deployment(
    name: str,
    namespace: str | None = "apps",
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    dependencies: tuple[str, ...] = (),
) -> r.Resource:
    meta = {"name": name, **({"namespace": namespace} if namespace is not None else {})}
    props = {
        "apiVersion": "apps/v1",
        "metadata": meta,
        "spec": {
            "template": {
                "metadata": {"labels": labels or {"app": name}},
                "spec": {"containers": containers or [container()]},
            }
        },
    }
    return r.Resource(
        "kubernetes:apps/v1:Deployment", f"urn:{namespace}:{name}", name, props, dependencies
    )


def service(name: str, namespace: str | None, selector: dict[str, str]) -> r.Resource:
    meta = {"name": name, **({"namespace": namespace} if namespace is not None else {})}
    props = {"metadata": meta, "spec": {"selector": selector, "ports": [{"port": 80.0}]}}
    return r.Resource("kubernetes:core/v1:Service", f"urn:svc:{namespace}:{name}", name, props)


def policy(name: str, namespace: str, spec: dict[str, Any]) -> r.Resource:
    meta = {"name": name, "namespace": namespace}
    props = {"apiVersion": "networking.k8s.io/v1", "metadata": meta, "spec": spec}
    return r.Resource(
        "kubernetes:networking.k8s.io/v1:NetworkPolicy", f"urn:np:{name}", name, props
    )


def messages(findings: list[r.Finding]) -> list[str]:
    return [f.message for f in findings]


# --- Resource ---------------------------------------------------------------------------------


def test_resource_kind_and_manifest() -> None:
    res = r.Resource("kubernetes:apps/v1:Deployment", "u", "n", {"spec": {"replicas": 2.0}})
    assert res.kind == "Deployment"
    assert res.manifest == {"spec": {"replicas": 2}, "kind": "Deployment"}
    assert isinstance(res.manifest["spec"]["replicas"], int)
    other = r.Resource("random:index:Thing", "u", "n", {"x": 1.5, "l": [1.0, "a", {"y": 3.0}]})
    assert other.kind is None
    assert other.manifest == {"x": 1.5, "l": [1, "a", {"y": 3}], "kind": None}


def test_workloads_sorted_with_default_namespace() -> None:
    found = r.workloads(
        [
            deployment("b", "z"),
            deployment("a", None),
            r.Resource("random:index:Thing", "u", "n", {}),
            deployment("c", "a"),
        ]
    )
    assert [(w.namespace, w.name) for w in found] == [("a", "c"), ("default", "a"), ("z", "b")]
    assert found[0].labels == {"app": "c"}
    assert found[0].ports() == []


def test_workload_ports_are_sorted_and_unique() -> None:
    pods = [
        container("a", ports=[{"containerPort": 9000.0}, {"containerPort": 80}]),
        container("b", ports=[{"containerPort": 80}]),
    ]
    (w,) = r.workloads([deployment("x", containers=pods)])
    assert w.ports() == [80, 9000]
    endpoint = w.endpoint()
    assert (endpoint.namespace, endpoint.labels, endpoint.name) == ("apps", {"app": "x"}, "x")


# --- images -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "image",
    [
        "ghcr.io/a/b:1",
        "ghcr.io/a/b:1@sha256:" + "ab" * 31,  # truncated: 62 hex digits
        "ghcr.io/a/b:1@sha256:" + "ab" * 32 + "a",  # one digit too many
        "ghcr.io/a/b:1@sha256:" + "AB" * 32,  # upper case is no digest
        "ghcr.io/a/b:1@sha256:" + "ab" * 32 + "\n",  # a trailing line break
        "ghcr.io/a/b@sha512:" + "ab" * 32,
        "",
    ],
)
def test_an_image_not_pinned_by_a_full_digest_is_found(image: str) -> None:
    res = deployment("x", containers=[container("main", image)])
    assert messages(r.unpinned_images([res])) == [
        f"apps/x: container main runs {image!r}, which is not pinned by digest; use "
        "<image>@sha256:<digest>"
    ]
    assert r.unpinned_images([res])[0].urn == "urn:apps:x"


def test_a_full_digest_is_pinned() -> None:
    assert r.unpinned_images([deployment("x")]) == []


def test_a_container_without_an_image_is_unpinned() -> None:
    res = deployment("x", containers=[{"name": "main", "securityContext": RESTRICTED}])
    assert len(r.unpinned_images([res])) == 1


# --- restricted pods and unselected pods ------------------------------------------------------


def test_unrestricted_pods_names_the_violation() -> None:
    res = deployment("x", containers=[{"name": "main", "image": "i" + DIGEST}])
    assert messages(r.unrestricted_pods([res])) == [
        "pod of apps/x: Privilege Escalation: main: allowPrivilegeEscalation is None",
        "pod of apps/x: Running as Non-root: main: runAsNonRoot is None",
        "pod of apps/x: Seccomp: main: no seccomp profile here or on the pod",
        "pod of apps/x: Capabilities (restricted): main: does not drop ALL",
    ]
    assert r.unrestricted_pods([deployment("ok")]) == []


def test_unselected_pods() -> None:
    pods = [deployment("a"), deployment("b")]
    selecting_a = policy("pa", "apps", {"podSelector": {"matchLabels": {"app": "a"}}})
    assert messages(r.unselected_pods([*pods, selecting_a])) == [
        "pod of apps/b is selected by no NetworkPolicy"
    ]
    everything = policy("all", "apps", {"podSelector": {}})
    assert r.unselected_pods([*pods, everything]) == []
    other_ns = policy("all", "elsewhere", {"podSelector": {}})
    assert len(r.unselected_pods([*pods, other_ns])) == 2


# --- credentials ------------------------------------------------------------------------------


def test_literal_credential_env_is_found_and_a_secret_ref_is_not() -> None:
    env = [
        {"name": "API_KEY", "value": "abcd"},
        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        {"name": "PASSWORD", "value": ""},
        {"name": "LOG_LEVEL", "value": "debug"},
    ]
    res = deployment("x", containers=[container("main", env=env)])
    assert messages(r.literal_credentials([res])) == [
        "apps/x: container main env API_KEY is a literal credential; use valueFrom.secretKeyRef"
    ]


def config_map(data: dict[str, str], name: str = "cm") -> r.Resource:
    props = {"metadata": {"name": name, "namespace": "apps"}, "data": data}
    return r.Resource("kubernetes:core/v1:ConfigMap", f"urn:cm:{name}", name, props)


def test_literal_credentials_in_config_maps() -> None:
    yaml_text = (
        "mcpServers:\n"
        "- url: http://x\n"
        "  headers:\n"
        "  - {name: Authorization, value: Bearer abcd}\n"
        "  - {name: X-Trace, value: on}\n"
        "  - {name: X-Api-Key, valueFrom: {secretKeyRef: {name: s, key: k}}}\n"
    )
    data = {"API_TOKEN": "abcd", "EMPTY_SECRET": "", "config.yaml": yaml_text, "x.txt": "t"}
    assert messages(r.literal_credentials([config_map(data)])) == [
        "ConfigMap apps/cm: key API_TOKEN holds a literal credential",
        "ConfigMap apps/cm: config.yaml .mcpServers[0].headers[0] (Authorization) is a "
        "credential header with a literal value; send it from a Secret "
        "(valueFrom.secretKeyRef)",
    ]
    other = config_map({"agent.yml": "headers: [{name: Cookie, value: abc}]"}, "b")
    assert messages(r.literal_credentials([other])) == [
        "ConfigMap apps/b: agent.yml .headers[0] (Cookie) is a credential header with a "
        "literal value; send it from a Secret (valueFrom.secretKeyRef)"
    ]


def test_litellm_custom_auth_naming_a_function_is_not_a_credential() -> None:
    """The gateway's config.yaml names its auth hook, ``module.function``; any other value
    there, or a dotted name under another credential-named key, is still judged."""
    hook = "general_settings:\n  custom_auth: langop_gateway_callers.user_api_key_auth\n"
    assert r.literal_credentials([config_map({"config.yaml": hook})]) == []
    for text in (
        "general_settings:\n  custom_auth: sk-live-abcdef0123456789\n",
        "general_settings:\n  custom_auth: module.\n",
        "general_settings:\n  auth_token: langop_gateway_callers.user_api_key_auth\n",
    ):
        [found] = r.literal_credentials([config_map({"config.yaml": text})])
        assert "named like a credential" in found.message, text


def test_config_maps_are_judged_in_urn_order_and_bad_yaml_is_skipped() -> None:
    found = r.literal_credentials(
        [
            config_map({"TOKEN": "v"}, "b"),
            config_map({"a.yaml": "{{: ["}, "c"),
            config_map({"SECRET": "v"}, "a"),
        ]
    )
    assert [f.urn for f in found] == ["urn:cm:a", "urn:cm:b"]


# --- egress -----------------------------------------------------------------------------------


def agent(name: str, namespace: str, env: list[dict[str, Any]]) -> r.Resource:
    labels = {"app.kubernetes.io/component": "agent", "app": name}
    return deployment(name, namespace, labels, [container("agent", env=env)])


def listening(name: str, namespace: str) -> r.Resource:
    labels = {"app": name}
    return deployment(name, namespace, labels, [container(ports=[{"containerPort": 8080}])])


def test_svc_dot_namespace_resolves_in_that_namespace() -> None:
    """``memory.tools`` from an agent in ``agents`` is the Service of namespace ``tools``:
    the agent declares it, so reaching it is no finding; a like-named Service in the agent's
    own namespace is not the one declared."""
    resources = [
        agent("bot", "agents", [{"name": "MCP_SERVERS", "value": "http://memory.tools:8080/mcp"}]),
        listening("memory", "tools"),
        service("memory", "tools", {"app": "memory"}),
        listening("memory", "agents"),
        service("memory", "agents", {"app": "memory"}),
    ]
    assert messages(r.agent_egress(resources, require_restricted=False)) == [
        "agent agents/bot may reach agents/memory on port 8080, which it does not declare"
    ]


@pytest.mark.parametrize(
    "host",
    ["memory.tools", "memory.tools.svc", "memory.tools.svc.cluster.local", "MEMORY.TOOLS"],
)
def test_every_spelling_of_a_service_names_its_namespace(host: str) -> None:
    key = r._service_key(r._host(f"http://{host}:8080/mcp"), "agents")
    assert key == ("tools", "memory")


def test_a_bare_service_name_is_in_the_agents_namespace() -> None:
    assert r._service_key("memory", "agents") == ("agents", "memory")


def test_host_of_bad_urls_is_empty() -> None:
    assert r._host(" http://Mem:1/x ") == "mem"
    assert r._host("http://[::1") == ""
    assert r._host("not a url") == ""


def test_declared_hosts_reads_every_endpoint_env() -> None:
    env = [
        {"name": "MCP_SERVERS", "value": "http://a:1/mcp, http://b:2/mcp,"},
        {"name": "MODEL_ENDPOINT", "value": "http://c:3"},
        {"name": "MODEL_ENDPOINTS", "value": "http://d:4,http://e:5"},
        {"name": "AGENT_MCP_SERVERS", "value": '[{"url": "http://f:6"}, {"x": 1}, "g"]'},
        {"name": "OTHER", "value": "http://z:9"},
        {"value": "nameless"},
    ]
    (w,) = r.workloads([agent("bot", "agents", env)])
    assert r._declared_hosts(w) == {"a", "b", "c", "d", "e", "f"}
    bad = [{"name": "AGENT_MCP_SERVERS", "value": "[not json"}]
    (w,) = r.workloads([agent("bot", "agents", bad)])
    assert r._declared_hosts(w) == set()


def test_agent_egress_reports_undeclared_reach_and_open_egress() -> None:
    resources = [
        agent("bot", "agents", []),
        listening("db", "data"),
        deployment("quiet", "data"),  # listens on nothing
    ]
    assert messages(r.agent_egress(resources, require_restricted=True)) == [
        "agent agents/bot is selected by no NetworkPolicy that limits its egress; set egress: "
        "restricted",
        "agent agents/bot may reach data/db on port 8080, which it does not declare",
    ]
    assert messages(r.agent_egress(resources, require_restricted=False)) == [
        "agent agents/bot may reach data/db on port 8080, which it does not declare"
    ]


def test_agent_egress_respects_a_restricting_policy() -> None:
    restrict = policy(
        "bot-egress",
        "agents",
        {"podSelector": {"matchLabels": {"app": "bot"}}, "policyTypes": ["Egress"], "egress": []},
    )
    resources = [agent("bot", "agents", []), listening("db", "data"), restrict]
    assert r.agent_egress(resources, require_restricted=True) == []


def test_agent_egress_only_judges_agents_and_shares_verdicts_of_alike_agents() -> None:
    resources = [
        agent("a1", "agents", []),
        agent("a2", "agents", []),
        listening("db", "data"),
        listening("db2", "data"),
    ]
    found = messages(r.agent_egress(resources, require_restricted=False))
    assert found == [
        "agent agents/a1 may reach data/db on port 8080, which it does not declare",
        "agent agents/a1 may reach data/db2 on port 8080, which it does not declare",
        "agent agents/a2 may reach data/db on port 8080, which it does not declare",
        "agent agents/a2 may reach data/db2 on port 8080, which it does not declare",
    ]
    custom = r.agent_egress(resources, require_restricted=False, agent_labels={"app": "db"})
    assert messages(custom) == [
        "agent data/db may reach data/db2 on port 8080, which it does not declare"
    ]


def test_service_backends_match_selector_within_the_namespace() -> None:
    resources = [
        deployment("a", "n1", {"app": "x"}),
        deployment("b", "n2", {"app": "x"}),
        service("s", "n1", {"app": "x"}),
        service("empty", "n1", {}),
        service("d", None, {"app": "x"}),
    ]
    found = r._service_backends(resources, r.workloads(resources))
    assert found == {("n1", "s"): {("n1", "a")}, ("n1", "empty"): set(), ("default", "d"): set()}


# --- schema sync ------------------------------------------------------------------------------


def tool(name: str, namespace: str = "tools") -> r.Resource:
    return deployment(name, namespace, {"app.kubernetes.io/component": "tool", "app": name})


def sync(service_name: str, namespace: str = "tools", required: Any = False) -> r.Resource:
    props = {"endpoint": "http://x", "service": service_name, "namespace": namespace}
    props["required"] = required
    return r.Resource(r.SYNC_TYPE, f"urn:sync:{service_name}", service_name, props)


def test_schema_sync_finds_a_tool_without_sync() -> None:
    found = r.schema_sync([tool("memory"), tool("other"), sync("other")])
    assert messages(found) == ["tool tools/memory has no schema sync"]
    assert found[0].urn == "urn:tools:memory"
    wrong_ns = r.schema_sync([tool("memory"), sync("memory", namespace="else")])
    assert messages(wrong_ns) == ["tool tools/memory has no schema sync"]


def test_a_resource_of_the_sync_type_without_endpoint_or_service_is_no_sync() -> None:
    bare = r.Resource(r.SYNC_TYPE, "u", "n", {"service": "memory", "namespace": "tools"})
    assert len(r.schema_sync([tool("memory"), bare])) == 1
    other = r.Resource(
        "x:y:Z", "u", "n", {"endpoint": "e", "service": "memory", "namespace": "tools"}
    )
    assert len(r.schema_sync([tool("memory"), other])) == 1


def test_an_a2a_peers_card_sync_is_no_schema_sync_of_the_tool() -> None:
    # AgentCardSync shares the dynamic resource type; its inputs carry card_path.
    card = sync("memory")
    card = r.Resource(card.type, "urn:card:memory", "memory", {**card.props, "card_path": "/c"})
    found = r.schema_sync([tool("memory"), card])
    assert messages(found) == ["tool tools/memory has no schema sync"]
    assert found[0].urn == "urn:tools:memory"
    assert r.schema_sync([tool("memory"), card, sync("memory")]) == []


def test_a_tool_an_agent_waits_for_needs_a_required_sync() -> None:
    waiting = deployment(
        "bot",
        "agents",
        {"app.kubernetes.io/component": "agent"},
        dependencies=("urn:tools:memory",),
    )
    found = r.schema_sync([tool("memory"), sync("memory"), waiting])
    assert messages(found) == [
        "an agent waits for tool tools/memory, but its schema sync is not required; set "
        "schemaSync.required: true"
    ]
    assert found[0].urn == "urn:sync:memory"
    for required in (True, "true", "True"):
        assert r.schema_sync([tool("memory"), sync("memory", required=required), waiting]) == []
    not_agent = deployment("x", "agents", {"app": "x"}, dependencies=("urn:tools:memory",))
    assert r.schema_sync([tool("memory"), sync("memory"), not_agent]) == []


def test_schema_sync_with_other_tool_labels() -> None:
    labelled = deployment("m", "tools", {"kind": "mcp"})
    assert len(r.schema_sync([labelled], tool_labels={"kind": "mcp"})) == 1
    assert r.schema_sync([labelled]) == []


def test_truthy() -> None:
    assert r._truthy(True) and r._truthy("TRUE") and r._truthy("true")
    assert not r._truthy(False) and not r._truthy("yes") and not r._truthy(None)
    assert not r._truthy(1)


# --- what the mutation run showed untested ----------------------------------------------------


def namespace(name: str, labels: dict[str, str] | None = None) -> r.Resource:
    props: dict[str, Any] = {"metadata": {"name": name, **({"labels": labels} if labels else {})}}
    return r.Resource("kubernetes:core/v1:Namespace", f"urn:ns:{name}", name, props)


def only_from_namespaces(labels: dict[str, str]) -> r.Resource:
    """db's ingress: port 8080 from namespaces with ``labels`` only."""
    spec = {
        "podSelector": {"matchLabels": {"app": "db"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": labels}}]}],
    }
    return policy("db-in", "data", spec)


def test_namespace_labels_decide_a_namespace_selector() -> None:
    resources = [
        agent("bot", "agents", []),
        listening("db", "data"),
        only_from_namespaces({"team": "bots"}),
    ]
    labelled = [*resources, namespace("agents", {"team": "bots"}), namespace("data")]
    assert r.agent_egress(labelled, require_restricted=False) == [
        r.Finding(
            "urn:agents:bot",
            "agent agents/bot may reach data/db on port 8080, which it does not declare",
        )
    ]
    unlabelled = [*resources, namespace("agents"), namespace("data")]
    assert r.agent_egress(unlabelled, require_restricted=False) == []


def test_findings_carry_the_urn_of_the_resource_at_fault() -> None:
    res = deployment("x", containers=[{"name": "main", "image": "i" + DIGEST}])
    assert {f.urn for f in r.unrestricted_pods([res])} == {"urn:apps:x"}
    assert [f.urn for f in r.unselected_pods([res])] == ["urn:apps:x"]
    env = [{"name": "API_KEY", "value": "abcd"}]
    assert [
        f.urn for f in r.literal_credentials([deployment("y", containers=[container(env=env)])])
    ] == ["urn:apps:y"]
    assert [
        f.urn
        for f in r.literal_credentials(
            [config_map({"config.yaml": "headers: [{name: Authorization, value: x}]"})]
        )
    ] == ["urn:cm:cm"]
    assert [
        f.urn for f in r.agent_egress([agent("bot", "agents", [])], require_restricted=True)
    ] == ["urn:agents:bot"]


def test_a_config_map_without_a_namespace_is_named_so() -> None:
    nameless = r.Resource(
        "kubernetes:core/v1:ConfigMap",
        "u",
        "cm",
        {"metadata": {"name": "cm"}, "data": {"TOKEN": "v"}},
    )
    assert messages(r.literal_credentials([nameless])) == [
        "ConfigMap /cm: key TOKEN holds a literal credential"
    ]


def test_every_credential_header_of_a_config_document_is_found() -> None:
    document = "a: [{name: Authorization, value: x}]\nb: {headers: [{name: Cookie, value: y}]}\n"
    assert sorted(messages(r.literal_credentials([config_map({"c.yaml": document})]))) == [
        "ConfigMap apps/cm: c.yaml .a[0] (Authorization) is a credential header with a literal "
        "value; send it from a Secret (valueFrom.secretKeyRef)",
        "ConfigMap apps/cm: c.yaml .b.headers[0] (Cookie) is a credential header with a literal "
        "value; send it from a Secret (valueFrom.secretKeyRef)",
    ]


def test_a_service_without_a_name_is_keyed_by_an_empty_name() -> None:
    nameless = r.Resource(
        "kubernetes:core/v1:Service",
        "u",
        "s",
        {"metadata": {"namespace": "n1"}, "spec": {"selector": {"app": "a"}}},
    )
    resources = [deployment("a", "n1", {"app": "a"}), nameless]
    assert r._service_backends(resources, r.workloads(resources)) == {("n1", ""): {("n1", "a")}}


def test_a_declared_host_that_is_no_service_is_ignored() -> None:
    env = [{"name": "MCP_SERVERS", "value": "http://nowhere:1/mcp,http://db/mcp"}]
    resources = [
        agent("bot", "data", env),
        listening("db", "data"),
        service("db", "data", {"app": "db"}),
    ]
    assert r.agent_egress(resources, require_restricted=False) == []


def test_a_bare_service_name_is_looked_up_in_the_agents_namespace() -> None:
    env = [{"name": "MODEL_ENDPOINT", "value": "http://db:8080"}]
    resources = [
        agent("bot", "agents", env),
        listening("db", "agents"),
        service("db", "agents", {"app": "db"}),
    ]
    assert r.agent_egress(resources, require_restricted=False) == []


def test_open_agents_share_a_verdict_only_when_the_peer_labels_agree() -> None:
    """db admits pods labelled app=a1 only: a1 may reach it, a2 (same namespace, open egress
    too, another app label) may not, though a1's verdict was reached first."""
    spec = {
        "podSelector": {"matchLabels": {"app": "db"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a1"}}}]}],
    }
    resources = [
        agent("a1", "data", []),
        agent("a2", "data", []),
        listening("db", "data"),
        policy("db-in", "data", spec),
    ]
    assert messages(r.agent_egress(resources, require_restricted=False)) == [
        "agent data/a1 may reach data/db on port 8080, which it does not declare"
    ]


def test_isolated_agents_never_share_a_verdict() -> None:
    """a1's egress is open to every pod, a2's to none: a2 reaches nothing although a1 does."""
    open_all = {
        "podSelector": {"matchLabels": {"app": "a1"}},
        "policyTypes": ["Egress"],
        "egress": [{}],
    }
    shut = {"podSelector": {"matchLabels": {"app": "a2"}}, "policyTypes": ["Egress"], "egress": []}
    resources = [
        agent("a1", "agents", []),
        agent("a2", "agents", []),
        listening("db", "data"),
        policy("a1-out", "agents", open_all),
        policy("a2-out", "agents", shut),
    ]
    assert messages(r.agent_egress(resources, require_restricted=True)) == [
        "agent agents/a1 may reach data/db on port 8080, which it does not declare"
    ]


def test_credentials_inside_config_map_text_and_binary_data_are_found() -> None:
    cm = config_map(
        {
            "app.env": "DB_PASSWORD=hunter2hunter2\nLOG=debug\n",
            "settings.json": '{"token": "abcd1234efgh5678"}',
        }
    )
    assert messages(r.literal_credentials([cm])) == [
        "ConfigMap apps/cm: app.env line 1 (DB_PASSWORD) holds a literal credential (named like "
        "a credential); send it from a Secret (valueFrom.secretKeyRef)",
        "ConfigMap apps/cm: settings.json.token holds a literal credential (named like a "
        "credential); send it from a Secret (valueFrom.secretKeyRef)",
    ]
    import base64

    props = {
        "metadata": {"name": "b", "namespace": "apps"},
        "binaryData": {"creds.yaml": base64.b64encode(b"password: hunter2hunter2").decode()},
    }
    binary = r.Resource("kubernetes:core/v1:ConfigMap", "urn:b", "b", props)
    assert r.literal_credentials([binary]) == [
        r.Finding(
            "urn:b",
            "ConfigMap apps/b: binaryData.creds.yaml.password holds a literal credential (named "
            "like a credential); send it from a Secret (valueFrom.secretKeyRef)",
        )
    ]


def test_an_env_value_shaped_like_a_credential_is_found_whatever_its_name() -> None:
    env = [
        {"name": "AGENT_CONFIG", "value": '{"apiKey": "sk-live-1234567890abcdef"}'},
        {"name": "LIST", "value": "[1, 2]"},
        {"name": "PLAIN", "value": "hello"},
    ]
    found = r.literal_credentials([deployment("x", containers=[container(env=env)])])
    assert found == [
        r.Finding(
            "urn:apps:x",
            "apps/x: container main env AGENT_CONFIG is a literal credential; use "
            "valueFrom.secretKeyRef",
        )
    ]


def test_a_credential_inside_a_json_env_value_is_found_where_it_sits() -> None:
    # The value as a whole passes (no credential name, nothing detect-secrets knows); the
    # JSON inside it does not. Leading blanks are JSON too; both a list and an object.
    env = [
        {"name": "SERVERS", "value": '  [{"name": "Authorization", "value": "Bearer abc"}]'},
        {"name": "ROUTES", "value": '{"headers": {"X-Api-Key": "k1"}}'},
        {"name": "NOTE", "value": "  not [json"},
    ]
    found = r.literal_credentials([deployment("x", containers=[container(env=env)])])
    assert found == [
        r.Finding(
            "urn:apps:x",
            "apps/x: container main env SERVERS: [0] (Authorization) holds a literal credential "
            "(named like a credential); send it from a Secret (valueFrom.secretKeyRef)",
        ),
        r.Finding(
            "urn:apps:x",
            "apps/x: container main env ROUTES: .headers.X-Api-Key holds a literal credential "
            "(named like a credential); send it from a Secret (valueFrom.secretKeyRef)",
        ),
    ]
