"""LanguageAgent under the Pulumi mock engine: the issue-3 scenario end to end."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
import yaml

from langop_infra.components.agent import LanguageAgent
from langop_infra.components.tool import LanguageTool
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, Registration, run_program
from langop_infra.testing.secrets import secret_leaves

HEADER_CANARY = "hdr-canary-51c2e0"
ENV_CANARY = "env-canary-9d41aa"
CANARIES = (HEADER_CANARY, ENV_CANARY)
AGENT_TYPE = "langop-infra:index:LanguageAgent"
CHECKSUM = "langop.io/config-checksum"

EXPECTED_MCP_SERVERS = (
    "http://search.ai.svc.cluster.local:8080,"
    "http://fetch.ai.svc.cluster.local:9000,"
    "http://localhost:8090"
)
EXPECTED_CONFIG = {
    "tools": {
        # required: the built-in runtime's /readyz waits for it
        "search": {
            "endpoint": "http://search.ai.svc.cluster.local:8080",
            "protocol": "mcp",
            "required": True,
        },
        "fetch": {"endpoint": "http://fetch.ai.svc.cluster.local:9000", "protocol": "mcp"},
        "files": {"endpoint": "http://localhost:8090", "protocol": "mcp"},
    },
    "mcpServers": [
        {
            "name": "github",
            "url": "https://mcp.github.example.com/mcp",
            "headers": [
                {"name": "X-Org", "value": "acme"},
                {"name": "Authorization", "valueFromEnv": "ARK_MCP_GITHUB_HEADER_AUTHORIZATION"},
                {"name": "X-Api-Key", "valueFromEnv": "ARK_MCP_GITHUB_HEADER_X_API_KEY"},
            ],
        }
    ],
    "webhookTools": [
        {
            "name": "create-ticket",
            "description": "Open a support ticket",
            "url": "https://hooks.example.com/tickets",
            "method": "POST",
            # A JSON string, as ark's runtime reads it (given as an object: compact JSON).
            "inputSchema": '{"type":"object","properties":{"title":{"type":"string"}}}',
            "timeoutSeconds": 30,
            "authentication": {
                "type": "bearer",
                "headerName": "Authorization",
                "valueFromEnv": "AGENT_WEBHOOK_CREATE_TICKET_AUTH",
            },
        }
    ],
    "agent": {"name": "helper", "namespace": "ai"},
}


def make_tools(extra: tuple[dict[str, Any], ...] = ()) -> dict[tuple[str, str], LanguageTool]:
    """The scenario's tools. ``fetch`` runs 0 replicas: it never becomes ready."""
    specs = [
        {"name": "search", "image": "ghcr.io/acme/search:1"},
        {"name": "fetch", "image": "ghcr.io/acme/fetch:1", "port": 9000, "replicas": 0},
        {
            "name": "files",
            "image": "ghcr.io/acme/files:1",
            "deploymentMode": "sidecar",
            "port": 8090,
        },
        *extra,
    ]
    tools = [LanguageTool(s["name"], {"namespace": "ai", **s}) for s in specs]
    return {(t.target.namespace, t.spec.name): t for t in tools}


def agent_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "namespace": "ai",
        "image": "ghcr.io/acme/agent:2.0.0",
        "tools": [
            {"name": "search", "required": True},
            {"name": "fetch"},
            {"name": "files"},
            {"name": "ghost", "enabled": False},
        ],
        "secret_env": {"OPENAI_API_KEY": pulumi.Output.secret(ENV_CANARY)},
        "mcp_servers": [
            {
                "name": "github",
                "url": "https://mcp.github.example.com/mcp",
                "headers": [
                    {"name": "X-Org", "value": "acme"},
                    {
                        "name": "Authorization",
                        "valueFrom": {"secretKeyRef": {"name": "github-mcp", "key": "token"}},
                    },
                    {"name": "X-Api-Key", "secret": pulumi.Output.secret(HEADER_CANARY)},
                ],
            }
        ],
        "webhook_tools": [
            {
                "name": "create-ticket",
                "description": "Open a support ticket",
                "url": "https://hooks.example.com/tickets",
                "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}},
                "authentication": {
                    "type": "bearer",
                    "secretRef": {"name": "ticket-api", "key": "token"},
                },
            }
        ],
    }
    fields.update(overrides)
    return fields


def scenario(extra_tools: tuple[dict[str, Any], ...] = (), **overrides: Any) -> Callable[[], None]:
    def program() -> None:
        make_tools(extra_tools)
        fields = agent_fields(**overrides)
        agent = LanguageAgent("helper", **fields)
        pulumi.export("config_yaml", agent.config_yaml)
        pulumi.export("mcp_servers", agent.mcp_servers)

    return program


_SCENARIO_CACHE: dict[str, Any] = {}


@pytest.fixture
def rendered(render) -> Any:
    """The scenario, rendered and validated once for the module (its objects are read-only)."""
    if "rendered" not in _SCENARIO_CACHE:
        _SCENARIO_CACHE["rendered"] = render(scenario())
    return _SCENARIO_CACHE["rendered"]


@pytest.fixture
def scenario_run(rendered) -> ProgramRun:
    return rendered.run


def agent_deployment(rendered: Any) -> dict[str, Any]:
    return rendered.find("Deployment", "helper", "ai")


def containers(rendered: Any) -> dict[str, dict[str, Any]]:
    """Every container of the agent's pod, native sidecars (init containers) included."""
    pod = agent_deployment(rendered)["spec"]["template"]["spec"]
    return {c["name"]: c for c in [*pod["containers"], *pod.get("initContainers", [])]}


def agent_env(rendered: Any) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in containers(rendered)["helper"]["env"]}


def registration(run: ProgramRun, type_suffix: str, name: str) -> Registration:
    found = [r for r in run.registrations if r.type.endswith(type_suffix) and r.name == name]
    assert len(found) == 1, f"{type_suffix} {name}: {[r.name for r in run.registrations]}"
    return found[0]


# --- the contract in the pod -----------------------------------------------------------------


def test_agent_objects(rendered) -> None:
    agent_objects = [k for k in rendered.kinds() if k[2].startswith("helper")]
    assert agent_objects == [
        ("ConfigMap", "ai", "helper-config"),
        ("Deployment", "ai", "helper"),
        ("NetworkPolicy", "ai", "helper-ingress"),
        ("Secret", "ai", "helper-env"),
    ]
    # The pod carries a sidecar tool, so it admits no ingress at all.
    assert rendered.find("NetworkPolicy", "helper-ingress")["spec"] == {
        "podSelector": {"matchLabels": {"langop.io/agent": "helper"}},
        "policyTypes": ["Ingress"],
    }
    # The sidecar tool has no workload of its own; the disabled one is never resolved.
    assert {name for _, _, name in rendered.kinds()} == {
        "helper",
        "helper-config",
        "helper-env",
        "helper-ingress",
        "search",
        "search-ingress",
        "fetch",
        "fetch-ingress",
    }


def test_mcp_servers_env(rendered) -> None:
    assert agent_env(rendered)["MCP_SERVERS"] == {
        "name": "MCP_SERVERS",
        "value": EXPECTED_MCP_SERVERS,
    }


def test_config_yaml_in_the_config_map(rendered) -> None:
    config_map = rendered.find("ConfigMap", "helper-config", "ai")
    assert set(config_map["data"]) == {"config.yaml"}
    assert yaml.safe_load(config_map["data"]["config.yaml"]) == EXPECTED_CONFIG


def test_config_map_is_mounted_at_etc_agent(rendered) -> None:
    pod = agent_deployment(rendered)["spec"]["template"]["spec"]
    assert {
        "name": "config",
        "configMap": {
            "name": "helper-config",
            "items": [{"key": "config.yaml", "path": "config.yaml"}],
        },
    } in pod["volumes"]
    mounts = containers(rendered)["helper"]["volumeMounts"]
    assert {"name": "config", "mountPath": "/etc/agent", "readOnly": True} in mounts
    assert agent_env(rendered)["AGENT_CONFIG_PATH"]["value"] == "/etc/agent/config.yaml"


def test_agent_mcp_servers_env(rendered) -> None:
    value = agent_env(rendered)["AGENT_MCP_SERVERS"]["value"]
    assert json.loads(value) == [{"name": "github", "url": "https://mcp.github.example.com/mcp"}]


def test_agent_webhook_tools_env(rendered) -> None:
    value = agent_env(rendered)["AGENT_WEBHOOK_TOOLS"]["value"]
    assert json.loads(value) == EXPECTED_CONFIG["webhookTools"]


def test_header_env_vars(rendered) -> None:
    env = agent_env(rendered)
    assert env["ARK_MCP_GITHUB_HEADER_X_ORG"] == {
        "name": "ARK_MCP_GITHUB_HEADER_X_ORG",
        "value": "acme",
    }
    assert env["ARK_MCP_GITHUB_HEADER_AUTHORIZATION"] == {
        "name": "ARK_MCP_GITHUB_HEADER_AUTHORIZATION",
        "valueFrom": {"secretKeyRef": {"name": "github-mcp", "key": "token"}},
    }
    assert env["ARK_MCP_GITHUB_HEADER_X_API_KEY"] == {
        "name": "ARK_MCP_GITHUB_HEADER_X_API_KEY",
        "valueFrom": {
            "secretKeyRef": {"name": "helper-env", "key": "ARK_MCP_GITHUB_HEADER_X_API_KEY"}
        },
    }


def test_pulumi_secret_header_goes_into_the_agent_secret_as_a_secret(scenario_run) -> None:
    secret = registration(scenario_run, ":Secret", "ai/helper-env")
    assert sorted(secret_leaves(secret.inputs)) == [
        (".stringData.ARK_MCP_GITHUB_HEADER_X_API_KEY", HEADER_CANARY),
        (".stringData.OPENAI_API_KEY", ENV_CANARY),
    ]


def test_secret_env_uses_secret_key_ref(rendered) -> None:
    assert agent_env(rendered)["OPENAI_API_KEY"] == {
        "name": "OPENAI_API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "helper-env", "key": "OPENAI_API_KEY"}},
    }


def test_webhook_bearer_auth_via_secret_key_ref(rendered) -> None:
    assert agent_env(rendered)["AGENT_WEBHOOK_CREATE_TICKET_AUTH"] == {
        "name": "AGENT_WEBHOOK_CREATE_TICKET_AUTH",
        "valueFrom": {"secretKeyRef": {"name": "ticket-api", "key": "token"}},
    }


def test_sidecar_joins_the_pod_with_a_shared_workspace(rendered) -> None:
    pod = agent_deployment(rendered)["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["helper"]
    assert [c["name"] for c in pod["initContainers"]] == ["files"]
    sidecar = containers(rendered)["files"]
    assert sidecar["image"] == "ghcr.io/acme/files:1"
    assert sidecar["ports"] == [{"name": "mcp", "containerPort": 8090, "protocol": "TCP"}]
    assert sidecar["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8090}
    assert {"name": "workspace", "emptyDir": {}} in pod["volumes"]
    workspace = {"name": "workspace", "mountPath": "/workspace"}
    assert workspace in containers(rendered)["helper"]["volumeMounts"]
    assert workspace in sidecar["volumeMounts"]


def test_no_workspace_without_sidecars(render) -> None:
    rendered = render(scenario(tools=[{"name": "search"}]))
    pod = rendered.find("Deployment", "helper")["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["containers"]] == ["helper"]
    assert "workspace" not in [v["name"] for v in pod["volumes"]]


def test_no_secret_value_anywhere_in_plain_text(scenario_run, rendered) -> None:
    for manifest in rendered.manifests:
        text = yaml.safe_dump(manifest)
        for canary in CANARIES:
            assert canary not in text, manifest["metadata"]["name"]
    # Raw engine inputs of everything but the Secret: not even a secret-wrapped copy.
    for reg in scenario_run.registrations:
        if reg.type != "kubernetes:core/v1:Secret":
            for canary in CANARIES:
                assert canary not in repr(reg.inputs), reg.name
    literals = [e.get("value", "") for c in containers(rendered).values() for e in c["env"]]
    assert not [v for v in literals if any(c in v for c in CANARIES)]
    config_text = rendered.find("ConfigMap", "helper-config")["data"]["config.yaml"]
    assert not any(c in config_text for c in CANARIES)
    assert not any(c in scenario_run.outputs["config_yaml"] for c in CANARIES)


def test_outputs(scenario_run, rendered) -> None:
    assert scenario_run.outputs["mcp_servers"] == EXPECTED_MCP_SERVERS
    config_text = rendered.find("ConfigMap", "helper-config")["data"]["config.yaml"]
    assert scenario_run.outputs["config_yaml"] == config_text
    assert yaml.safe_load(scenario_run.outputs["config_yaml"]) == EXPECTED_CONFIG


def test_component_type_and_parents(scenario_run) -> None:
    component = registration(scenario_run, AGENT_TYPE, "helper")
    children = [r for r in scenario_run.registrations if r.parent == component.urn]
    assert sorted(r.name for r in children) == [
        "ai/helper",
        "ai/helper-config",
        "ai/helper-env",
        "ai/helper-ingress",
        "ai/helper-rollout-key",  # its Secret's data rolls the pods (an HMAC under this key)
        "ai/helper/files-schema",
    ]


def test_a_sidecar_tool_is_synced_through_the_pods_of_each_agent_carrying_it(
    scenario_run,
) -> None:
    """The sidecar ``files`` listens on localhost in the agent's pod: its sync goes through
    the API server's pod proxy to a pod selected by the agent's labels, after the agent."""
    component = registration(scenario_run, AGENT_TYPE, "helper")
    [sync] = [r for r in scenario_run.registrations if r.name == "ai/helper/files-schema"]
    deployment = registration(scenario_run, "kubernetes:apps/v1:Deployment", "ai/helper")
    assert sync.parent == component.urn
    assert deployment.urn in sync.dependencies
    assert sync.inputs["deployment_mode"] == "sidecar"
    assert sync.inputs["pod_selector"] == {"langop.io/agent": "helper"}
    assert sync.inputs["endpoint"] == "http://localhost:8090"
    assert (sync.inputs["namespace"], sync.inputs["service"], sync.inputs["port"]) == (
        "ai",
        "files",
        8090,
    )


def test_agent_labels(rendered) -> None:
    expected = {
        "app.kubernetes.io/name": "agent",  # the image's name: ghcr.io/acme/agent:2.0.0
        "app.kubernetes.io/instance": "helper",
        "app.kubernetes.io/version": "2.0.0",
        "app.kubernetes.io/component": "agent",
        "app.kubernetes.io/part-of": "ai",
        "app.kubernetes.io/managed-by": "langop-infra",
        "langop.io/agent": "helper",
    }
    for name in ("helper", "helper-config", "helper-env"):
        kind = {"helper": "Deployment", "helper-config": "ConfigMap", "helper-env": "Secret"}[name]
        assert rendered.find(kind, name, "ai")["metadata"]["labels"] == expected


# --- rollouts and determinism ----------------------------------------------------------------


def pod_checksum(rendered: Any) -> str:
    annotations = agent_deployment(rendered)["spec"]["template"]["metadata"]["annotations"]
    return annotations[CHECKSUM]


def test_config_checksum_follows_config_changes(render, rendered) -> None:
    base = pod_checksum(rendered)
    assert len(base) == 64
    extra = {"name": "notes", "image": "ghcr.io/acme/notes:1"}
    with_extra_tool = render(
        scenario(
            extra_tools=(extra,),
            tools=[*agent_fields()["tools"], {"name": "notes"}],
        )
    )
    assert pod_checksum(with_extra_tool) != base
    changed_header = agent_fields()["mcp_servers"]
    changed_header[0]["headers"][0] = {"name": "X-Org", "value": "other-org"}
    assert pod_checksum(render(scenario(mcp_servers=changed_header))) != base


def test_config_checksum_ignores_unrelated_changes(render, rendered) -> None:
    base = pod_checksum(rendered)
    other = render(scenario(replicas=3, env={"LOG_LEVEL": "debug"}))
    assert agent_deployment(other)["spec"]["replicas"] == 3
    assert pod_checksum(other) == base


def by_identity(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Manifests in a stable order: the engine's registration order is not (async SDK)."""
    return sorted(
        manifests,
        key=lambda m: (m["kind"], m["metadata"].get("namespace", ""), m["metadata"]["name"]),
    )


def test_two_renders_are_identical(render, rendered) -> None:
    again = render(scenario())
    first = yaml.safe_dump(by_identity(rendered.manifests), sort_keys=True)
    assert yaml.safe_dump(by_identity(again.manifests), sort_keys=True) == first
    assert "helper-config" in first


# --- references ------------------------------------------------------------------------------


def urns_of(run: ProgramRun, *names: str) -> set[str]:
    return {
        r.urn for r in run.kubernetes() if r.name in names and r.inputs["kind"] != "NetworkPolicy"
    }


def test_required_reference_waits_for_the_tool(scenario_run) -> None:
    deployment = registration(scenario_run, "apps/v1:Deployment", "ai/helper")
    search = urns_of(scenario_run, "ai/search")
    assert len(search) == 2  # its Deployment and Service
    assert search <= set(deployment.dependencies)
    # ... and then for its schema to be synced.
    schema = registration(scenario_run, "dynamic:Resource", "ai/search-schema")
    assert schema.urn in deployment.dependencies
    # fetch is optional: the agent never waits for it.
    assert not urns_of(scenario_run, "ai/fetch") & set(deployment.dependencies)


def test_optional_references_add_no_tool_dependency() -> None:
    run = run_program(scenario(tools=[{"name": "search"}, {"name": "fetch"}, {"name": "files"}]))
    deployment = registration(run, "apps/v1:Deployment", "ai/helper")
    tool_urns = {
        r.urn for r in run.kubernetes() if r.inputs["metadata"]["name"] in ("search", "fetch")
    }
    assert len(tool_urns) == 4
    assert not tool_urns & set(deployment.dependencies)


def test_reference_to_a_tool_object_works_like_one_by_name(render) -> None:
    def by_object() -> None:
        index = make_tools()
        tools = [index[("ai", "search")], index[("ai", "fetch")], index[("ai", "files")]]
        LanguageAgent("helper", **agent_fields(tools=[*tools, {"name": "ghost", "enabled": False}]))

    def by_name() -> None:
        make_tools()
        refs = [{"name": "search"}, {"name": "fetch"}, {"name": "files"}]
        LanguageAgent(
            "helper",
            **agent_fields(tools=[*refs, {"name": "ghost", "enabled": False}]),
        )

    objects, names = render(by_object), render(by_name)
    assert by_identity(objects.manifests) == by_identity(names.manifests)
    assert agent_env(objects)["MCP_SERVERS"]["value"] == EXPECTED_MCP_SERVERS


def test_unresolvable_reference_raises_before_the_agent_registers() -> None:
    run = ProgramRun()

    def program() -> None:
        make_tools()
        LanguageAgent(
            "helper",
            **agent_fields(tools=[{"name": "search"}, {"name": "nowhere"}]),
        )

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    problems = caught.value.problems
    assert [p.path for p in problems] == ["tools[1].name"]
    assert "no LanguageTool 'nowhere' in namespace 'ai'" in problems[0].message
    assert "set enabled: false" in problems[0].message
    assert run.registrations, "the tools were registered before the agent"
    assert not [r for r in run.registrations if r.type == AGENT_TYPE or "helper" in r.name]


def test_sidecar_port_clash_raises_with_the_path() -> None:
    run = ProgramRun()
    shell = {
        "name": "shell",
        "image": "ghcr.io/acme/shell:1",
        "deploymentMode": "sidecar",
        "port": 8090,
    }

    def program() -> None:
        make_tools((shell,))
        LanguageAgent(
            "helper",
            **agent_fields(tools=[{"name": "files"}, {"name": "search"}, {"name": "shell"}]),
        )

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (
            "tools[2]",
            "sidecar 'shell' uses port 8090, as does sidecar 'files' in the same pod; "
            "change one port",
        )
    ]
    assert not [r for r in run.registrations if r.type == AGENT_TYPE]


def test_bad_agent_spec_raises_before_anything_registers() -> None:
    run = ProgramRun()

    def program() -> None:
        LanguageAgent(
            "helper",
            image="",
            mcp_servers=[{"name": "m", "url": "ftp://x"}],
        )

    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    # Paths follow the spelling the caller used (Python keyword arguments: snake_case).
    assert {p.path for p in caught.value.problems} == {"image", "mcp_servers[0].url"}
    assert run.registrations == []


# --- network policies ------------------------------------------------------------------------


def test_cross_namespace_reference_opens_the_tool_for_this_agent(render) -> None:
    def program() -> None:
        remote = LanguageTool(
            "remote", image="ghcr.io/acme/remote:1", namespace="shared", port=7000
        )
        LanguageAgent("helper", namespace="ai", image="ghcr.io/acme/agent:2.0.0", tools=[remote])

    rendered = render(program)
    policy = rendered.find("NetworkPolicy", "remote.from.ai.helper", "shared")
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"langop.io/tool": "remote"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [
                    {
                        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ai"}},
                        "podSelector": {"matchLabels": {"langop.io/agent": "helper"}},
                    }
                ],
                "ports": [{"protocol": "TCP", "port": 7000}],
            }
        ],
    }
    deployment = rendered.find("Deployment", "helper", "ai")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert not [k for k in labels if k.startswith("access.langop.io/")]
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MCP_SERVERS"]["value"] == "http://remote.shared.svc.cluster.local:7000"


def test_same_namespace_references_bring_no_policy_of_their_own(rendered) -> None:
    # helper-ingress is there for the sidecar, not for the references.
    assert sorted(name for kind, _, name in rendered.kinds() if kind == "NetworkPolicy") == [
        "fetch-ingress",
        "helper-ingress",
        "search-ingress",
    ]


def test_restricted_egress_policy(render) -> None:
    rendered = render(scenario(egress="restricted"))
    policy = rendered.find("NetworkPolicy", "helper-egress", "ai")

    def peer(namespace: str, labels: dict[str, str]) -> dict[str, Any]:
        return {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "podSelector": {"matchLabels": labels},
        }

    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"langop.io/agent": "helper"}},
        "policyTypes": ["Egress"],
        "egress": [
            {
                "to": [peer("kube-system", {"k8s-app": "kube-dns"})],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
            },
            {
                "to": [peer("ai", {"langop.io/tool": "search"})],
                "ports": [{"protocol": "TCP", "port": 8080}],
            },
            {
                "to": [peer("ai", {"langop.io/tool": "fetch"})],
                "ports": [{"protocol": "TCP", "port": 9000}],
            },
        ],
    }


def test_open_egress_has_no_egress_policy(rendered) -> None:
    assert not [n for k, _, n in rendered.kinds() if n == "helper-egress"]


def test_access_labels_only_for_same_namespace_service_tools(rendered) -> None:
    deployment = agent_deployment(rendered)
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert sorted(k for k in pod_labels if k.startswith("access.langop.io/")) == [
        "access.langop.io/fetch",
        "access.langop.io/search",
    ]
    assert pod_labels["access.langop.io/search"] == "true"
    # The access label is a pod-template label only, not one of the Deployment's own.
    assert not [k for k in deployment["metadata"]["labels"] if k.startswith("access.")]


def test_sidecar_named_like_the_agent_is_rejected_or_renamed() -> None:
    def program() -> None:
        tool = LanguageTool(
            "helper", image="ghcr.io/acme/helper-tool:1", namespace="ai", deployment_mode="sidecar"
        )
        LanguageAgent("helper", namespace="ai", image="ghcr.io/acme/agent:2.0.0", tools=[tool])

    try:
        run = run_program(program)
    except SpecError as error:
        assert [p.path for p in error.problems] == ["tools[0]"]
        return
    deployment = next(m for m in run.manifests() if m["kind"] == "Deployment")
    names = [c["name"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert len(names) == len(set(names)), names
