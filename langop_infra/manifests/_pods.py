"""Containers, pods and every workload object spec as plain Kubernetes-shaped data.

Pure functions: the components hand these dicts to pulumi_kubernetes unchanged, and tests
can check them without the Pulumi engine.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from langop_infra.config import _names as names
from langop_infra.config._fields import overlay
from langop_infra.config._pod import Resources, Security, WorkloadSpec
from langop_infra.config._volumes import PodExtensionsSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.config.cluster import Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.manifests import (
    _contract as contract,
    _policies as policies,
    _stdio_bridge as stdio_bridge,
    _workspace as workspace,
)
from langop_infra.manifests._contract import EnvVar
from langop_infra.manifests._k8s_types import (
    CapabilitiesDict,
    ContainerDict,
    DeploymentSpecDict,
    EnvVarDict,
    HorizontalPodAutoscalerSpecDict,
    NetworkPolicySpecDict,
    PersistentVolumeClaimSpecDict,
    PodDisruptionBudgetSpecDict,
    PodSecurityContextDict,
    PodSpecDict,
    PodTemplateSpecDict,
    ProbeDict,
    ResourceRequirementsDict,
    SecurityContextDict,
    ServiceSpecDict,
    TemplateMetaDict,
    VolumeDict,
    VolumeMountDict,
)
from langop_infra.manifests._pod_settings import (
    apply_pod_settings,
    autoscaler_spec,
    disruption_budget_spec,
    with_probes,
)

CONFIG_VOLUME = "config"
TMP_VOLUME = "tmp"
WORKSPACE_VOLUME = "workspace"
DATA_VOLUME = "data"
# emptyDirs each sidecar tool gets of its own in the agent's pod.
SIDECAR_OWN_VOLUMES = (TMP_VOLUME, stdio_bridge.BRIDGE_HOME_VOLUME)
# A sidecar gets two minutes to become ready before the kubelet restarts it.
STARTUP_PROBE: ProbeDict = {"periodSeconds": 2, "failureThreshold": 60}


def pod_security_context(security: Security) -> PodSecurityContextDict:
    return {
        "runAsNonRoot": security.run_as_non_root,
        "runAsUser": security.run_as_user,
        "runAsGroup": security.run_as_group,
        "fsGroup": security.fs_group,
        "seccompProfile": {"type": security.seccomp_profile},
    }


def container_security_context(security: Security) -> SecurityContextDict:
    capabilities: CapabilitiesDict = {"drop": list(security.drop_capabilities)}
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


def resources_manifest(resources: Resources) -> ResourceRequirementsDict:
    out: ResourceRequirementsDict = {}
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
    mounts: Sequence[VolumeMountDict] = (),
) -> ContainerDict:
    """The workload's main container, secure by default, with ``/tmp`` writable."""
    out: ContainerDict = {
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
    mounts: Sequence[VolumeMountDict] = (),
) -> ContainerDict:
    """A tool's container: its port named ``mcp``, readiness and liveness on ``healthPath``."""
    health = stdio_bridge.BRIDGE_HEALTH_PATH if tool.transport == "stdio" else tool.health_path
    probe: ProbeDict = {"httpGet": {"path": health, "port": tool.port}}
    # Tools built like the example read PORT; never shadow a PORT the user set.
    user_set_port = "PORT" in tool.env or "PORT" in tool.secret_env
    port_env: list[EnvVar] = [] if user_set_port else [EnvVar("PORT", value=str(tool.port))]
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
    if tool.env_from:
        out["envFrom"] = [s.model_dump(by_alias=True, exclude_none=True) for s in tool.env_from]
    startup: ProbeDict = {**probe, **STARTUP_PROBE}
    return with_probes(out, tool, {"startupProbe": startup})


def pod_spec(
    spec: WorkloadSpec,
    *,
    containers: Sequence[ContainerDict],
    volumes: Sequence[VolumeDict],
    security: Security,
) -> PodSpecDict:
    """The pod: the generated volumes, then the user's own (``volumes``)."""
    # VolumeSpec holds one of the sources VolumeDict names, by their API names.
    user_volumes = [cast(VolumeDict, v.manifest()) for v in getattr(spec, "volumes", ())]
    out: PodSpecDict = {
        "automountServiceAccountToken": spec.automount_service_account_token,
        "securityContext": pod_security_context(security),
        "containers": list(containers),
        "volumes": [{"name": TMP_VOLUME, "emptyDir": {}}, *volumes, *user_volumes],
    }
    account = (
        spec.service_account_ref()
        if isinstance(spec, PodExtensionsSpec)
        else spec.service_account_name
    )
    if account:
        out["serviceAccountName"] = account
    return out


def user_mounts(spec: WorkloadSpec) -> list[VolumeMountDict]:
    """The user's ``volumeMounts`` of the main container."""
    return [cast(VolumeMountDict, m.manifest()) for m in getattr(spec, "volume_mounts", ())]


def init_containers(
    spec: WorkloadSpec,
    defaults: Defaults,
    security: Security,
    generated: Sequence[VolumeMountDict] = (),
    inherited_env: Sequence[EnvVarDict] = (),
) -> list[ContainerDict]:
    """The user's ``initContainers``: the main container's security context (so the
    restricted standard holds), its resources unless they set their own, a ``/tmp`` and the
    ``generated`` mounts (an agent's config.yaml, which a config adapter reads); first in
    their env, ``inherited_env`` (an agent's contract env, as upstream's
    ``reconcileDeployment`` gives its init containers), less the names they set themselves."""
    out: list[ContainerDict] = []
    for init in getattr(spec, "init_containers", ()):
        resources = overlay(defaults.resources, init.resources or spec.resources)
        own: list[EnvVarDict] = [{"name": k, "value": v} for k, v in init.env.items()]
        member: ContainerDict = {
            "name": init.name,
            "image": init.image,
            "env": [*(e for e in inherited_env if e["name"] not in init.env), *own],
            "resources": resources_manifest(resources),
            "securityContext": container_security_context(security),
            "volumeMounts": [
                {"name": TMP_VOLUME, "mountPath": "/tmp"},
                *generated,
                *(cast(VolumeMountDict, m.manifest()) for m in init.volume_mounts),
            ],
        }
        if init.command is not None:
            member["command"] = list(init.command)
        if init.args is not None:
            member["args"] = list(init.args)
        pull = spec.image_pull_policy or defaults.image_pull_policy
        if pull:
            member["imagePullPolicy"] = pull
        out.append(member)
    return out


def service_account_annotations(spec: WorkloadSpec) -> dict[str, str] | None:
    """The annotations of the ServiceAccount ``<workload>`` to create, or None for none."""
    account = getattr(spec, "service_account", None)
    if account is None or not account.create:
        return None
    return dict(account.annotations)


def deployment_spec(
    workload: WorkloadSpec,
    selector: dict[str, str],
    pod_labels: dict[str, str],
    pod_annotations: dict[str, str],
    pod: PodSpecDict,
) -> DeploymentSpecDict:
    """The Deployment spec with the workload's pod settings; without ``replicas`` when an
    autoscaler owns the count (so ``pulumi up`` and the HPA do not fight over it)."""
    metadata: TemplateMetaDict = {"labels": pod_labels}
    if pod_annotations:  # no empty `annotations: {}` in what Kubernetes receives
        metadata["annotations"] = pod_annotations
    template: PodTemplateSpecDict = {"metadata": metadata, "spec": pod}
    settled = apply_pod_settings(workload, template, container=workload.name, selector=selector)
    if workload.autoscaling is None:
        return {
            "replicas": workload.replicas,
            "selector": {"matchLabels": selector},
            "template": settled,
        }
    return {"selector": {"matchLabels": selector}, "template": settled}


@dataclass(frozen=True)
class ToolObjects:
    """Every object spec of one tool, as plain data; the component only registers them.

    ``deployment`` is None in sidecar mode, where ``container`` joins each agent's pod instead.
    """

    container: ContainerDict
    claim: tuple[str, PersistentVolumeClaimSpecDict] | None
    deployment: DeploymentSpecDict | None
    service: ServiceSpecDict | None
    ingress_policy: tuple[str, NetworkPolicySpecDict] | None
    egress_policy: tuple[str, NetworkPolicySpecDict] | None = None
    disruption_budget: PodDisruptionBudgetSpecDict | None = None
    autoscaler: HorizontalPodAutoscalerSpecDict | None = None
    #: The annotations of ServiceAccount ``<tool>`` when the spec asks to create it.
    service_account: dict[str, str] | None = None


def tool_objects(
    tool: ToolSpec, defaults: Defaults, namespace: str, part_of: str, *, image_known: bool = True
) -> ToolObjects:
    """A tool's Deployment, Service, claim, budget, autoscaler and policy specs (service
    mode), or its container (sidecar mode); without the image's labels while the image is an
    Output not resolved yet (``image_known=False``), the same whichever value it takes."""
    labels = contract.tool_labels(tool, part_of, image_known=image_known)
    env, _ = contract.workload_env(tool.name, tool.env, tool.secret_env)
    seen = defaults.observability
    otlp = seen.otlp_endpoint if seen else None
    sampler = (seen.traces_sampler, seen.traces_sampler_arg) if seen else (None, None)
    user = set(tool.env) | set(tool.secret_env)
    env += [
        v
        for v in contract.otel_env(otlp, f"tool-{tool.name}", namespace, tool.name, sampler)
        if v.name not in user
    ]
    claim = tool_claim(tool)
    volumes: list[VolumeDict] = []
    mounts: list[VolumeMountDict] = []
    if claim is not None and tool.persistence is not None:
        volumes.append({"name": DATA_VOLUME, "persistentVolumeClaim": {"claimName": claim[0]}})
        mounts.append({"name": DATA_VOLUME, "mountPath": tool.persistence.mount_path})
    security = overlay(defaults.security, tool.security)
    main = tool_container(
        tool,
        env=env,
        resources=overlay(defaults.resources, tool.resources),
        security=security,
        image_pull_policy=tool.image_pull_policy or defaults.image_pull_policy,
        mounts=[*mounts, *user_mounts(tool)],
    )
    if tool.transport == "stdio":
        main = stdio_bridge.bridged(main, tool)
        volumes.append(stdio_bridge.home_volume())
    if tool.deployment_mode == "sidecar":
        return ToolObjects(main, None, None, None, None)
    selector = contract.tool_selector(tool.name)
    pod = pod_spec(tool, containers=[main], volumes=volumes, security=security)
    if tool.init_containers:
        pod["initContainers"] = init_containers(tool, defaults, security)
    deployment = deployment_spec(tool, selector, labels, dict(tool.annotations), pod)
    if claim is not None:
        # A ReadWriteOnce volume cannot be attached to the old and new pod at once.
        deployment["strategy"] = {"type": "Recreate"}
    sync_from = defaults.schema_sync_from if tool.schema_sync.enabled else []
    ingress = (
        names.tool_ingress_name(tool.name),
        policies.tool_ingress_spec(tool.name, namespace, tool.port, tool.allow_from, sync_from),
    )
    egress = None
    if (tool.egress or defaults.egress) == "restricted":
        egress = (
            names.tool_egress_name(tool.name),
            policies.egress_spec(selector, (), tool.egress_to),
        )
    return ToolObjects(
        main,
        claim,
        deployment,
        tool_service_spec(tool),
        ingress,
        egress,
        disruption_budget_spec(tool, selector),
        autoscaler_spec(tool.name, tool.autoscaling) if tool.autoscaling else None,
        service_account_annotations(tool),
    )


def tool_claim(tool: ToolSpec) -> tuple[str, PersistentVolumeClaimSpecDict] | None:
    """The PersistentVolumeClaim ``<tool>-data`` of a service-mode tool with persistence."""
    if tool.persistence is None or tool.deployment_mode != "service":
        return None
    spec: PersistentVolumeClaimSpecDict = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": tool.persistence.size}},
    }
    if tool.persistence.storage_class_name:
        spec["storageClassName"] = tool.persistence.storage_class_name
    return f"{tool.name}-data", spec


def tool_service_spec(tool: ToolSpec) -> ServiceSpecDict:
    """The Service in front of a service-mode tool (ClusterIP unless ``service.type``): port
    ``mcp``."""
    return {
        "type": tool.service.type if tool.service is not None else "ClusterIP",
        "selector": contract.tool_selector(tool.name),
        "ports": [{"name": "mcp", "port": tool.port, "targetPort": "mcp", "protocol": "TCP"}],
    }


def agent_pod(
    agent: AgentSpec,
    defaults: Defaults,
    env: Sequence[contract.EnvVar],
    sidecars: Sequence[ContainerDict],
) -> PodSpecDict:
    """The agent's pod: its container with config.yaml mounted, each sidecar tool with the
    shared workspace and a ``/tmp`` of its own, and the init container that copies the
    workspace's initial files.

    Native sidecars (the default) are init containers with ``restartPolicy: Always`` and a
    startup probe on the tool's health path: the agent container starts once every one of
    them is ready. ``defaults.sidecarStyle: container`` keeps plain containers (< 1.29).
    """
    security = overlay(defaults.security, agent.security)
    mounts: list[VolumeMountDict] = [
        {"name": CONFIG_VOLUME, "mountPath": names.CONFIG_DIR, "readOnly": True}
    ]
    volumes: list[VolumeDict] = [config_volume(agent.name)]
    shared: VolumeMountDict = {"name": WORKSPACE_VOLUME, "mountPath": workspace.mount_path(agent)}
    if agent.workspace is not None:
        mounts.append(shared)
        volumes += workspace.volumes(agent)
    elif sidecars:
        mounts.append(shared)
        volumes.append({"name": WORKSPACE_VOLUME, "emptyDir": {}})
    main = container(
        agent,
        env=env,
        resources=overlay(defaults.resources, agent.resources),
        security=security,
        image_pull_policy=agent.image_pull_policy or defaults.image_pull_policy,
        mounts=[*mounts, *user_mounts(agent)],
    )
    if agent.ports:
        main["ports"] = [
            {"name": p.name, "containerPort": p.port, "protocol": "TCP"} for p in agent.ports
        ]
    joined: list[ContainerDict] = []
    for index, sidecar in enumerate(sidecars):
        # Each sidecar gets its own /tmp (and a stdio bridge's HOME): the agent's scratch
        # files are not the tool's.
        member = copy.deepcopy(sidecar)
        mounts_of: list[VolumeMountDict] = []
        for mount in member["volumeMounts"]:
            if mount["name"] in SIDECAR_OWN_VOLUMES:
                own = f"sidecar-{index}-{mount['name']}"
                volumes.append({"name": own, "emptyDir": {}})
                mount: VolumeMountDict = {**mount, "name": own}
            mounts_of.append(mount)
        member["volumeMounts"] = [*mounts_of, shared]
        if defaults.sidecar_style == "native":
            member = native_sidecar(member)
        joined.append(member)
    files = workspace.init_container(
        agent,
        container_security_context(security),
        resources_manifest(workspace.INIT_RESOURCES),
    )
    # The files first, so the user's init containers and the sidecars find them in place.
    init = [files] if files is not None else []
    init += init_containers(agent, defaults, security, [mounts[0]], main.get("env", ()))
    if defaults.sidecar_style == "native":
        pod = pod_spec(agent, containers=[main], volumes=volumes, security=security)
        init += joined
    else:
        pod = pod_spec(agent, containers=[main, *joined], volumes=volumes, security=security)
    if init:
        pod["initContainers"] = init
    return pod


def native_sidecar(member: ContainerDict) -> ContainerDict:
    """A sidecar container as a native sidecar: restarted like a container, and holding the
    agent back until its startup probe (the readiness check, by default) passes."""
    out: ContainerDict = {**member, "restartPolicy": "Always"}
    if "startupProbe" not in out:
        readiness = member.get("readinessProbe", {})
        handler: ProbeDict = {}
        if "httpGet" in readiness:
            handler["httpGet"] = readiness["httpGet"]
        if "tcpSocket" in readiness:
            handler["tcpSocket"] = readiness["tcpSocket"]
        if "exec" in readiness:
            handler["exec"] = readiness["exec"]
        out["startupProbe"] = {**handler, **STARTUP_PROBE}
    return out


def config_volume(agent: str) -> VolumeDict:
    """The volume holding the agent's ConfigMap, mounted read-only at ``/etc/agent``."""
    return {
        "name": CONFIG_VOLUME,
        "configMap": {
            "name": names.config_map_name(agent),
            "items": [{"key": "config.yaml", "path": "config.yaml"}],
        },
    }


def namespace_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """A created namespace's labels: Kubernetes then refuses any pod that is not
    restricted-compliant."""
    return {
        **labels,
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
    }


def agent_service_spec(agent: AgentSpec) -> ServiceSpecDict | None:
    """ClusterIP Service ``<agent>`` publishing the agent's ``ports``, or None without any."""
    if not agent.ports:
        return None
    return {
        "type": "ClusterIP",
        "selector": contract.agent_selector(agent.name),
        "ports": [
            {"name": p.name, "port": p.port, "targetPort": p.name, "protocol": "TCP"}
            for p in agent.ports
        ],
    }
