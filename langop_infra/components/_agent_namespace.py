"""A LanguageAgent and namespaces given as Outputs (see components/_namespace.py).

A LanguageTool whose namespace is an Output, handed to an agent, is taken to be in the
agent's namespace (the usual case: both from ``ns.metadata.name``); that they are is checked
when both resolve. An agent whose own namespace is an Output builds its objects from it as it
resolves; what it must find by namespace when the program runs (tools of another namespace,
components built earlier and named by reference, remote A2A peers and peers in a plain
namespace) it cannot have, and says so. Peers and a memory handed over as objects in the same
Output namespace it can.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pulumi

from langop_infra.components._namespace import Placement
from langop_infra.config.agent import AgentSpec
from langop_infra.core._program_index import built_components
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract

if TYPE_CHECKING:
    from langop_infra.components.tool import LanguageTool

# The namespace under which agent_document files the tools that follow the agent's.
FOLLOWING = ""
# ``(field, component)``: an HttpTool, handed to an agent, whose namespace is an Output.
Follower = tuple[str, Any]
# ``(field, what, namespace Output)``: a component handed to an agent that follows its namespace.
Placed = tuple[str, str, pulumi.Output[Any]]

_WHY = "an agent whose namespace is an Output finds nothing by namespace when the program runs; "


def follows(item: object) -> bool:
    """Whether ``item`` is a LanguageTool whose namespace is an Output."""
    return getattr(item, "namespace_known", True) is False


def namespace_of(agent: AgentSpec) -> str:
    return agent.namespace or contract.DEFAULT_NAMESPACE


def rekeyed(
    given: Mapping[tuple[str, str], tuple[contract.ToolTarget, object]], namespace: str
) -> dict[tuple[str, str], tuple[contract.ToolTarget, object]]:
    """``given`` with the following tools filed, and targeted, in the agent's ``namespace``."""
    placed = {k: v for k, v in given.items() if k[0] != FOLLOWING}
    for (space, name), (target, tool) in given.items():
        if space == FOLLOWING:
            placed[(namespace, name)] = (dataclasses.replace(target, namespace=namespace), tool)
    return placed


def unplaced_problems(
    agent: AgentSpec,
    given: Mapping[tuple[str, str], tuple[contract.ToolTarget, object]],
    models: Mapping[str, object],
    memory: object = None,
    peers: Mapping[tuple[str, str], object] | None = None,
) -> list[Problem]:
    """What an agent whose namespace is an Output cannot have, as field problems; a memory
    handed over as the LanguageMemory object (``memory``) it can, and so peers handed over as
    LanguageAgent objects in the same Output namespace (``peers``, as filed by peer_document)."""
    namespace = namespace_of(agent)
    memory_fix = "pass the LanguageMemory object itself (its namespace from the same Output)"
    peer_fix = (
        "pass the peer LanguageAgent objects themselves (their namespace from the same "
        "Output), or give it a plain namespace"
    )
    following = {n for space, n in (peers or {}) if space == FOLLOWING}
    problems = [
        Problem(f"agents[{j}]", _WHY + peer_fix)
        for j, peer in enumerate(agent.agents)
        if peer.remote or peer.namespace or peer.name not in following
    ]
    if agent.memory is not None and memory is None:
        problems.append(Problem("memory", _WHY + memory_fix))
    memory_tool = getattr(memory, "tool", None)
    if memory_tool is not None and not follows(memory):
        problems.append(
            Problem(
                "memory",
                _WHY + f"LanguageMemory {memory_tool.spec.name!r} has a plain namespace; give "
                "it the agent's namespace Output too (or the agent a plain namespace)",
            )
        )
    # The last reference is the handed-over memory's own tool (see _agent_plan).
    refs = agent.tools[:-1] if memory_tool is not None else agent.tools
    for i, ref in enumerate(refs):
        key = (ref.namespace or namespace, ref.name)
        if ref.enabled and key not in given:
            problems.append(
                Problem(
                    f"tools[{i}]",
                    _WHY + "pass the LanguageTool object itself (its namespace from the same "
                    "Output), not a reference by name",
                )
            )
        elif ref.enabled and given[key][0].deployment_mode == "service" and key[0] != namespace:
            problems.append(
                Problem(
                    f"tools[{i}]",
                    _WHY + f"LanguageTool {ref.name!r} is in namespace {key[0]!r}, and the "
                    "policy admitting the agent there is named after the agent's namespace; "
                    "give the agent a plain namespace",
                )
            )
    built = {n for kind, _, n in built_components() if kind == "LanguageModel"}
    names = [("model", agent.model)] if agent.model else []
    names += [(f"models[{i}].name", m.name) for i, m in enumerate(agent.models)]
    problems += [
        Problem(field, _WHY + "pass the LanguageModel object itself, not its name")
        for field, name in names
        if name not in models and name in built
    ]
    return problems


def refuse_unplaced(
    agent: AgentSpec,
    given: Mapping[tuple[str, str], tuple[contract.ToolTarget, object]],
    models: Mapping[str, object],
    subject: str,
    memory: object = None,
    peers: Mapping[tuple[str, str], object] | None = None,
) -> None:
    problems = unplaced_problems(agent, given, models, memory, peers)
    if problems:
        raise SpecError(problems, subject=subject)


def retargeted(
    targets: Sequence[contract.ToolTarget], stand_in: str, agent: AgentSpec
) -> list[contract.ToolTarget]:
    """``targets`` with the agent's namespace where they hold its stand-in ``stand_in``."""
    namespace = namespace_of(agent)
    return [
        dataclasses.replace(t, namespace=namespace) if t.namespace == stand_in else t
        for t in targets
    ]


def checked(
    place: Placement,
    followers: Sequence[tuple[int, LanguageTool]],
    subject: str,
    site: str,
    http_followers: Sequence[Follower] = (),
    others: Sequence[Placed] = (),
) -> Placement:
    """``place``, whose namespace fails as a field error (naming ``site``) when a following
    tool (``(index in tools, LanguageTool)``), HttpTool (``(field, HttpTool)``) or other
    component (``others``: a gateway model, an A2A peer) resolves to another namespace."""
    found: list[Placed] = [
        (f"tools[{i}]", f"LanguageTool {tool.spec.name!r}", tool.namespace) for i, tool in followers
    ]
    found += [(f, f"HttpTool {t.spec.name!r}", t.namespace_name) for f, t in http_followers]
    found += others
    if not found:
        return place

    def check(values: list[object]) -> str:
        agent_namespace, spaces = values[0], values[1:]
        problems = [
            Problem(
                field,
                f"{what} is in namespace {namespace!r}, the agent in {agent_namespace!r}; a "
                "component whose namespace is an Output, handed to an agent, is taken to be in "
                "the agent's namespace: "
                "give both the same namespace",
            )
            for (field, what, _), namespace in zip(found, spaces, strict=True)
            if namespace != agent_namespace
        ]
        if problems:
            raise SpecError(problems, subject=subject, where=site)
        return str(agent_namespace)

    value = pulumi.Output.all(place.value, *[space for _, _, space in found]).apply(check)
    return Placement(value, place.prefix)
