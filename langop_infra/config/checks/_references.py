"""Tool references of agents: names that resolve, tools of other namespaces handed over,
and sidecars that can share one pod."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from langop_infra.config._fields import SecretSource
from langop_infra.config.agent import AgentSpec, ToolRef
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, join_path


def reference_problems(
    refs: list[tuple[int, ToolRef]], namespace: str | None, path: str
) -> list[Problem]:
    """Each enabled tool once: config.yaml keys tools by name, so one name is one tool."""
    problems: list[Problem] = []
    seen: dict[str, tuple[int, str | None]] = {}
    for i, ref in refs:
        if not ref.enabled:
            continue
        ref_ns = ref.namespace or namespace
        if ref.name in seen:
            first, first_ns = seen[ref.name]
            if first_ns == ref_ns:
                text = f"duplicate tool reference {ref.name!r}; reference each tool once"
            else:
                text = (
                    f"tool {ref.name!r} is referenced in namespaces {first_ns!r} and {ref_ns!r}; "
                    "config.yaml keys tools by name, so an agent can use only one of them"
                )
            problems.append(
                Problem(
                    join_path(path, f"tools[{i}]"),
                    f"{text} (first at {join_path(path, f'tools[{first}]')})",
                    "langop_duplicate_name",
                )
            )
        else:
            seen[ref.name] = (i, ref_ns)
    return problems


def dangling_problems(
    refs: list[tuple[int, ToolRef]],
    namespace: str | None,
    namespaces: set[Any],
    declared: set[tuple[Any, Any]],
    path: str,
) -> list[Problem]:
    """References into one of the cluster's namespaces that name no tool declared there
    (a reference into another namespace is an external tool's, checked elsewhere)."""
    problems: list[Problem] = []
    for j, ref in refs:
        where = ref.namespace or namespace
        if ref.enabled and where in namespaces and (where, ref.name) not in declared:
            names = sorted(n for ns, n in declared if ns == where and isinstance(n, str))
            known = ", ".join(names) or "none"
            there = "" if len(namespaces) < 2 else f" namespace {where!r} of"
            problems.append(
                Problem(
                    join_path(path, f"tools[{j}].name"),
                    f"no tool named {ref.name!r} in{there} this cluster (known: {known}); "
                    f"{did_you_mean(ref.name, names)}declare it under tools, fix the name, or "
                    "set enabled: false",
                    "langop_unknown_reference",
                )
            )
    return problems


def external_reference_problems(
    spec: ClusterSpec, external: Iterable[tuple[str, str]]
) -> list[Problem]:
    """References to tools outside the cluster's namespaces that were not handed to it
    (``external_tools``, or a stack's ``toolsFrom``)."""
    known = set(external)
    spaces = cluster_namespaces(spec)
    problems: list[Problem] = []
    for i, agent in enumerate(spec.agents):
        for j, ref in enumerate(agent.tools):
            if not ref.enabled or (ref.namespace or agent.namespace or spec.namespace) in spaces:
                continue
            if (ref.namespace, ref.name) not in known:
                problems.append(
                    Problem(
                        f"agents[{i}].tools[{j}].name",
                        f"tool {ref.name!r} in namespace {ref.namespace!r} is not known here; "
                        "declare it with that namespace, consume its stack with toolsFrom, "
                        "pass its LanguageTool in external_tools, or set enabled: false",
                    )
                )
    return problems


def external_sidecar_problems(
    spec: ClusterSpec, external: Mapping[tuple[str, str], PodMember]
) -> list[Problem]:
    """Sidecar checks with tools handed in from outside (``external_tools``) resolved too;
    the cluster's own tools alone were checked by ``parse_cluster``."""
    ns = spec.namespace
    own = {(t.namespace or ns, t.name): t for t in spec.tools}
    problems: list[Problem] = []
    for i, agent in enumerate(spec.agents):
        home = agent.namespace or ns
        keys = [(r.namespace or home, r.name) for r in agent.tools]
        if not any(key in external for key in keys):
            continue
        resolved = [own.get(key) or external.get(key) for key in keys]
        problems += sidecar_problems(agent, resolved, f"agents[{i}]", ns)
    return problems


class PodMember(Protocol):
    """What sidecar checks read of a tool: a ToolSpec, or a target resolved to one."""

    @property
    def name(self) -> str: ...
    @property
    def namespace(self) -> str | None: ...
    @property
    def port(self) -> int: ...
    @property
    def deployment_mode(self) -> str: ...


def owns_secret(tool: PodMember) -> bool:
    """Whether the tool keeps literal secret env in a Secret of its own namespace."""
    if isinstance(tool, ToolSpec):
        return any(not isinstance(v, SecretSource) for v in tool.secret_env.values())
    return bool(getattr(tool, "owns_secret", False))


def sidecar_problems(
    agent: AgentSpec, tools: Sequence[PodMember | None], path: str, home: str | None = None
) -> list[Problem]:
    """Sidecars share the agent's pod: distinct ports, no container named like the agent,
    and no secret env kept in another namespace's Secret, which the pod cannot read.

    ``tools`` holds the tool each of ``agent.tools`` resolves to, or None; ``home`` is the
    namespace of an agent or tool that names none.
    """
    problems: list[Problem] = []
    ports: dict[int, str] = {}
    own = agent.namespace or home
    for j, (ref, tool) in enumerate(zip(agent.tools, tools, strict=True)):
        if tool is None or not ref.enabled or tool.deployment_mode != "sidecar":
            continue
        space = tool.namespace or home
        if space != own and owns_secret(tool):
            problems.append(
                Problem(
                    join_path(path, f"tools[{j}]"),
                    f"sidecar {tool.name!r} keeps its secret env in namespace {space!r}; "
                    f"declare it in {own!r} or use secretKeyRef",
                )
            )
        if tool.name == agent.name:
            problems.append(
                Problem(
                    join_path(path, f"tools[{j}]"),
                    f"sidecar {tool.name!r} has the agent's own name, and containers of a pod "
                    "need distinct names; rename the tool or the agent",
                )
            )
        owner = ports.get(tool.port)
        if owner is not None and owner != tool.name:
            problems.append(
                Problem(
                    join_path(path, f"tools[{j}]"),
                    f"sidecar {tool.name!r} uses port {tool.port}, as does sidecar {owner!r} "
                    "in the same pod; change one port",
                )
            )
        ports.setdefault(tool.port, tool.name)
    return problems


def cluster_namespaces(cluster: ClusterSpec) -> set[str]:
    """Every namespace a cluster deploys into: its own and those its items name."""
    items = [*cluster.tools, *cluster.agents, *cluster.http_tools]
    return {cluster.namespace, *(w.namespace for w in items if w.namespace)}
