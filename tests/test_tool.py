"""LanguageTool under the Pulumi mock engine: objects, probes, labels, security, secrets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pulumi
import pytest
import yaml

from langop_infra.components.tool import LanguageTool
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import ProgramRun, run_program
from langop_infra.testing.secrets import secret_leaves

CANARY = "canary-7f3a9c-do-not-leak"
IMAGE = "ghcr.io/acme/web-search:1.0.0"
TOOL_TYPE = "langop-infra:index:LanguageTool"


def tool_program(**fields: Any) -> Callable[[], None]:
    def program() -> None:
        tool = LanguageTool("web-search", image=IMAGE, **fields)
        pulumi.export("endpoint", tool.endpoint)
        pulumi.export("service_name", tool.service_name)
        pulumi.export("namespace", tool.namespace)
        pulumi.export("deployment_mode", tool.deployment_mode)

    return program


def container_of(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


def registration(run: ProgramRun, kind: str) -> Any:
    found = [r for r in run.kubernetes() if r.inputs.get("kind") == kind]
    assert len(found) == 1, [r.name for r in run.kubernetes()]
    return found[0]


# --- objects ---------------------------------------------------------------------------------


def test_service_mode_creates_deployment_service_and_policy(render) -> None:
    rendered = render(tool_program(namespace="tools"))
    assert rendered.kinds() == [
        ("Deployment", "tools", "web-search"),
        ("NetworkPolicy", "tools", "web-search-ingress"),
        ("Service", "tools", "web-search"),
    ]


def test_service_mode_with_secret_env_adds_the_secret(render) -> None:
    rendered = render(tool_program(namespace="tools", secret_env={"API_KEY": CANARY}))
    assert rendered.kinds() == [
        ("Deployment", "tools", "web-search"),
        ("NetworkPolicy", "tools", "web-search-ingress"),
        ("Secret", "tools", "web-search-env"),
        ("Service", "tools", "web-search"),
    ]


def test_secret_key_ref_env_adds_no_secret(render) -> None:
    rendered = render(
        tool_program(
            namespace="tools",
            secret_env={"API_KEY": {"secretKeyRef": {"name": "search-creds", "key": "api"}}},
        )
    )
    assert [k for k, _, _ in rendered.kinds()] == ["Deployment", "NetworkPolicy", "Service"]
    env = container_of(rendered.find("Deployment", "web-search"))["env"]
    assert {
        "name": "API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "search-creds", "key": "api"}},
    } in env


def test_persistence_adds_a_claim_mounted_into_the_pod(render) -> None:
    rendered = render(tool_program(namespace="tools", persistence={"size": "2Gi"}))
    assert rendered.kinds() == [
        ("Deployment", "tools", "web-search"),
        ("NetworkPolicy", "tools", "web-search-ingress"),
        ("PersistentVolumeClaim", "tools", "web-search-data"),
        ("Service", "tools", "web-search"),
    ]
    claim = rendered.find("PersistentVolumeClaim", "web-search-data")
    assert claim["spec"]["resources"] == {"requests": {"storage": "2Gi"}}
    deployment = rendered.find("Deployment", "web-search")
    pod = deployment["spec"]["template"]["spec"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "web-search-data"}} in pod[
        "volumes"
    ]
    assert {"name": "data", "mountPath": "/data"} in container_of(deployment)["volumeMounts"]
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}


def test_unset_namespace_is_default(render) -> None:
    rendered = render(tool_program())
    assert {ns for _, ns, _ in rendered.kinds()} == {"default"}
    assert rendered.outputs["endpoint"] == "http://web-search.default.svc.cluster.local:8080"


# --- deployment and service ------------------------------------------------------------------


def test_deployment_probes_and_port(render) -> None:
    rendered = render(tool_program(namespace="tools", port=9000, health_path="/healthz"))
    deployment = rendered.find("Deployment", "web-search", "tools")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["selector"] == {"matchLabels": {"langop.io/tool": "web-search"}}
    container = container_of(deployment)
    assert container["image"] == IMAGE
    assert container["ports"] == [{"name": "mcp", "containerPort": 9000, "protocol": "TCP"}]
    probe = {"httpGet": {"path": "/healthz", "port": 9000}}
    assert {k: container["readinessProbe"][k] for k in probe} == probe
    assert {k: container["livenessProbe"][k] for k in probe} == probe
    assert {"name": "PORT", "value": "9000"} in container["env"]


def test_default_probes_use_health_on_8080(render) -> None:
    container = container_of(render(tool_program()).find("Deployment", "web-search"))
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8080}
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": 8080}
    assert container["ports"][0]["containerPort"] == 8080


def test_service_is_cluster_ip_selecting_the_tool_pods(render) -> None:
    rendered = render(tool_program(namespace="tools", port=9000))
    service = rendered.find("Service", "web-search", "tools")
    assert service["spec"] == {
        "type": "ClusterIP",
        "selector": {"langop.io/tool": "web-search"},
        "ports": [{"name": "mcp", "port": 9000, "targetPort": "mcp", "protocol": "TCP"}],
    }
    pod_labels = rendered.find("Deployment", "web-search")["spec"]["template"]["metadata"]["labels"]
    assert pod_labels["langop.io/tool"] == "web-search"


def test_ingress_policy_admits_access_labelled_agents_on_the_port(render) -> None:
    policy = render(tool_program(namespace="tools", port=9000)).find(
        "NetworkPolicy", "web-search-ingress", "tools"
    )
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"langop.io/tool": "web-search"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {
                "from": [
                    {
                        "namespaceSelector": {
                            "matchLabels": {"kubernetes.io/metadata.name": "tools"}
                        },
                        "podSelector": {"matchLabels": {"access.langop.io/web-search": "true"}},
                    }
                ],
                "ports": [{"protocol": "TCP", "port": 9000}],
            }
        ],
    }


def test_recommended_labels_on_every_object(render) -> None:
    rendered = render(
        tool_program(
            namespace="tools", part_of="shop", secret_env={"K": CANARY}, labels={"team": "ml"}
        )
    )
    expected = {
        "app.kubernetes.io/name": "web-search",  # the image's name
        "app.kubernetes.io/instance": "web-search",
        "app.kubernetes.io/version": "1.0.0",
        "app.kubernetes.io/component": "tool",
        "app.kubernetes.io/part-of": "shop",
        "app.kubernetes.io/managed-by": "langop-infra",
        "langop.io/tool": "web-search",
        "team": "ml",
    }
    assert len(rendered.manifests) == 4
    for manifest in rendered.manifests:
        assert manifest["metadata"]["labels"] == expected, manifest["kind"]
    template = rendered.find("Deployment", "web-search")["spec"]["template"]
    assert template["metadata"]["labels"] == expected


def test_part_of_defaults_to_the_namespace(render) -> None:
    service = render(tool_program(namespace="tools")).find("Service", "web-search")
    assert service["metadata"]["labels"]["app.kubernetes.io/part-of"] == "tools"


# --- security --------------------------------------------------------------------------------


def test_restricted_security_by_default(render) -> None:
    deployment = render(tool_program()).find("Deployment", "web-search")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 10001,
        "runAsGroup": 10001,
        "fsGroup": 10001,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    context = container_of(deployment)["securityContext"]
    assert context["runAsNonRoot"] is True
    assert context["runAsUser"] == 10001
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    assert context["readOnlyRootFilesystem"] is True
    assert context["privileged"] is False
    # A read-only root still gets a writable /tmp.
    assert {"name": "tmp", "emptyDir": {}} in pod["volumes"]
    assert {"name": "tmp", "mountPath": "/tmp"} in container_of(deployment)["volumeMounts"]


def test_each_security_setting_is_overridable(render) -> None:
    security = {
        "runAsUser": 20000,
        "runAsGroup": 20001,
        "fsGroup": 3000,
        "runAsNonRoot": False,
        "allowPrivilegeEscalation": True,
        "readOnlyRootFilesystem": False,
        "seccompProfile": "Unconfined",
        "dropCapabilities": ["NET_RAW"],
        "addCapabilities": ["NET_BIND_SERVICE"],
    }
    deployment = render(tool_program(security=security)).find("Deployment", "web-search")
    assert deployment["spec"]["template"]["spec"]["securityContext"] == {
        "runAsNonRoot": False,
        "runAsUser": 20000,
        "runAsGroup": 20001,
        "fsGroup": 3000,
        "seccompProfile": {"type": "Unconfined"},
    }
    assert container_of(deployment)["securityContext"] == {
        "allowPrivilegeEscalation": True,
        "readOnlyRootFilesystem": False,
        "runAsNonRoot": False,
        "runAsUser": 20000,
        "runAsGroup": 20001,
        "capabilities": {"drop": ["NET_RAW"], "add": ["NET_BIND_SERVICE"]},
        "seccompProfile": {"type": "Unconfined"},
        "privileged": False,
    }


def test_partial_security_override_keeps_the_other_defaults(render) -> None:
    deployment = render(tool_program(security={"runAsUser": 20000})).find(
        "Deployment", "web-search"
    )
    context = container_of(deployment)["securityContext"]
    assert context["runAsUser"] == 20000
    assert context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}


def test_service_account_token_mount_is_overridable(render) -> None:
    deployment = render(
        tool_program(automount_service_account_token=True, service_account_name="search-sa")
    ).find("Deployment", "web-search")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is True
    assert pod["serviceAccountName"] == "search-sa"


# --- secrets ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make_value",
    [lambda: CANARY, lambda: pulumi.Output.secret(CANARY)],
    ids=["plain-string", "pulumi-secret"],
)
def test_secret_env_stays_secret(render, make_value: Callable[[], Any]) -> None:
    def program() -> None:
        LanguageTool(
            "web-search", image=IMAGE, namespace="tools", secret_env={"API_KEY": make_value()}
        )

    rendered = render(program)
    secret = registration(rendered.run, "Secret")
    # The plain value reaches the engine, but only as a secret.
    assert secret_leaves(secret.inputs) == [(".stringData.API_KEY", CANARY)]
    assert rendered.find("Secret", "web-search-env")["stringData"] == {"API_KEY": "[secret]"}
    for manifest in rendered.manifests:
        assert CANARY not in yaml.safe_dump(manifest)
    deployment = registration(rendered.run, "Deployment")
    assert CANARY not in repr(deployment.inputs)
    # The Deployment's spec stays readable: nothing in it is a secret.
    assert secret_leaves(deployment.inputs) == []
    env = container_of(rendered.find("Deployment", "web-search"))["env"]
    assert {
        "name": "API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "web-search-env", "key": "API_KEY"}},
    } in env


# --- sidecar mode ----------------------------------------------------------------------------


def test_sidecar_mode_registers_no_kubernetes_object() -> None:
    holder: dict[str, LanguageTool] = {}

    def program() -> None:
        holder["tool"] = LanguageTool(
            "files", image=IMAGE, namespace="ai", deployment_mode="sidecar", port=8090
        )

    run = run_program(program)
    assert [r.type for r in run.registrations] == [TOOL_TYPE]
    tool = holder["tool"]
    assert tool.deployment is None
    assert tool.service is None
    assert tool.network_policy is None
    container = tool.sidecar_container
    assert container is not None
    assert container["name"] == "files"
    assert container["image"] == IMAGE
    assert container["ports"] == [{"name": "mcp", "containerPort": 8090, "protocol": "TCP"}]
    assert container["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8090}
    assert container["livenessProbe"]["httpGet"] == {"path": "/health", "port": 8090}
    assert container["securityContext"]["runAsNonRoot"] is True


def test_sidecar_with_secret_env_registers_only_its_secret(render) -> None:
    rendered = render(
        tool_program(namespace="ai", deployment_mode="sidecar", secret_env={"K": CANARY})
    )
    assert rendered.kinds() == [("Secret", "ai", "web-search-env")]


@pytest.mark.parametrize(
    ("fields", "outputs"),
    [
        (
            {"namespace": "tools", "port": 9000},
            {
                "endpoint": "http://web-search.tools.svc.cluster.local:9000",
                "service_name": "web-search",
                "namespace": "tools",
                "deployment_mode": "service",
            },
        ),
        (
            {"namespace": "ai", "deployment_mode": "sidecar", "port": 8090},
            {
                "endpoint": "http://localhost:8090",
                "service_name": "web-search",
                "namespace": "ai",
                "deployment_mode": "sidecar",
            },
        ),
    ],
    ids=["service", "sidecar"],
)
def test_outputs_match_the_contract(render, fields: dict[str, Any], outputs: dict) -> None:
    assert render(tool_program(**fields)).outputs == outputs


# --- component shape -------------------------------------------------------------------------


def test_component_type_and_parents(render) -> None:
    run = render(tool_program(namespace="tools", secret_env={"K": CANARY})).run
    component = run.registrations[0]
    assert component.type == TOOL_TYPE
    assert component.name == "web-search"
    assert component.parent.endswith("pulumi:pulumi:Stack::langop-infra-dev")
    children = run.registrations[1:]
    assert sorted(r.name for r in children if r.is_kubernetes) == [
        "tools/web-search",
        "tools/web-search",
        "tools/web-search-env",
        "tools/web-search-ingress",
    ]
    # Every child, Kubernetes object or not (the schema sync), hangs under the component.
    assert {r.parent for r in children} == {component.urn}


def test_camel_case_mapping_names_the_objects_after_the_spec(render) -> None:
    def program() -> None:
        spec = {"name": "web-search", "image": IMAGE, "namespace": "tools", "healthPath": "/hz"}
        LanguageTool("search-component", spec, port=7000)

    rendered = render(program)
    assert rendered.run.registrations[0].name == "search-component"
    assert rendered.find("Service", "web-search", "tools")["spec"]["ports"][0]["port"] == 7000
    container = container_of(rendered.find("Deployment", "web-search", "tools"))
    assert container["readinessProbe"]["httpGet"] == {"path": "/hz", "port": 7000}


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "paths"),
    [
        ({"image": ""}, {"image"}),
        ({"port": 0, "replicas": -1}, {"port", "replicas"}),
        ({"deployment_mode": "daemon", "typo_field": 1}, {"deployment_mode", "typo_field"}),
    ],
)
def test_bad_input_registers_nothing(fields: dict[str, Any], paths: set[str]) -> None:
    def program() -> None:
        LanguageTool("web-search", **{"image": IMAGE, **fields})

    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(program, into=run)
    assert {p.path for p in caught.value.problems} == paths
    assert run.registrations == []


def test_bad_name_registers_nothing() -> None:
    run = ProgramRun()
    with pytest.raises(ValueError) as caught:
        run_program(lambda: LanguageTool("Web_Search", image=IMAGE), into=run)
    assert isinstance(caught.value, SpecError)
    assert [p.path for p in caught.value.problems] == ["name"]
    assert run.registrations == []


def test_standalone_tool_gets_the_deploy_time_checks_too() -> None:
    """Without LanguageCluster, what Kubernetes would refuse is still refused up front."""
    run = ProgramRun()
    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageTool(
                "memory",
                image="ghcr.io/acme/memory:1",
                resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
                security={"runAsUser": 0},
                allow_from=[{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["192.168.0.0/16"]}}],
            ),
            into=run,
        )
    assert {p.path for p in caught.value.problems} == {
        "resources.requests.cpu",
        "security.runAsUser",
        "allowFrom[0].ipBlock.except[0]",
    }
    assert run.registrations == []
