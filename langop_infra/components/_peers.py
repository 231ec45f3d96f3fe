"""A standalone LanguageAgent's A2A peers and memory: resolved against the LanguageAgents
and LanguageMemories built earlier in the program (LanguageCluster resolves its own)."""

from __future__ import annotations

from typing import Any

from langop_infra.components._k8s import find_component
from langop_infra.config.agent import AgentSpec, ToolRef
from langop_infra.config.checks._peer_checks import mode_problems, peer_problems
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract
from langop_infra.manifests._a2a import peer_targets
from langop_infra.manifests._agent_features import AgentFeatures


def resolve_features(
    agent: AgentSpec, given_memory: Any = None
) -> tuple[AgentSpec, AgentFeatures, list[Any]]:
    """The agent (with its managed memory's tool reference added), its peers and memory
    (``given_memory``, the LanguageMemory object it was handed, or one built earlier), and
    the memory's LanguageTool when it runs one; every miss at once."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    known: dict[tuple[str, str], AgentSpec] = {(namespace, agent.name): agent}
    for peer in agent.agents:
        if peer.remote:
            continue
        key = (peer.namespace or namespace, peer.name)
        built = find_component("LanguageAgent", *key)
        if built is not None:
            known[key] = built.spec
    indexed = [(0, agent), *((1, spec) for spec in known.values() if spec is not agent)]
    problems = mode_problems(agent)
    problems += [
        Problem(p.path.removeprefix("agents[0]."), p.message, p.kind)
        for p in peer_problems(indexed, namespace)
        if p.path.startswith("agents[0].")
    ]
    memory = None
    tools: list[object] = []
    if agent.memory is not None:
        space = agent.memory.namespace or namespace
        built_memory = given_memory or find_component("LanguageMemory", space, agent.memory.name)
        if built_memory is None:
            problems.append(
                Problem(
                    "memory.name",
                    f"no LanguageMemory {agent.memory.name!r} in namespace {space!r}; create "
                    "it before the agent",
                )
            )
        else:
            memory = built_memory.spec
            if built_memory.tool is not None:
                ref = ToolRef(name=memory.name, namespace=space)
                # One handed over as an object is referenced already (see with_memory_tool).
                if given_memory is None:
                    agent = agent.model_copy(update={"tools": [*agent.tools, ref]})
                tools.append(built_memory.tool)
    if problems:
        raise SpecError(problems)
    return agent, AgentFeatures(tuple(peer_targets(agent, namespace, known)), memory), tools
