"""The escape hatches of tools and agents: volumes and volumeMounts, initContainers,
serviceAccount, and a tool's service. The fixture stack uses each; its render passes strict
kubernetes-validate, the restricted Pod Security Standard's rules and checkov."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from langop_infra.components.agent import LanguageAgent
from langop_infra.components.tool import LanguageTool
from langop_infra.config.checks._validation import parse_cluster
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program
from langop_infra.offline._render import render_stack
from tests.support.manifests import validate_manifests
from tests.test_pod_security import RULES, resources_bounded

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "stacks" / "Pulumi.escape-hatches.yaml"
IMAGE = "ghcr.io/acme/memory-mcp:1.4.0"
HOST_PATH_REASON = "hostPath volumes are refused: the restricted Pod Security Standard"


@cache
def manifests() -> list[dict[str, Any]]:
    return render_stack(REPO, config_file=FIXTURE).manifests()


def find(kind: str, name: str) -> dict[str, Any]:
    [found] = [m for m in manifests() if m["kind"] == kind and m["metadata"]["name"] == name]
    return found


def pod(name: str) -> dict[str, Any]:
    return find("Deployment", name)["spec"]["template"]


def test_the_fixture_passes_strict_kubernetes_validate() -> None:
    validate_manifests(manifests())


@pytest.mark.parametrize("workload", ["memory", "helper"])
def test_the_fixture_keeps_the_restricted_standard(workload: str) -> None:
    template = pod(workload)
    violations = {name: found for name, rule in RULES.items() if (found := rule(template))}
    assert violations == {}
    assert resources_bounded(template) == []


def test_tool_volumes_mounts_identity_and_service() -> None:
    spec = pod("memory")["spec"]
    assert [v["name"] for v in spec["volumes"]] == ["tmp", "data", "ca-bundle", "credentials"]
    assert spec["volumes"][2] == {
        "name": "ca-bundle",
        "configMap": {"name": "corporate-ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]},
    }
    assert spec["volumes"][3]["secret"] == {"secretName": "memory-credentials", "defaultMode": 288}
    mounts = spec["containers"][0]["volumeMounts"]
    assert mounts[2:] == [
        {"name": "ca-bundle", "mountPath": "/etc/ssl/corporate", "readOnly": True},
        {"name": "credentials", "mountPath": "/var/run/credentials", "readOnly": True},
    ]
    assert (spec["serviceAccountName"], spec["automountServiceAccountToken"]) == ("memory", False)
    account = find("ServiceAccount", "memory")
    assert account["automountServiceAccountToken"] is False
    assert account["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "memory@acme-prod.iam.gserviceaccount.com"
    }
    service = find("Service", "memory")
    assert service["spec"]["type"] == "LoadBalancer"
    assert service["metadata"]["annotations"] == {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true"
    }
    assert service["metadata"]["labels"]["exposure"] == "internal"
    assert service["metadata"]["labels"]["langop.io/tool"] == "memory"


def test_agent_init_container_runs_as_the_main_container_with_the_config() -> None:
    spec = pod("helper")["spec"]
    main = spec["containers"][0]
    [init] = spec["initContainers"]
    assert init["name"] == "config-adapter"
    assert init["securityContext"] == main["securityContext"]
    assert init["resources"] == main["resources"]
    assert init["imagePullPolicy"] == "Always"
    # The agent's env first, as upstream's reconcileDeployment gives it, then its own.
    assert init["env"] == [
        *(e for e in main["env"] if e["name"] != "LOG_LEVEL"),
        {"name": "LOG_LEVEL", "value": "info"},
    ]
    assert "AGENT_NAME" in [e["name"] for e in init["env"]]
    assert init["volumeMounts"] == [
        {"name": "tmp", "mountPath": "/tmp"},
        {"name": "config", "mountPath": "/etc/agent", "readOnly": True},
        {"name": "adapted-config", "mountPath": "/etc/adapted"},
    ]
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["adapted-config"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "16Mi"}
    assert volumes["cloud-token"]["projected"]["sources"] == [
        {
            "serviceAccountToken": {
                "path": "token",
                "audience": "sts.amazonaws.com",
                "expirationSeconds": 3600,
            }
        }
    ]
    assert volumes["shared-cache"]["persistentVolumeClaim"] == {"claimName": "helper-cache"}
    assert spec["serviceAccountName"] == "helper-identity"
    assert not [
        m
        for m in manifests()
        if m["kind"] == "ServiceAccount" and m["metadata"]["name"] == "helper"
    ]


def problems_of(tool: dict[str, Any] | None = None, agent: dict[str, Any] | None = None) -> dict:
    """``{path: message}`` of a document with one tool (and an agent using it)."""
    document: dict[str, Any] = {
        "namespace": "apps",
        "defaults": {"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
        "tools": [{"name": "memory", "image": IMAGE, **(tool or {})}],
        "agents": [
            {"name": "helper", "image": IMAGE, "tools": [{"name": "memory"}], **(agent or {})}
        ],
    }
    with pytest.raises(SpecError) as caught:
        parse_cluster(document)
    return {p.path: p.message for p in caught.value.problems}


def test_host_path_is_refused_with_the_restricted_reason() -> None:
    found = problems_of(tool={"volumes": [{"name": "node", "hostPath": {"path": "/var/log"}}]})
    assert list(found) == ["tools[0].volumes[0].hostPath"]
    assert found["tools[0].volumes[0].hostPath"].startswith(HOST_PATH_REASON)


@pytest.mark.parametrize(
    ("agent", "path", "says"),
    [
        (
            {"volumeMounts": [{"name": "ca", "mountPath": "/ca"}]},
            "agents[0].volumeMounts[0].name",
            "no volume named 'ca' under volumes (known: none)",
        ),
        (
            {"volumes": [{"name": "config", "emptyDir": {}}]},
            "agents[0].volumes[0].name",
            "volume name 'config' is one langop-infra generates",
        ),
        (
            {"volumes": [{"name": "sidecar-0-tmp", "emptyDir": {}}]},
            "agents[0].volumes[0].name",
            "one langop-infra generates",
        ),
        (
            {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}]},
            "agents[0].volumes[1].name",
            "volume 'a' is given twice",
        ),
        (
            {
                "volumes": [{"name": "a", "emptyDir": {}}],
                "volumeMounts": [{"name": "a", "mountPath": "/workspace"}],
            },
            "agents[0].volumeMounts[0].mountPath",
            "/workspace is where langop-infra mounts the agent's workspace",
        ),
        (
            {
                "volumes": [{"name": "a", "emptyDir": {}}],
                "volumeMounts": [
                    {"name": "a", "mountPath": "/x"},
                    {"name": "a", "mountPath": "/x/"},
                ],
            },
            "agents[0].volumeMounts[1].mountPath",
            "/x is mounted twice",
        ),
        (
            {"volumeMounts": [{"name": "a", "mountPath": "/etc/agent"}]},
            "agents[0].volumeMounts[0].mountPath",
            "is already mounted in every pod",
        ),
        (
            {
                "volumes": [{"name": "a", "emptyDir": {}}],
                "volumeMounts": [{"name": "a", "mountPath": "/x", "subPath": "../etc"}],
            },
            "agents[0].volumeMounts[0].subPath",
            "must be a relative path without",
        ),
        (
            {"initContainers": [{"name": "memory", "image": IMAGE}]},
            "agents[0].initContainers[0].name",
            "'memory' is the name of a tool the agent refere",
        ),
        (
            {"initContainers": [{"name": "helper", "image": IMAGE}]},
            "agents[0].initContainers[0].name",
            "the workload's own container",
        ),
        (
            {
                "initContainers": [
                    {
                        "name": "adapter",
                        "image": IMAGE,
                        "volumeMounts": [{"name": "nope", "mountPath": "/x"}],
                    }
                ]
            },
            "agents[0].initContainers[0].volumeMounts[0].name",
            "no volume named 'nope'",
        ),
        (
            {"initContainers": [{"name": "adapter", "image": IMAGE, "securityContext": {}}]},
            "agents[0].initContainers[0].securityContext",
            "unknown field",
        ),
        (
            {
                "initContainers": [
                    {"name": "a", "image": IMAGE, "resources": {"requests": {"cpu": "2"}}}
                ]
            },
            "agents[0].initContainers[0].resources.requests.cpu",
            "above",
        ),
        (
            {"serviceAccount": {"create": True, "name": "x"}},
            "agents[0].serviceAccount",
            "give {create: true} (with optional annotations) or {name}",
        ),
        (
            {"serviceAccount": {"name": "x", "annotations": {"a": "b"}}},
            "agents[0].serviceAccount",
            "annotations apply to a ServiceAccount langop-infra creates",
        ),
        (
            {"serviceAccount": {"name": "x"}, "serviceAccountName": "y"},
            "agents[0].serviceAccount",
            "give serviceAccount or serviceAccountName, not both",
        ),
        (
            {
                "volumes": [
                    {
                        "name": "p",
                        "projected": {
                            "sources": [{"configMap": {"name": "a"}, "secret": {"name": "b"}}]
                        },
                    }
                ]
            },
            "agents[0].volumes[0].projected.sources[0]",
            "give exactly one of configMap, secret",
        ),
        (
            {"volumes": [{"name": "p"}]},
            "agents[0].volumes[0]",
            "give exactly one of configMap, secret, persistentVolumeClaim, emptyDir or projected",
        ),
    ],
)
def test_bad_escape_hatches_are_refused_at_their_path(agent: dict, path: str, says: str) -> None:
    found = problems_of(agent=agent)
    assert path in found, found
    assert says in found[path]


@pytest.mark.parametrize(
    ("tool", "path", "says"),
    [
        (
            {
                "persistence": {"mountPath": "/data"},
                "volumes": [{"name": "a", "emptyDir": {}}],
                "volumeMounts": [{"name": "a", "mountPath": "/data"}],
            },
            "tools[0].volumeMounts[0].mountPath",
            "/data is where langop-infra mounts persistence",
        ),
        ({"service": {"type": "ExternalName"}}, "tools[0].service.type", "ClusterIP"),
        ({"service": {"labels": {"langop.io/tool": "x"}}}, "tools[0].service.labels", "reserved"),
        (
            {"deploymentMode": "sidecar", "volumes": [{"name": "a", "emptyDir": {}}]},
            "tools[0]",
            "volumes set the pod, and a sidecar joins the agent's pod; set them on the agent",
        ),
        (
            {"deploymentMode": "sidecar", "service": {"type": "NodePort"}},
            "tools[0]",
            "service set the pod",
        ),
    ],
)
def test_bad_tool_settings_are_refused_at_their_path(tool: dict, path: str, says: str) -> None:
    found = problems_of(tool=tool)
    matching = [p for p in found if p.startswith(path)]
    assert matching, found
    assert any(says in found[p] for p in matching), found


def test_python_api_takes_the_same_fields() -> None:
    def program() -> None:
        LanguageTool(
            "memory",
            image=IMAGE,
            namespace="apps",
            defaults={"schemaSyncFrom": [{"cidr": "10.0.0.0/28"}]},
            volumes=[{"name": "ca", "secret": {"secret_name": "ca"}}],
            volume_mounts=[{"name": "ca", "mount_path": "/etc/ssl/ca", "read_only": True}],
            init_containers=[{"name": "migrate", "image": IMAGE, "args": ["migrate"]}],
            service={"type": "NodePort"},
            service_account={"create": True, "annotations": {"eks.amazonaws.com/role-arn": "r"}},
        )
        LanguageAgent(
            "helper",
            image=IMAGE,
            namespace="apps",
            tools=[{"name": "memory"}],
            service_account={"create": True},
        )

    run = run_program(program)
    by_kind = {(r.type.rsplit(":", 1)[-1], r.name): r.inputs for r in run.kubernetes()}
    assert by_kind[("ServiceAccount", "apps/memory-sa")]["metadata"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "r"
    }
    assert ("ServiceAccount", "apps/helper-sa") in by_kind
    deployment = by_kind[("Deployment", "apps/memory")]["spec"]["template"]["spec"]
    assert deployment["serviceAccountName"] == "memory"
    assert [c["name"] for c in deployment["initContainers"]] == ["migrate"]
    assert by_kind[("Service", "apps/memory")]["spec"]["type"] == "NodePort"
    sa_urn = next(r.urn for r in run.registrations if r.name == "apps/memory-sa")
    memory = next(
        r for r in run.registrations if r.name == "apps/memory" and r.type.endswith("Deployment")
    )
    assert sa_urn in memory.dependencies


def test_the_stacks_and_the_package_schema_describe_the_fields() -> None:
    import json

    schema = json.loads((REPO / "schemas" / "stack-config.schema.json").read_text())
    text = json.dumps(schema)
    for field in ("volumeMounts", "initContainers", "serviceAccount", "hostPath"):
        assert f'"{field}"' in text
    from langop_infra.components.agent import LanguageAgentArgs
    from langop_infra.components.tool import LanguageToolArgs

    for args in (LanguageToolArgs, LanguageAgentArgs):
        assert {"volumes", "volume_mounts", "init_containers", "service_account"} <= set(
            args.__annotations__
        )
    assert "service" in LanguageToolArgs.__annotations__


@pytest.mark.slow
@pytest.mark.skipif(
    not (REPO / ".venv-checkov" / "bin" / "checkov").exists(),
    reason="checkov is not installed in .venv-checkov",
)
def test_the_fixture_passes_checkov(tmp_path: Path) -> None:
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    shutil.copy(FIXTURE, tmp_path / "stacks" / "Pulumi.escape.yaml")
    result = subprocess.run(
        ["bash", str(REPO / "tools" / "checkov.sh"), "escape"],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHON": sys.executable, "PROJECT_DIR": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "Failed checks: 0" in result.stdout


def test_the_component_package_serves_the_fields() -> None:
    import json

    from pulumi.provider.experimental.component import ComponentProvider

    from langop_infra.program.package import COMPONENTS

    schema = json.loads(ComponentProvider(COMPONENTS, "langop-infra", version="0.1.0").schema)
    common = {"volumes", "volumeMounts", "initContainers", "serviceAccount"}
    tool = schema["resources"]["langop-infra:index:LanguageTool"]["inputProperties"]
    agent = schema["resources"]["langop-infra:index:LanguageAgent"]["inputProperties"]
    assert common | {"service"} <= set(tool)
    assert common <= set(agent) and "service" not in agent
    assert "hostPath is refused" in tool["volumes"]["description"]


def test_every_escape_hatch_field_is_described() -> None:
    from pydantic import BaseModel

    from langop_infra.config import _volumes as volumes

    models = [
        m
        for m in vars(volumes).values()
        if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == volumes.__name__
    ]
    assert len(models) >= 12
    bare = [
        f"{model.__name__}.{name}"
        for model in models
        for name, info in model.model_fields.items()
        if name in model.__annotations__ and not info.description
    ]
    assert bare == []
