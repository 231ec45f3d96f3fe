"""Tool references of agents: names that resolve, tools of other namespaces handed over,
and sidecars that can share one pod."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from langop_infra.core.errors import Problem, did_you_mean, join_path
from langop_infra.spec.agent import AgentSpec, ToolRef
from langop_infra.spec.cluster import ClusterSpec


def reference_problems(
    refs: list[tuple[int, ToolRef]], namespace: str | None, path: str
) -> list[Problem]:
    """Each enabled tool once: config.yaml keys tools by name, so one name is one tool."""
    problems = []
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
    problems = []
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
    problems = []
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


class PodMember(Protocol):
    """What sidecar checks read of a tool: a ToolSpec, or a target resolved to one."""

    name: str
    port: int
    deployment_mode: str


def sidecar_problems(
    agent: AgentSpec, tools: Sequence[PodMember | None], path: str
) -> list[Problem]:
    """Sidecars share the agent's pod: distinct ports, and no container named like the agent.

    ``tools`` holds the tool each of ``agent.tools`` resolves to, or None.
    """
    problems = []
    ports: dict[int, str] = {}
    for j, (ref, tool) in enumerate(zip(agent.tools, tools, strict=True)):
        if tool is None or not ref.enabled or tool.deployment_mode != "sidecar":
            continue
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
    items = [*cluster.tools, *cluster.agents]
    return {cluster.namespace, *(w.namespace for w in items if w.namespace)}
