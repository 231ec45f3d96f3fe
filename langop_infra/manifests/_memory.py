"""What an agent sees of its memory (env, config.yaml ``memory:``); the managed memory's
LanguageTool preset is ``config._managed_memory``'s."""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.config._memory import MemorySpec
from langop_infra.config._names import memory_header_env_name
from langop_infra.manifests._contract import (
    EndpointStyle,
    EnvVar,
    ToolTarget,
    agent_endpoint,
    header_document,
)


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
