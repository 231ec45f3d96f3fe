"""Valid but unwise configuration, reported as warnings (``pulumi.log.warn``; render and
validate print them): credential headers given as literal values, images without a digest,
``0.0.0.0/0`` peers."""

from __future__ import annotations

from collections.abc import Sequence

from langop_infra.core.errors import Problem, join_path
from langop_infra.spec.agent import AgentSpec
from langop_infra.spec.cluster import ClusterSpec
from langop_infra.spec.fields import HeaderSpec
from langop_infra.spec.image_pins import unpinned_images
from langop_infra.spec.world_open import world_open_warnings

# Header names whose literal value is a credential in plain sight (ConfigMap, env, state).
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "x-api-key"})


def cluster_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """What is valid but unwise: credential headers given as a literal ``value``, images
    without a digest (an error instead with ``defaults.requireImageDigests``), peers that
    are the whole internet."""
    warnings = []
    for i, tool in enumerate(cluster.tools):
        warnings += header_warnings(
            tool.schema_sync.headers, join_path(path, f"tools[{i}].schemaSync"), "Pulumi state"
        )
    for i, agent in enumerate(cluster.agents):
        warnings += agent_warnings(agent, join_path(path, f"agents[{i}]"))
    if not cluster.defaults.require_image_digests:
        warnings += unpinned_images(cluster, path)
    return warnings + world_open_warnings(cluster, path)


def agent_warnings(agent: AgentSpec, path: str = "") -> list[Problem]:
    """Credential headers of an agent's MCP servers given as a literal ``value``."""
    warnings = []
    for j, server in enumerate(agent.mcp_servers):
        warnings += header_warnings(
            server.headers, join_path(path, f"mcpServers[{j}]"), "a ConfigMap and env"
        )
    return warnings


def header_warnings(headers: Sequence[HeaderSpec], path: str, lands_in: str) -> list[Problem]:
    return [
        Problem(
            join_path(path, f"headers[{k}].value"),
            f"{header.name} is a credential given as a literal value, which lands in plain "
            f"text in {lands_in}; use valueFrom: {{secretKeyRef: {{name, key}}}} (a Secret "
            "under secrets) or, in Python, secret=pulumi.Output.secret(...)",
            "langop_literal_credential",
        )
        for k, header in enumerate(headers)
        if header.value is not None and header.name.lower() in CREDENTIAL_HEADERS
    ]
