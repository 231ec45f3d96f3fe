"""Valid but unwise configuration, reported as warnings (``pulumi.log.warn``; render and
validate print them): credential headers given as literal values, a model no gateway serves,
``${VAR}`` in an MCP server's URL or header that nothing in the agent's pod sets, images
without a digest, ``0.0.0.0/0`` peers."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from langop_infra.config._fields import HeaderSpec
from langop_infra.config._names import RESERVED_AGENT_ENV
from langop_infra.config.agent import AgentSpec, passthrough_model
from langop_infra.config.checks._endpoint_advice import endpoint_warnings
from langop_infra.config.checks._image_pins import unpinned_images
from langop_infra.config.checks._peer_checks import unadmitted_peer_warnings
from langop_infra.config.checks._world_open import world_open_warnings
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core.problems import Problem, join_path

# What the agent runtime expands (langop_infra.agent.runtime.expand_env); a default
# (${VAR:-x}) makes an unset variable harmless.
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}")

# Header names whose literal value is a credential in plain sight (ConfigMap, env, state).
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "x-api-key"})
# Env var (or ConfigMap key) names that hold a credential: TOKEN, SECRET, PASSWORD, API_KEY...
CREDENTIAL_ENV = re.compile(
    r"(^|_)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|AUTHORIZATION|CREDENTIALS?|PRIVATE_KEY)(_|$)",
    re.IGNORECASE,
)


def is_credential_header(name: str) -> bool:
    return name.lower() in CREDENTIAL_HEADERS


def is_credential_env(name: str) -> bool:
    """An env var name such as ``GITHUB_TOKEN`` or ``DB_PASSWORD``, or one carrying a
    credential header (``ARK_MCP_<SERVER>_HEADER_AUTHORIZATION``)."""
    return bool(CREDENTIAL_ENV.search(name))


def cluster_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """What is valid but unwise: credential headers given as a literal ``value``, images
    without a digest (an error instead with ``defaults.requireImageDigests``), peers that
    are the whole internet."""
    warnings: list[Problem] = []
    for i, tool in enumerate(cluster.tools):
        warnings += header_warnings(
            tool.schema_sync.headers, join_path(path, f"tools[{i}].schemaSync"), "Pulumi state"
        )
    for i, agent in enumerate(cluster.agents):
        warnings += agent_warnings(agent, join_path(path, f"agents[{i}]"))
    if not cluster.defaults.require_image_digests:
        warnings += unpinned_images(cluster, path)
    warnings += unadmitted_peer_warnings(cluster, path)
    return warnings + world_open_warnings(cluster, path) + endpoint_warnings(cluster, path)


def passthrough_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """Each agent's ``model:`` that no declared model serves (LanguageCluster warns)."""
    models = {m.name: m for m in cluster.models}
    return [
        passthrough_warning(model, join_path(path, f"agents[{i}].model"))
        for i, agent in enumerate(cluster.agents)
        if (model := passthrough_model(agent, models)) is not None
    ]


def passthrough_warning(model: str, path: str) -> Problem:
    """ark's ``model:`` that no declared model serves: the agent gets ``AGENT_MODEL`` only."""
    return Problem(
        path,
        f"no declared model is named or has modelName {model!r}, so no gateway serves it; "
        "it is passed on as AGENT_MODEL only (no MODEL_ENDPOINT). Declare a model with "
        f"modelName {model!r} to route it through the gateway",
    )


def agent_warnings(agent: AgentSpec, path: str = "") -> list[Problem]:
    """Credential headers of an agent's MCP servers given as a literal ``value``."""
    warnings: list[Problem] = []
    for j, server in enumerate(agent.mcp_servers):
        warnings += header_warnings(
            server.headers, join_path(path, f"mcpServers[{j}]"), "a ConfigMap and env"
        )
    for j, ref in enumerate(agent.tools):
        warnings += header_warnings(
            ref.headers, join_path(path, f"tools[{j}]"), "a ConfigMap and env"
        )
    warnings += unset_variable_warnings(agent, path)
    warnings += ark_prompt_warnings(agent, path)
    return warnings


def ark_prompt_warnings(agent: AgentSpec, path: str = "") -> list[Problem]:
    """An agent written for ark (its ``model:`` shorthand with ``mcpServers`` or webhook
    tools) without ``systemPrompt``: ark's runtime requires ``AGENT_SYSTEM_PROMPT`` and
    exits without it."""
    if agent.instructions or agent.runtime == "builtin" or agent.model is None:
        return []
    used = [
        key
        for key, given in (("mcpServers", agent.mcp_servers), ("webhookTools", agent.webhook_tools))
        if given
    ]
    if not used:
        return []
    return [
        Problem(
            join_path(path, "systemPrompt"),
            f"the agent uses ark's fields (model, {', '.join(used)}) but has no systemPrompt: "
            "ark's runtime requires AGENT_SYSTEM_PROMPT and exits without it; set "
            "systemPrompt (or instructions)",
        )
    ]


def _expanded(agent: AgentSpec) -> Iterator[tuple[str, str]]:
    for j, server in enumerate(agent.mcp_servers):
        yield f"mcpServers[{j}].url", server.url
        for k, header in enumerate(server.headers):
            if header.value is not None:
                yield f"mcpServers[{j}].headers[{k}].value", header.value


def unset_variable_warnings(agent: AgentSpec, path: str = "") -> list[Problem]:
    """A ``${VAR}`` (without default) in an MCP server's URL or literal header that no
    ``env``, ``secretEnv`` or ``envFrom`` of the pod provides: the agent skips that server."""
    provided = {*agent.env, *agent.secret_env, *RESERVED_AGENT_ENV}
    prefixes = [source.prefix or "" for source in agent.env_from]
    warnings: list[Problem] = []
    for where, text in _expanded(agent):
        for match in _VARIABLE.finditer(text):
            name, default = match.group(1), match.group(2)
            if default or name in provided or any(name.startswith(p) for p in prefixes):
                continue
            warnings.append(
                Problem(
                    join_path(path, where),
                    f"${{{name}}} is not set by the agent's env, secretEnv or envFrom, so the "
                    f"agent will skip this server; set {name} or write ${{{name}:-default}}",
                    "langop_unset_variable",
                )
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
        if header.value is not None and is_credential_header(header.name)
    ]
