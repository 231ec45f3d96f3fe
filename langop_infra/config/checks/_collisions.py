"""Every object a cluster document generates, by (kind, namespace, name), and the clashes.

Generated names are built to be injective (see :mod:`langop_infra.config._names`), yet user-chosen
names meet them: a tool named ``default-deny`` has policy ``default-deny-ingress``, a secret
under ``secrets`` may be called ``<agent>-env``. Two objects of one kind, namespace and name
would make a real deploy fail; validation names both sources instead.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from langop_infra.config import _names as names
from langop_infra.config._fields import SecretSource
from langop_infra.config._http_tool import with_http_tools
from langop_infra.config._pod import WorkloadSpec
from langop_infra.config.agent import AgentSpec, agent_headers
from langop_infra.config.checks._gateway_routes import (
    agent_model_secret_names,
    gateway_namespaces,
    gateway_secret_names,
)
from langop_infra.config.checks._secret_refs import sync_only_secrets
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, join_path

Generated = tuple[str, str, str, str]  # kind, namespace, name, source path


def secret_namespaces(cluster: ClusterSpec) -> dict[str, list[str]]:
    """Each ``secrets`` entry's namespaces: the cluster's, and every other namespace whose
    workloads (a model gateway included) read it through ``secretKeyRef`` (a Pod can only
    read its own namespace's).
    An entry only schema sync reads lands in none (:func:`sync_only_secrets`)."""
    sync_only = sync_only_secrets(cluster)
    found = {name: {cluster.namespace} for name in cluster.secrets if name not in sync_only}
    agents = [with_http_tools(cluster.http_tools, a, cluster.namespace) for a in cluster.agents]
    for workload in [*cluster.tools, *agents]:
        ns = workload.namespace or cluster.namespace
        for ref in _secret_names(workload):
            if ref in found:
                found[ref].add(ns)
    # Model keys: each gateway's in its namespace, each agent's in the agent's.
    for agent in cluster.agents:
        for ref in agent_model_secret_names(cluster, agent):
            if ref in found:
                found[ref].add(agent.namespace or cluster.namespace)
    for space in gateway_namespaces(cluster):
        for ref in gateway_secret_names(cluster):
            if ref in found:
                found[ref].add(space)
    return {name: sorted(spaces) for name, spaces in found.items()}


def _secret_names(workload: WorkloadSpec) -> Iterator[str]:
    for value in workload.secret_env.values():
        if isinstance(value, SecretSource):
            yield value.secret_key_ref.name
    for source in workload.env_from:
        if source.secret_ref is not None:
            yield source.secret_ref.name
    if isinstance(workload, AgentSpec):
        for _, _, header in agent_headers(workload):
            if header.value_from is not None:
                yield header.value_from.secret_key_ref.name
        for webhook in workload.webhook_tools:
            if webhook.authentication.secret_ref is not None:
                yield webhook.authentication.secret_ref.name


def _owns_secret(workload: WorkloadSpec) -> bool:
    owned = any(not isinstance(v, SecretSource) for v in workload.secret_env.values())
    if isinstance(workload, AgentSpec):
        owned = owned or any(h.secret is not None for _, _, h in agent_headers(workload))
    return owned


def _workload_objects(
    workload: WorkloadSpec, ns: str, where: str, restricted: bool
) -> list[Generated]:
    name = workload.name
    made = [("Deployment", ns, name, where)]
    if _owns_secret(workload):
        made.append(("Secret", ns, names.workload_secret_name(name), where))
    if restricted:
        made.append(("NetworkPolicy", ns, names.agent_egress_name(name), where))
    if workload.autoscaling is not None:
        made.append(("HorizontalPodAutoscaler", ns, name, where))
    account = getattr(workload, "service_account", None)
    if account is not None and account.create:
        made.append(("ServiceAccount", ns, name, where))
    return made


def generated_objects(
    cluster: ClusterSpec, tool_index: Sequence[int], agent_index: Sequence[int]
) -> list[Generated]:
    """Every generated object with its source, in the order clashes are reported at the later
    one: the default-deny policies, the workloads, then the ``secrets``."""
    ns, defaults = cluster.namespace, cluster.defaults
    spaces = sorted({ns, *(w.namespace for w in [*cluster.tools, *cluster.agents] if w.namespace)})
    made: list[Generated] = []
    if defaults.default_deny:
        made += [
            ("NetworkPolicy", n, names.DEFAULT_DENY_NAME, "defaults.defaultDeny") for n in spaces
        ]
    by_key = {(t.namespace or ns, t.name): t for t in cluster.tools}
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        made += _tool_objects(tool, tool.namespace or ns, f"tools[{i}]", cluster)
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        made += _agent_objects(agent, agent.namespace or ns, f"agents[{i}]", cluster, by_key)
    for secret, where in secret_namespaces(cluster).items():
        made += [("Secret", n, secret, f"secrets.{secret}") for n in where]
    return made


def _tool_objects(tool: ToolSpec, ns: str, where: str, cluster: ClusterSpec) -> list[Generated]:
    if tool.deployment_mode == "sidecar":
        return []
    restricted = (tool.egress or cluster.defaults.egress) == "restricted"
    made = _workload_objects(tool, ns, where, restricted)
    made += [
        ("Service", ns, tool.name, where),
        ("NetworkPolicy", ns, names.tool_ingress_name(tool.name), where),
    ]
    if tool.persistence is not None:
        made.append(("PersistentVolumeClaim", ns, f"{tool.name}-data", where))
    if tool.disruption_budget is not None or max(tool.replicas, _min(tool)) > 1:
        made.append(("PodDisruptionBudget", ns, tool.name, where))
    return made


def _agent_objects(
    agent: AgentSpec,
    ns: str,
    where: str,
    cluster: ClusterSpec,
    tools: dict[tuple[str, str], ToolSpec],
) -> list[Generated]:
    restricted = (agent.egress or cluster.defaults.egress) == "restricted"
    made = _workload_objects(agent, ns, where, restricted)
    made += [
        ("ConfigMap", ns, names.config_map_name(agent.name), where),
        ("NetworkPolicy", ns, names.agent_ingress_name(agent.name), where),
    ]
    if agent.ports:
        made.append(("Service", ns, agent.name, where))
    if agent.workspace is not None:
        made.append(("PersistentVolumeClaim", ns, names.workspace_claim_name(agent.name), where))
        if agent.workspace.initial_files:
            made.append(("ConfigMap", ns, names.initial_files_name(agent.name), where))
    if agent.disruption_budget is not None or max(agent.replicas, _min(agent)) > 1:
        made.append(("PodDisruptionBudget", ns, agent.name, where))
    for j, ref in enumerate(agent.tools):
        target_ns = ref.namespace or ns
        tool = tools.get((target_ns, ref.name))
        service = tool is None or tool.deployment_mode == "service"
        if ref.enabled and target_ns != ns and service:
            policy = names.cross_namespace_name(ref.name, ns, agent.name)
            made.append(("NetworkPolicy", target_ns, policy, f"{where}.tools[{j}]"))
    return made


def _min(workload: WorkloadSpec) -> int:
    return workload.autoscaling.min_replicas if workload.autoscaling is not None else 0


def name_clashes(
    cluster: ClusterSpec, path: str, tool_index: Sequence[int], agent_index: Sequence[int]
) -> list[Problem]:
    """Two generated objects with one kind, namespace and name, naming both sources."""
    first: dict[tuple[str, str, str], str] = {}
    problems: list[Problem] = []
    for kind, ns, name, source in generated_objects(cluster, tool_index, agent_index):
        key = (kind, ns, name)
        if key not in first:
            first[key] = source
            continue
        if first[key] == source:
            continue
        problems.append(
            Problem(
                join_path(path, f"{source}.name" if source.endswith("]") else source),
                f"{kind} {name!r} in namespace {ns!r} would be generated twice: by "
                f"{join_path(path, first[key])} and by {join_path(path, source)}; rename one",
                "langop_name_clash",
            )
        )
    return problems
