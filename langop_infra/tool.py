"""LanguageTool: an MCP server as a Deployment + Service, or as a container for agent pods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import contract, pods, policies
from langop_infra.admission import deploy_problems
from langop_infra.errors import Problem, SpecError
from langop_infra.k8s import (
    child_options,
    network_policy,
    object_meta,
    pod_annotations,
    workload_secret,
)
from langop_infra.schema_sync import ToolSchemaSync
from langop_infra.specs import Defaults, ToolSpec, overlay
from langop_infra.validation import parse_tool

SecretValues = Mapping[str, Mapping[str, Any]]


def sync_headers(tool: ToolSpec, secret_values: SecretValues) -> dict[str, Any]:
    """Schema-sync headers with their values; a ``valueFrom`` must name a secret whose value
    this program holds (``langop-infra:secrets``), since ``pulumi up`` cannot read the
    cluster's Secrets."""
    headers: dict[str, Any] = {}
    problems = []
    for i, header in enumerate(tool.schema_sync.headers):
        if header.value is not None:
            headers[header.name] = header.value
        elif header.secret is not None:
            headers[header.name] = header.secret
        else:
            ref = header.value_from.secret_key_ref
            value = secret_values.get(ref.name, {}).get(ref.key)
            if value is None:
                problems.append(
                    Problem(
                        f"schemaSync.headers[{i}].valueFrom",
                        f"secret {ref.name!r} key {ref.key!r} is not declared under secrets; "
                        "schema sync can only send values this program holds",
                    )
                )
            headers[header.name] = value
    if problems:
        raise SpecError(problems)
    return headers


def tool_spec_from(name: str, spec: ToolSpec | Mapping[str, Any] | None, fields: dict) -> ToolSpec:
    """The validated spec from a spec object, a mapping and/or keyword fields."""
    if isinstance(spec, ToolSpec) and not fields:
        return spec
    data = (
        dict(spec.model_dump(by_alias=False, exclude_unset=True))
        if isinstance(spec, ToolSpec)
        else dict(spec or {})
    )
    data.update(fields)
    data.setdefault("name", name)
    return parse_tool(data)


class LanguageTool(pulumi.ComponentResource):
    """An MCP tool server, deployed per the LanguageTool contract.

    Service mode: Deployment ``<name>`` and ClusterIP Service ``<name>`` in the tool's
    namespace, endpoint ``http://<name>.<namespace>.svc.cluster.local:<port>``, and an ingress
    NetworkPolicy admitting only the agents that reference it. Sidecar mode: no workload of its
    own; ``sidecar_container`` and ``sidecar_volumes`` are embedded into each referencing
    agent's pod, endpoint ``http://localhost:<port>``.

    Validation happens before anything is registered: bad input raises ``SpecError`` naming
    every problem with its field path.
    """

    spec: ToolSpec
    target: contract.ToolTarget
    endpoint: pulumi.Output[str]
    service_name: pulumi.Output[str]
    namespace: pulumi.Output[str]
    deployment_mode: pulumi.Output[str]
    deployment: k8s.apps.v1.Deployment | None
    service: k8s.core.v1.Service | None
    secret: k8s.core.v1.Secret | None
    network_policy: k8s.networking.v1.NetworkPolicy | None
    persistent_volume_claim: k8s.core.v1.PersistentVolumeClaim | None
    sidecar_container: dict[str, Any] | None
    sidecar_volumes: list[dict[str, Any]]
    schema_sync: ToolSchemaSync | None
    tool_schemas: pulumi.Output[list]
    schema_hash: pulumi.Output[str]
    tool_names: pulumi.Output[list]
    phase: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        spec: ToolSpec | Mapping[str, Any] | None = None,
        *,
        defaults: Defaults | None = None,
        part_of: str | None = None,
        secret_values: SecretValues | None = None,
        opts: pulumi.ResourceOptions | None = None,
        **fields: Any,
    ) -> None:
        tool = tool_spec_from(name, spec, fields)
        headers = sync_headers(tool, secret_values or {})
        defaults = defaults or Defaults()
        problems = deploy_problems(tool, defaults)
        if problems:
            raise SpecError(problems)
        namespace = tool.namespace or contract.DEFAULT_NAMESPACE
        part_of = part_of or namespace
        super().__init__("langop:index:LanguageTool", name, None, opts)
        child = child_options(self, opts)
        key = f"{namespace}/{tool.name}"

        self.spec = tool
        self.target = contract.ToolTarget.of(tool, namespace)
        labels = contract.tool_labels(tool, part_of)
        env, owned = contract.workload_env(tool.name, tool.env, tool.secret_env)

        self.secret = workload_secret(key, tool.name, namespace, labels, owned, child)

        mounts: list[dict[str, Any]] = []
        volumes: list[dict[str, Any]] = []
        self.persistent_volume_claim = None
        if tool.persistence is not None and tool.deployment_mode == "service":
            claim = f"{tool.name}-data"
            claim_spec: dict[str, Any] = {
                "accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": tool.persistence.size}},
            }
            if tool.persistence.storage_class_name:
                claim_spec["storageClassName"] = tool.persistence.storage_class_name
            self.persistent_volume_claim = k8s.core.v1.PersistentVolumeClaim(
                f"{key}-data",
                metadata=object_meta(claim, namespace, labels),
                spec=claim_spec,
                opts=child,
            )
            volumes.append(
                {"name": pods.DATA_VOLUME, "persistentVolumeClaim": {"claimName": claim}}
            )
            mounts.append({"name": pods.DATA_VOLUME, "mountPath": tool.persistence.mount_path})

        security = overlay(defaults.security, tool.security)
        container = pods.tool_container(
            tool,
            env=env,
            resources=overlay(defaults.resources, tool.resources),
            security=security,
            image_pull_policy=tool.image_pull_policy or defaults.image_pull_policy,
            mounts=mounts,
        )

        self.deployment = self.service = self.network_policy = None
        self.sidecar_container = None
        self.sidecar_volumes = []
        if tool.deployment_mode == "sidecar":
            self.sidecar_container = container
        else:
            selector = contract.tool_selector(tool.name)
            pod = pods.pod_spec(tool, containers=[container], volumes=volumes, security=security)
            spec_data = pods.deployment_spec(
                tool.replicas,
                selector,
                labels,
                pod_annotations(tool.annotations, [self.secret] if self.secret else []),
                pod,
            )
            if self.persistent_volume_claim is not None:
                # A ReadWriteOnce volume cannot be attached to the old and new pod at once.
                spec_data["strategy"] = {"type": "Recreate"}
            self.deployment = k8s.apps.v1.Deployment(
                key,
                metadata=object_meta(tool.name, namespace, labels, tool.annotations),
                spec=spec_data,
                opts=child,
            )
            self.service = k8s.core.v1.Service(
                key,
                metadata=object_meta(tool.name, namespace, labels),
                spec={
                    "type": "ClusterIP",
                    "selector": selector,
                    "ports": [
                        {"name": "mcp", "port": tool.port, "targetPort": "mcp", "protocol": "TCP"}
                    ],
                },
                opts=child,
            )
            self.network_policy = network_policy(
                policies.tool_ingress_name(tool.name),
                namespace,
                labels,
                policies.tool_ingress_spec(tool.name, namespace, tool.port, tool.allow_from),
                child,
            )

        self.schema_sync = None
        if self.deployment is not None and tool.schema_sync.enabled:
            self.schema_sync = ToolSchemaSync(
                f"{key}-schema",
                {
                    "endpoint": self.target.endpoint,
                    "mcp_path": tool.mcp_path,
                    "access": tool.schema_sync.access or defaults.schema_sync_access,
                    "sync_url": tool.schema_sync.sync_url,
                    "namespace": namespace,
                    "service": tool.name,
                    "port": tool.port,
                    "timeout": tool.schema_sync.timeout,
                    "required": tool.schema_sync.required,
                    "headers": headers,
                    # The credentials the stack's kubernetes provider uses, for apiserver-proxy.
                    "kube_context": pulumi.Config("kubernetes").get("context"),
                    "kubeconfig": pulumi.Config("kubernetes").get("kubeconfig"),
                },
                opts=child_options(self, opts, [self.deployment, self.service]),
            )
            self.tool_schemas = self.schema_sync.tool_schemas
            self.schema_hash = self.schema_sync.schema_hash
            self.tool_names = self.schema_sync.tool_names
            self.phase = self.schema_sync.phase
        else:
            self.tool_schemas = pulumi.Output.from_input([])
            self.schema_hash = pulumi.Output.from_input("")
            self.tool_names = pulumi.Output.from_input([])
            self.phase = pulumi.Output.from_input("Disabled")

        self.endpoint = pulumi.Output.from_input(self.target.endpoint)
        self.service_name = pulumi.Output.from_input(tool.name)
        self.namespace = pulumi.Output.from_input(namespace)
        self.deployment_mode = pulumi.Output.from_input(tool.deployment_mode)
        self.register_outputs(
            {
                "endpoint": self.endpoint,
                "service_name": self.service_name,
                "namespace": self.namespace,
                "deployment_mode": self.deployment_mode,
                "tool_schemas": self.tool_schemas,
                "schema_hash": self.schema_hash,
                "tool_names": self.tool_names,
                "phase": self.phase,
            }
        )

    @property
    def ready_dependencies(self) -> list[pulumi.Resource]:
        """What an agent that requires this tool waits for: its workload, then its schema."""
        return [r for r in (self.deployment, self.service, self.schema_sync) if r is not None]
