"""Memory as plain data: a managed memory's LanguageTool preset (and the tool reference its
agents get), and what an agent sees of its memory (env, config.yaml ``memory:``)."""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.config._memory import MEMORY_DATA_PATH, MemorySpec
from langop_infra.config._names import memory_header_env_name
from langop_infra.config._pod import Persistence
from langop_infra.config.agent import AgentSpec, ToolRef
from langop_infra.config.checks._checked import VALIDATED
from langop_infra.config.cluster import ClusterSpec
from langop_infra.config.tool import ToolSpec
from langop_infra.manifests._contract import (
    EndpointStyle,
    EnvVar,
    ToolTarget,
    agent_endpoint,
    header_document,
)


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
    the agents that use it (so sync, policies and the contract follow, as for any tool)."""
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
    updated = cluster.model_copy(update={"tools": tools, "agents": agents})
    # Validated already: a second parse would take the memories' tools for clashes.
    VALIDATED.add(updated)
    return updated


def memory_parts(
    memory: MemorySpec | None,
    namespace: str,
    targets: Sequence[ToolTarget],
    style: EndpointStyle = "base",
    scope: str = "conversation",
) -> tuple[list[EnvVar], dict[str, object]]:
    """``AGENT_MEMORY_ENDPOINT``, ``AGENT_MEMORY_TYPE`` (and external headers' env), and
    config.yaml ``memory: {name, type, endpoint, protocol: mcp}`` (with ``scope: shared``
    when the agent's reference says so; the runtime's default is the conversation)."""
    if memory is None:
        return [], {}
    doc: dict[str, object] = {"name": memory.name, "type": memory.type}
    if scope == "shared":
        doc["scope"] = "shared"
    env = [EnvVar("AGENT_MEMORY_TYPE", value=memory.type)]
    if memory.type == "managed":
        space = memory.namespace or namespace
        target = next(t for t in targets if (t.namespace, t.name) == (space, memory.name))
        endpoint = agent_endpoint(target, style)
        env.insert(0, EnvVar("AGENT_MEMORY_ENDPOINT", value=endpoint))
        doc["endpoint"] = endpoint
    else:
        address = memory.address
        if address is None:  # refused by MemorySpec
            raise AssertionError("external memory without address")
        if address.value is not None:
            env.insert(0, EnvVar("AGENT_MEMORY_ENDPOINT", value=address.value))
            doc["endpoint"] = address.value
        elif address.value_from is not None:
            ref = address.value_from.secret_key_ref
            env.insert(0, EnvVar("AGENT_MEMORY_ENDPOINT", secret_name=ref.name, secret_key=ref.key))
            doc["endpointFromEnv"] = "AGENT_MEMORY_ENDPOINT"
    doc["protocol"] = "mcp"
    if memory.headers:
        doc["headers"] = [
            header_document(h, memory_header_env_name(h.name)) for h in memory.headers
        ]
        for header in memory.headers:
            name = memory_header_env_name(header.name)
            if header.value is not None:
                env.append(EnvVar(name, value=header.value))
            elif header.value_from is not None:
                ref = header.value_from.secret_key_ref
                env.append(EnvVar(name, secret_name=ref.name, secret_key=ref.key))
    return env, {"memory": doc}
