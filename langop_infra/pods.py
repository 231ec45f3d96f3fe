"""Containers, pod specs and security contexts as plain Kubernetes-shaped data.

Pure functions: the components hand these dicts to pulumi_kubernetes unchanged, and tests
can check them without the Pulumi engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langop_infra.contract import EnvVar
from langop_infra.specs import Resources, Security, ToolSpec, WorkloadSpec

TMP_VOLUME = "tmp"
WORKSPACE_VOLUME = "workspace"
DATA_VOLUME = "data"


def pod_security_context(security: Security) -> dict[str, Any]:
    return {
        "runAsNonRoot": security.run_as_non_root,
        "runAsUser": security.run_as_user,
        "runAsGroup": security.run_as_group,
        "fsGroup": security.fs_group,
        "seccompProfile": {"type": security.seccomp_profile},
    }


def container_security_context(security: Security) -> dict[str, Any]:
    capabilities: dict[str, Any] = {"drop": list(security.drop_capabilities)}
    if security.add_capabilities:
        capabilities["add"] = list(security.add_capabilities)
    return {
        "allowPrivilegeEscalation": security.allow_privilege_escalation,
        "readOnlyRootFilesystem": security.read_only_root_filesystem,
        "runAsNonRoot": security.run_as_non_root,
        "runAsUser": security.run_as_user,
        "runAsGroup": security.run_as_group,
        "capabilities": capabilities,
        "seccompProfile": {"type": security.seccomp_profile},
        "privileged": False,
    }


def resources_manifest(resources: Resources) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("requests", "limits"):
        amounts = getattr(resources, part).model_dump(exclude_none=True)
        if amounts:
            out[part] = amounts
    return out


def container(
    spec: WorkloadSpec,
    *,
    env: Sequence[EnvVar],
    resources: Resources,
    security: Security,
    image_pull_policy: str | None,
    mounts: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The workload's main container, secure by default, with ``/tmp`` writable."""
    out: dict[str, Any] = {
        "name": spec.name,
        "image": spec.image,
        "env": [var.manifest() for var in env],
        "resources": resources_manifest(resources),
        "securityContext": container_security_context(security),
        "volumeMounts": [{"name": TMP_VOLUME, "mountPath": "/tmp"}, *mounts],
    }
    if spec.command is not None:
        out["command"] = list(spec.command)
    if spec.args is not None:
        out["args"] = list(spec.args)
    if image_pull_policy is not None:
        out["imagePullPolicy"] = image_pull_policy
    return out


def tool_container(
    tool: ToolSpec,
    *,
    env: Sequence[EnvVar],
    resources: Resources,
    security: Security,
    image_pull_policy: str | None,
    mounts: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """A tool's container: its port named ``mcp``, readiness and liveness on ``healthPath``."""
    probe = {"httpGet": {"path": tool.health_path, "port": tool.port}}
    # Tools built like the example read PORT; never shadow a PORT the user set.
    user_set_port = "PORT" in tool.env or "PORT" in tool.secret_env
    port_env = [] if user_set_port else [EnvVar("PORT", value=str(tool.port))]
    out = container(
        tool,
        env=[*port_env, *env],
        resources=resources,
        security=security,
        image_pull_policy=image_pull_policy,
        mounts=mounts,
    )
    out["ports"] = [{"name": "mcp", "containerPort": tool.port, "protocol": "TCP"}]
    out["readinessProbe"] = {**probe, "periodSeconds": 5, "failureThreshold": 3}
    out["livenessProbe"] = {
        **probe,
        "initialDelaySeconds": 10,
        "periodSeconds": 20,
        "failureThreshold": 6,
    }
    return out


def pod_spec(
    spec: WorkloadSpec,
    *,
    containers: Sequence[dict[str, Any]],
    volumes: Sequence[dict[str, Any]],
    security: Security,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "automountServiceAccountToken": spec.automount_service_account_token,
        "securityContext": pod_security_context(security),
        "containers": list(containers),
        "volumes": [{"name": TMP_VOLUME, "emptyDir": {}}, *volumes],
    }
    if spec.service_account_name:
        out["serviceAccountName"] = spec.service_account_name
    return out


def deployment_spec(
    replicas: int,
    selector: dict[str, str],
    pod_labels: dict[str, str],
    pod_annotations: dict[str, str],
    pod: dict[str, Any],
) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "selector": {"matchLabels": selector},
        "template": {
            "metadata": {"labels": pod_labels, "annotations": pod_annotations},
            "spec": pod,
        },
    }
