"""LanguageCluster: one namespace's tools, agents, secrets and defaults from a single spec."""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, overload

import pulumi
import pulumi_kubernetes as k8s
from typing_extensions import Unpack

from langop_infra.components import _inputs as inputs
from langop_infra.components._agent_plan import AgentPlan, ToolIndex
from langop_infra.components._http_tool import HttpTool, HttpToolPlan
from langop_infra.components._k8s import (
    aliased,
    child_options,
    component_error,
    network_policy,
    object_meta,
    opaque_secret,
    type_token,
)
from langop_infra.components.agent import LanguageAgent
from langop_infra.components.args import LanguageClusterArgs
from langop_infra.components.model import LanguageModel, ModelPlan, register_gateway
from langop_infra.components.tool import LanguageTool, ToolPlan, sync_auth, sync_headers
from langop_infra.config import _names as names
from langop_infra.config._http_tool import with_http_tools
from langop_infra.config._managed_memory import find_memory
from langop_infra.config.agent import AgentSpec, model_refs
from langop_infra.config.checks._checked import CheckedCluster, deploy_warnings
from langop_infra.config.checks._collisions import secret_namespaces
from langop_infra.config.checks._gateway_routes import gateway_namespaces
from langop_infra.config.checks._references import (
    cluster_namespaces,
    external_reference_problems,
    external_sidecar_problems,
)
from langop_infra.config.checks._validation import check_cluster
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract, _pods as pods, _policies as policies
from langop_infra.manifests._a2a import peer_targets
from langop_infra.manifests._agent_features import AgentFeatures

if TYPE_CHECKING:
    ClusterInput = LanguageClusterArgs | ClusterSpec | CheckedCluster | None
else:
    ClusterInput = LanguageClusterArgs  # what Pulumi's analyzer reads as the component's inputs


class LanguageCluster(pulumi.ComponentResource):
    """A namespace (created, or adopted with ``createNamespace: false``) with its Secrets,
    every tool, then every agent with its tool references resolved by name.

    ``external_tools`` (Python only) are LanguageTools of other namespaces that agents here
    may reference. Python programs find the built components in ``tools`` and ``agents``,
    and may pass a ``ClusterSpec``, or a ``CheckedCluster`` (``check_cluster``'s, which is
    not checked again), as ``args``.
    """

    namespace: pulumi.Output[str]
    """The cluster's namespace."""
    tool_endpoints: pulumi.Output[dict[str, str]]
    """Each tool's endpoint, by tool name."""
    agent_configs: pulumi.Output[dict[str, str]]
    """Each agent's config.yaml, by agent name."""
    model_endpoints: pulumi.Output[dict[str, str]]
    """Where agents reach each model, by model name."""
    gateway_endpoint: pulumi.Output[str]
    """The model gateway's URL, or an empty string without a gateway."""

    @overload
    def __init__(
        self,
        name: str,
        args: LanguageClusterArgs | ClusterSpec | CheckedCluster,
        opts: pulumi.ResourceOptions | None = None,
        *,
        external_tools: Sequence[LanguageTool] = (),
        external_targets: Sequence[contract.ToolTarget] = (),
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        args: None = None,
        opts: pulumi.ResourceOptions | None = None,
        *,
        external_tools: Sequence[LanguageTool] = (),
        external_targets: Sequence[contract.ToolTarget] = (),
        **kwargs: Unpack[LanguageClusterArgs],
    ) -> None: ...

    def __init__(
        self,
        name: str,
        args: ClusterInput = None,
        opts: pulumi.ResourceOptions | None = None,
        *,
        external_tools: Sequence[LanguageTool] = (),
        external_targets: Sequence[contract.ToolTarget] = (),
        **kwargs: Any,
    ) -> None:
        checked = _check(name, args, kwargs)
        cluster = checked.deployed
        external: dict[tuple[str, str], Any] = {(t.namespace, t.name): t for t in external_targets}
        external.update({(t.target.namespace, t.target.name): t for t in external_tools})
        problems = [
            Problem(
                f"external_tools[{i}]",
                f"LanguageTool {t.spec.name!r} takes its namespace from an Output; a "
                "LanguageCluster needs its tools' namespaces when the program runs: give "
                "that tool a plain namespace",
            )
            for i, t in enumerate(external_tools)
            if getattr(t, "namespace_known", True) is False
        ]
        problems += external_reference_problems(cluster, external.keys())
        problems += external_sidecar_problems(
            cluster, {k: getattr(t, "target", t) for k, t in external.items()}
        )
        if problems:
            raise SpecError(problems, subject=f"LanguageCluster {name!r}")
        super().__init__(
            type_token("LanguageCluster"), name, None, aliased(opts, "LanguageCluster")
        )
        self.spec = cluster
        for finding in deploy_warnings(checked):
            pulumi.log.warn(f"{finding.path}: {finding.message}")
        ns = cluster.namespace
        labels = contract.recommended_labels(ns, "cluster", cluster.part_of or ns)
        spaces = sorted(cluster_namespaces(cluster), key=lambda n: (n != ns, n))
        self._register_namespaces(cluster, spaces, labels, opts)
        child = child_options(self, opts, list(self.namespace_resources.values()))
        self._register_secrets(cluster, labels, child)
        built = {
            (plan.namespace, plan.spec.name): LanguageTool._from_plan(
                f"{plan.namespace}/{plan.spec.name}", plan, child
            )
            for plan in tool_plans(cluster, self.secrets_by_namespace)
        }
        # By name for the cluster's own namespace, by "<namespace>/<name>" elsewhere.
        self.tools = {_key(ns, space, name): tool for (space, name), tool in built.items()}
        self._register_models(cluster, child)
        self.http_tools = {
            _key(ns, str(plan.namespace), plan.spec.name): HttpTool._from_plan(
                f"{plan.namespace}/{plan.spec.name}", plan, child
            )
            for plan in http_tool_plans(cluster)
        }
        self._register_agents(cluster, external, built, child)
        self.default_deny = None
        self.default_denies = {}
        if cluster.defaults.default_deny:
            for space in spaces:
                self.default_denies[space] = network_policy(
                    names.DEFAULT_DENY_NAME, space, labels, policies.default_deny_spec(), child
                )
            self.default_deny = self.default_denies[ns]
        self._export(ns)

    def _register_namespaces(
        self,
        cluster: ClusterSpec,
        spaces: list[str],
        labels: dict[str, str],
        opts: pulumi.ResourceOptions | None,
    ) -> None:
        self.namespace_resources: dict[str, k8s.core.v1.Namespace] = {}
        if cluster.create_namespace:
            for space in spaces:
                self.namespace_resources[space] = k8s.core.v1.Namespace(
                    space,
                    metadata=object_meta(space, None, pods.namespace_labels(labels)),
                    opts=child_options(self, opts),
                )

    def _register_secrets(
        self, cluster: ClusterSpec, labels: dict[str, str], child: pulumi.ResourceOptions
    ) -> None:
        # A Secret under `secrets` lands in every namespace whose workloads read it.
        self.secrets_by_namespace: dict[str, dict[str, k8s.core.v1.Secret]] = {}
        for secret, where in sorted(secret_namespaces(cluster).items()):
            for space in where:
                self.secrets_by_namespace.setdefault(space, {})[secret] = opaque_secret(
                    f"{space}/{secret}",
                    name=secret,
                    namespace=space,
                    labels=labels,
                    values=cluster.secrets[secret],
                    opts=child,
                )
        self.secrets = self.secrets_by_namespace.get(cluster.namespace, {})

    def _register_models(self, cluster: ClusterSpec, child: pulumi.ResourceOptions) -> None:
        ns = cluster.namespace
        self.models = {
            m.name: LanguageModel._from_plan(
                f"{ns}/{m.name}", ModelPlan(m, ns, cluster.defaults), child
            )
            for m in cluster.models
        }
        # One gateway per namespace whose agents use it (config/checks/_gateway_routes).
        self.gateways = {
            space: gateway
            for space in gateway_namespaces(cluster)
            if (
                gateway := register_gateway(
                    cluster.models,
                    cluster.defaults,
                    namespace=space,
                    part_of=cluster.part_of or ns,
                    secrets=self.secrets_by_namespace.get(space, {}),
                    opts=child,
                )
            )
            is not None
        }
        self.gateway = self.gateways.get(ns)

    def _register_agents(
        self,
        cluster: ClusterSpec,
        external: dict[tuple[str, str], Any],
        built: dict[tuple[str, str], LanguageTool],
        child: pulumi.ResourceOptions,
    ) -> None:
        index: dict[tuple[str, str], tuple[contract.ToolTarget, Any]] = {
            key: (tool, None) if isinstance(tool, contract.ToolTarget) else (tool.target, tool)
            for key, tool in external.items()
        }
        index.update({key: (t.target, t) for key, t in built.items()})
        self.agents = {}
        for agent in cluster.agents:
            space = agent.namespace or cluster.namespace
            plan = agent_plan(cluster, agent, index, self.secrets_by_namespace.get(space, {}))
            self.agents[_key(cluster.namespace, space, agent.name)] = LanguageAgent._from_plan(
                f"{space}/{agent.name}", plan, child
            )

    def _export(self, ns: str) -> None:
        self.namespace = pulumi.Output.from_input(ns)
        self.tool_endpoints = pulumi.Output.all(**{n: t.endpoint for n, t in self.tools.items()})
        self.agent_configs = pulumi.Output.all(**{n: a.config_yaml for n, a in self.agents.items()})
        self.model_endpoints = pulumi.Output.all(**{n: m.endpoint for n, m in self.models.items()})
        self.gateway_endpoint = pulumi.Output.from_input(
            self.gateway.endpoint if self.gateway is not None else ""
        )
        self.register_outputs(
            {
                "namespace": self.namespace,
                "tool_endpoints": self.tool_endpoints,
                "agent_configs": self.agent_configs,
                "model_endpoints": self.model_endpoints,
                "gateway_endpoint": self.gateway_endpoint,
            }
        )


def _check(name: str, args: object, fields: Mapping[str, object]) -> CheckedCluster:
    """The document, validated here unless it comes checked already (the stack program's)."""
    if isinstance(args, CheckedCluster) and not fields:
        return args
    if isinstance(args, ClusterSpec) and not fields:
        return check_cluster(args)
    if isinstance(args, CheckedCluster):  # with changes: a new document
        args = args.spec
    data = inputs.merged_input(args, fields, ClusterSpec)
    with component_error(f"LanguageCluster {name!r}"):
        return check_cluster(data)


def _key(home: str, namespace: str, name: str) -> str:
    return name if namespace == home else f"{namespace}/{name}"


def tool_plans(
    cluster: ClusterSpec, secrets: Mapping[str, Mapping[str, Any]] | None = None
) -> list[ToolPlan]:
    """Each tool of a validated cluster, in its namespace, with its schema-sync headers and
    the cluster's registered Secrets there (``secrets``, by namespace)."""
    ns = cluster.namespace
    return [
        ToolPlan(
            tool.model_copy(update={"namespace": tool.namespace or ns}),
            cluster.defaults,
            cluster.part_of or ns,
            sync_headers(tool, cluster.secrets),
            sync_auth(tool, cluster.secrets),
            allowed_by_agents(cluster, tool.namespace or ns, tool.name),
            cluster_secrets=read_secrets(tool, (secrets or {}).get(tool.namespace or ns, {})),
        )
        for tool in cluster.tools
    ]


def read_secrets(tool: ToolSpec, managed: Mapping[str, Any]) -> tuple[Any, ...]:
    """The registered Secrets of the cluster (``managed``, by name) the tool's env reads."""
    env = contract.workload_env(tool.name, tool.env, tool.secret_env)[0]
    return tuple(managed[n] for n in contract.secret_names_used(env) if n in managed)


def allowed_by_agents(cluster: ClusterSpec, namespace: str, tool: str) -> dict[str, list[str]]:
    """``{"<namespace>/<agent>": allowedTools}`` of the agents whose references scope ``tool``."""
    found = {}
    for agent in cluster.agents:
        agent_ns = agent.namespace or cluster.namespace
        for ref in agent.tools:
            if (
                ref.enabled
                and ref.allowed_tools is not None
                and ref.name == tool
                and (ref.namespace or agent_ns) == namespace
            ):
                found[f"{agent_ns}/{agent.name}"] = list(ref.allowed_tools)
    return found


def http_tool_plans(cluster: ClusterSpec) -> list[HttpToolPlan]:
    """Each HttpTool of a validated cluster, in its namespace."""
    ns = cluster.namespace
    return [
        HttpToolPlan(tool, tool.namespace or ns, cluster.part_of or ns)
        for tool in cluster.http_tools
    ]


def agent_plan(
    cluster: ClusterSpec,
    agent: AgentSpec,
    index: ToolIndex,
    secrets: Mapping[str, k8s.core.v1.Secret],
) -> AgentPlan:
    """An agent of a validated cluster with its references resolved through ``index``
    (validation has checked that each one resolves)."""
    ns = agent.namespace or cluster.namespace
    targets, tools = [], []
    for ref in agent.tools:
        if not ref.enabled:
            continue
        found = index.get((ref.namespace or ns, ref.name))
        if found is None:  # parse_cluster has refused dangling references
            raise AssertionError(f"unresolved tool {ref.name!r}")
        # parse_cluster has refused a sidecar that keeps its secret in another namespace.
        target = found[0]
        targets.append(dataclasses.replace(target, required=ref.required))
        tools.append(found[1])
    spec = with_http_tools(cluster.http_tools, agent, cluster.namespace)
    spec = spec.model_copy(update={"namespace": ns})
    models = {m.name: m for m in cluster.models}
    used = [models[ref.name] for ref in model_refs(agent, models)]
    personas = {p.name: p for p in cluster.personas}
    persona = personas.get(agent.persona) if isinstance(agent.persona, str) else None
    return AgentPlan(
        spec,
        cluster.defaults,
        cluster.part_of or ns,
        targets,
        tools,
        secrets,
        used,
        persona,
        features=agent_features(cluster, agent),
    )


def agent_features(cluster: ClusterSpec, agent: AgentSpec) -> AgentFeatures:
    """An agent's A2A peers (agents of the cluster, or remote) and its memory."""
    home = cluster.namespace
    agents = {(a.namespace or home, a.name): a for a in cluster.agents}
    peers = peer_targets(agent, agent.namespace or home, agents)
    return AgentFeatures(tuple(peers), find_memory(cluster.memories, agent, home))
