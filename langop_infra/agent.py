"""LanguageAgent: an agent Deployment wired to its tools, MCP servers and webhook tools."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
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
from langop_infra.specs import AgentSpec, Defaults, ToolSpec, overlay
from langop_infra.tool import LanguageTool
from langop_infra.validation import parse_agent, sidecar_problems

ToolIndex = Mapping[tuple[str, str], LanguageTool]


def agent_spec_from(
    name: str, spec: AgentSpec | Mapping[str, Any] | None, fields: dict
) -> tuple[AgentSpec, dict[tuple[str, str], LanguageTool]]:
    """The validated spec, and the LanguageTool objects given directly in ``tools``."""
    if isinstance(spec, AgentSpec) and not fields:
        return spec, {}
    data = (
        spec.model_dump(by_alias=False, exclude_unset=True)
        if isinstance(spec, AgentSpec)
        else dict(spec or {})
    )
    data.update(fields)
    data.setdefault("name", name)
    given: dict[tuple[str, str], LanguageTool] = {}
    refs = []
    for item in data.get("tools") or []:
        if isinstance(item, LanguageTool):
            given[(item.target.namespace, item.spec.name)] = item
            refs.append({"name": item.spec.name, "namespace": item.target.namespace})
        else:
            refs.append(item)
    if "tools" in data:
        data["tools"] = refs
    return parse_agent(data), given


def resolve_tools(
    agent: AgentSpec, namespace: str, index: ToolIndex
) -> tuple[list[contract.ToolTarget], list[LanguageTool]]:
    """Targets of the enabled references, in order, and their tools; every miss at once."""
    targets: list[contract.ToolTarget] = []
    tools: list[LanguageTool] = []
    resolved: list[ToolSpec | None] = []
    problems = []
    for i, ref in enumerate(agent.tools):
        tool = index.get((ref.namespace or namespace, ref.name)) if ref.enabled else None
        resolved.append(tool.spec if tool is not None else None)
        if not ref.enabled:
            continue
        if tool is None:
            problems.append(
                Problem(
                    f"tools[{i}].name",
                    f"no LanguageTool {ref.name!r} in namespace {ref.namespace or namespace!r}; "
                    "pass the LanguageTool object itself, declare the tool in the same "
                    "LanguageCluster, or set enabled: false",
                )
            )
            continue
        sidecar_elsewhere = tool.target.deployment_mode == "sidecar" and (
            tool.target.namespace != namespace
        )
        if sidecar_elsewhere and tool.secret is not None:
            problems.append(
                Problem(
                    f"tools[{i}]",
                    f"sidecar {ref.name!r} keeps its secret env in namespace "
                    f"{tool.target.namespace!r}; declare it in {namespace!r} or use "
                    "secretKeyRef",
                )
            )
        targets.append(dataclasses.replace(tool.target, required=ref.required))
        tools.append(tool)
    problems += sidecar_problems(agent, resolved, "")
    if problems:
        raise SpecError(problems)
    return targets, tools


class LanguageAgent(pulumi.ComponentResource):
    """An agent whose pods find their tools at start: ``MCP_SERVERS``, ``AGENT_MCP_SERVERS``,
    ``AGENT_WEBHOOK_TOOLS``, header env vars and ``/etc/agent/config.yaml``.

    ``tools`` may name LanguageTools (resolved through ``tool_index``, which LanguageCluster
    fills) or hold LanguageTool objects. Sidecar tools join the pod with a shared workspace.
    A ``required`` reference makes the Deployment wait for the tool.
    """

    spec: AgentSpec
    targets: list[contract.ToolTarget]
    config_yaml: pulumi.Output[str]
    mcp_servers: pulumi.Output[str]
    deployment: k8s.apps.v1.Deployment
    config_map: k8s.core.v1.ConfigMap
    secret: k8s.core.v1.Secret | None
    network_policies: list[k8s.networking.v1.NetworkPolicy]

    def __init__(
        self,
        name: str,
        spec: AgentSpec | Mapping[str, Any] | None = None,
        *,
        tool_index: ToolIndex | None = None,
        managed_secrets: Mapping[str, k8s.core.v1.Secret] | None = None,
        defaults: Defaults | None = None,
        part_of: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
        **fields: Any,
    ) -> None:
        agent, given = agent_spec_from(name, spec, fields)
        defaults = defaults or Defaults()
        problems = deploy_problems(agent, defaults)
        if problems:
            raise SpecError(problems)
        namespace = agent.namespace or contract.DEFAULT_NAMESPACE
        targets, tools = resolve_tools(agent, namespace, {**(tool_index or {}), **given})
        part_of = part_of or namespace
        super().__init__("langop:index:LanguageAgent", name, None, opts)
        child = child_options(self, opts)
        key = f"{namespace}/{agent.name}"
        self.spec = agent
        self.targets = targets

        labels = contract.agent_labels(agent, part_of)
        pod_labels = contract.agent_labels(agent, part_of, targets, namespace)
        document = contract.agent_config(agent, targets)
        config_text = contract.config_yaml(document)
        env, owned = contract.agent_env(agent, targets)

        self.config_map = k8s.core.v1.ConfigMap(
            f"{key}-config",
            metadata=object_meta(contract.config_map_name(agent.name), namespace, labels),
            data={"config.yaml": config_text},
            opts=child,
        )
        self.secret = workload_secret(key, agent.name, namespace, labels, owned, child)

        security = overlay(defaults.security, agent.security)
        resources = overlay(defaults.resources, agent.resources)
        image_pull_policy = agent.image_pull_policy or defaults.image_pull_policy
        mounts = [{"name": "config", "mountPath": contract.CONFIG_DIR, "readOnly": True}]
        volumes: list[dict[str, Any]] = [
            {
                "name": "config",
                "configMap": {
                    "name": contract.config_map_name(agent.name),
                    "items": [{"key": "config.yaml", "path": "config.yaml"}],
                },
            }
        ]
        sidecars = [t.sidecar_container for t in tools if t.sidecar_container is not None]
        workspace = {"name": pods.WORKSPACE_VOLUME, "mountPath": agent.workspace_path}
        if sidecars:
            mounts.append(workspace)
            volumes.append({"name": pods.WORKSPACE_VOLUME, "emptyDir": {}})
        containers = [
            pods.container(
                agent,
                env=env,
                resources=resources,
                security=security,
                image_pull_policy=image_pull_policy,
                mounts=mounts,
            )
        ]
        for index, sidecar in enumerate(sidecars):
            # Each sidecar gets its own /tmp: the agent's scratch files are not the tool's.
            tmp = f"sidecar-{index}-tmp"
            joined = copy.deepcopy(sidecar)
            joined["volumeMounts"] = [
                {**m, "name": tmp} if m["name"] == pods.TMP_VOLUME else m
                for m in joined["volumeMounts"]
            ] + [workspace]
            containers.append(joined)
            volumes.append({"name": tmp, "emptyDir": {}})

        secrets = [self.secret] if self.secret is not None else []
        used = set(contract.secret_names_used(env))
        secrets += [s for n, s in sorted((managed_secrets or {}).items()) if n in used]
        secrets += [t.secret for t in tools if t.sidecar_container is not None and t.secret]
        annotations = {
            **agent.annotations,
            contract.CONFIG_CHECKSUM_ANNOTATION: contract.checksum(config_text),
        }
        waits_for = [
            dep
            for t, target in zip(tools, targets, strict=True)
            if target.required
            for dep in t.ready_dependencies
        ]
        self.deployment = k8s.apps.v1.Deployment(
            key,
            metadata=object_meta(agent.name, namespace, labels, agent.annotations),
            spec=pods.deployment_spec(
                agent.replicas,
                contract.agent_selector(agent.name),
                pod_labels,
                pod_annotations(annotations, secrets),
                pods.pod_spec(agent, containers=containers, volumes=volumes, security=security),
            ),
            opts=child_options(self, opts, waits_for),
        )
        self.network_policies = self._policies(
            agent, namespace, targets, labels, defaults, child, has_sidecars=bool(sidecars)
        )

        self.config_yaml = pulumi.Output.from_input(config_text)
        self.mcp_servers = pulumi.Output.from_input(contract.mcp_servers_env(targets))
        self.register_outputs({"config_yaml": self.config_yaml, "mcp_servers": self.mcp_servers})

    def _policies(
        self,
        agent: AgentSpec,
        namespace: str,
        targets: Sequence[contract.ToolTarget],
        labels: Mapping[str, str],
        defaults: Defaults,
        opts: pulumi.ResourceOptions,
        *,
        has_sidecars: bool,
    ) -> list[k8s.networking.v1.NetworkPolicy]:
        """Ingress into tools of other namespaces for this agent, restricted egress, and no
        ingress into a pod that carries sidecar tools."""
        made = []
        if has_sidecars:
            made.append(
                network_policy(
                    policies.agent_ingress_name(agent.name),
                    namespace,
                    labels,
                    policies.agent_ingress_spec(agent.name),
                    opts,
                )
            )
        for target in targets:
            if target.deployment_mode != "service" or target.namespace == namespace:
                continue
            made.append(
                network_policy(
                    policies.cross_namespace_name(target.name, namespace, agent.name),
                    target.namespace,
                    labels,
                    policies.cross_namespace_spec(target, namespace, agent.name),
                    opts,
                )
            )
        if (agent.egress or defaults.egress) == "restricted":
            made.append(
                network_policy(
                    policies.agent_egress_name(agent.name),
                    namespace,
                    labels,
                    policies.agent_egress_spec(agent.name, targets, agent.egress_to),
                    opts,
                )
            )
        return made
