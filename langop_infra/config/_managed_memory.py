"""A managed memory as the tool it runs: the LanguageTool preset, the cluster with each
managed memory among its tools, and paths of that cluster mapped back to what the user wrote
(a finding of the memory's tool is one of ``memories[i]``, never of a ``tools[n]`` the
document does not have)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from langop_infra.config._memory import MEMORY_DATA_PATH, MemorySpec
from langop_infra.config._pod import Persistence
from langop_infra.config.agent import AgentSpec, ToolRef
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec

_TOOL = re.compile(r"tools\[(\d+)\]")
_AGENT_TOOL = re.compile(r"agents\[(\d+)\]\.tools\[(\d+)\]")


def managed_tool(memory: MemorySpec, namespace: str | None = None) -> ToolSpec:
    """The LanguageTool a managed memory runs: its image on a persistent ``/data``, the
    upstream language-operator's "memory is a LanguageTool"."""
    return ToolSpec(
        name=memory.name,
        namespace=memory.namespace or namespace,
        image=memory.image,
        port=memory.port,
        persistence=Persistence(
            size=memory.size,
            mount_path=MEMORY_DATA_PATH,
            storage_class_name=memory.storage_class_name,
        ),
        env={"MEMORY_DB_PATH": f"{MEMORY_DATA_PATH}/memory.db"},
    )


def find_memory(
    cluster_memories: Sequence[MemorySpec], agent: AgentSpec, home: str
) -> MemorySpec | None:
    """The memory ``agent.memory`` names, or None."""
    if agent.memory is None:
        return None
    space = agent.memory.namespace or agent.namespace or home
    for memory in cluster_memories:
        if memory.name == agent.memory.name and (memory.namespace or home) == space:
            return memory
    return None


def with_managed_memories(cluster: ClusterSpec) -> ClusterSpec:
    """The validated cluster with each managed memory added to ``tools`` and referenced by
    the agents that use it (so sync, policies and the contract follow, as for any tool).
    Not to be validated again: the memories' tools would count as clashes with the memories."""
    managed = [m for m in cluster.memories if m.type == "managed"]
    if not managed:
        return cluster
    home = cluster.namespace
    agents: list[AgentSpec] = []
    for agent in cluster.agents:
        memory = find_memory(managed, agent, home)
        if memory is not None:
            ref = ToolRef(name=memory.name, namespace=memory.namespace or home)
            agent = agent.model_copy(update={"tools": [*agent.tools, ref]})
        agents.append(agent)
    tools = [*cluster.tools, *(managed_tool(m, home) for m in managed)]
    return cluster.model_copy(update={"tools": tools, "agents": agents})


def user_path(cluster: ClusterSpec, path: str) -> str:
    """``path``, a path of ``with_managed_memories(cluster)``, as the user wrote it: a
    managed memory's tool (``tools[n]``, past the user's tools) is ``memories[i]`` (its
    ``image`` kept, other fields are the preset's), and the reference an agent was given
    (``agents[a].tools[k]``, past the agent's own) is ``agents[a].memory``."""
    managed = [i for i, m in enumerate(cluster.memories) if m.type == "managed"]
    agent_tool = _AGENT_TOOL.match(path)
    if agent_tool is not None:
        agent = int(agent_tool.group(1))
        if agent < len(cluster.agents) and int(agent_tool.group(2)) >= len(
            cluster.agents[agent].tools
        ):
            return f"agents[{agent}].memory"
        return path
    tool = _TOOL.match(path)
    if tool is None or int(tool.group(1)) < len(cluster.tools):
        return path
    memory = managed[int(tool.group(1)) - len(cluster.tools)]
    rest = path[tool.end() :]
    return f"memories[{memory}]" + (rest if rest == ".image" else "")
