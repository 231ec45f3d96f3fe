"""STOA's validation rules for HttpTools across a document: unique per namespace, every
agent reference resolves to a callable tool, the Secret a tool names exists."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from langop_infra.config._http_tool import HttpToolSpec, http_tool_secret_refs
from langop_infra.config._names import webhook_auth_env_name
from langop_infra.config.agent import AgentSpec
from langop_infra.config.cluster import ClusterSpec
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, join_path


def declared_http_tools(raw: object, namespace: str) -> set[tuple[str, str]]:
    """(namespace, name) of every HttpTool the document names, valid or not."""
    items = cast("list[object]", raw) if isinstance(raw, list) else []
    found: set[tuple[str, str]] = set()
    for item in items:
        if not isinstance(item, Mapping):
            continue
        entry = cast("Mapping[str, object]", item)
        name, own = entry.get("name"), entry.get("namespace")
        if isinstance(name, str):
            found.add((own if isinstance(own, str) else namespace, name))
    return found


def http_secret_problems(cluster: ClusterSpec, path: str, index: list[int]) -> list[Problem]:
    """STOA's Tool: the Secret an HttpTool names must exist (under secrets or externalSecrets),
    with the key."""
    known = {*cluster.secrets, *cluster.external_secrets}
    problems: list[Problem] = []
    for where, ref in http_tool_secret_refs(cluster.http_tools, index):
        keys = cluster.secrets.get(ref.name)
        if ref.name not in known:
            problems.append(
                Problem(
                    join_path(path, f"{where}.name"),
                    f"no Secret {ref.name!r} under secrets or externalSecrets; "
                    f"{did_you_mean(ref.name, known, 'Otherwise ')}declare it under secrets, "
                    "or list it in externalSecrets if something outside this program creates it",
                )
            )
        elif isinstance(keys, Mapping) and ref.key not in keys:
            problems.append(
                Problem(
                    join_path(path, f"{where}.key"),
                    f"secret {ref.name!r} under secrets has no key {ref.key!r} (it has: "
                    f"{', '.join(sorted(keys))}); fix the key or add it",
                )
            )
    return problems


def http_tool_problems(
    http_tools: Sequence[HttpToolSpec],
    agents: Sequence[AgentSpec],
    namespace: str,
    path: str = "",
    *,
    http_index: Sequence[int] | None = None,
    agent_index: Sequence[int] | None = None,
    declared: set[tuple[str, str]] | None = None,
) -> list[Problem]:
    """STOA's rules across the document: unique per namespace; every agent reference
    resolves to a callable tool, without clashing with the agent's inline tools."""
    http_index = list(http_index if http_index is not None else range(len(http_tools)))
    agent_index = list(agent_index if agent_index is not None else range(len(agents)))
    problems: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    for i, tool in zip(http_index, http_tools, strict=True):
        key = (tool.namespace or namespace, tool.name)
        if key in seen:
            problems.append(
                Problem(
                    join_path(path, f"httpTools[{i}].name"),
                    f"duplicate HttpTool name {key[1]!r} in namespace {key[0]!r} (also "
                    f"httpTools[{seen[key]}]); names must be unique in a namespace",
                )
            )
        seen.setdefault(key, i)
    known = declared if declared is not None else set(seen)
    tools = {(t.namespace or namespace, t.name): t for t in http_tools}
    for i, agent in zip(agent_index, agents, strict=True):
        problems += _reference_problems(
            agent, tools, known, namespace, join_path(path, f"agents[{i}]")
        )
    return problems


def _reference_problems(
    agent: AgentSpec,
    tools: dict[tuple[str, str], HttpToolSpec],
    known: set[tuple[str, str]],
    namespace: str,
    where: str,
) -> list[Problem]:
    own = agent.namespace or namespace
    inline = {t.name for t in agent.webhook_tools}
    # Credentials land in AGENT_WEBHOOK_<TOOL>_AUTH: "a-b" and an inline "a_b" fold to one.
    folded = {webhook_auth_env_name(t.name): t.name for t in agent.webhook_tools}
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for j, ref in enumerate(agent.http_tools):
        key, at = (ref.namespace or own, ref.name), join_path(where, f"httpTools[{j}]")
        if key in seen:
            problems.append(
                Problem(join_path(at, "name"), f"HttpTool {ref.name!r} is listed twice")
            )
        seen.add(key)
        if key not in known:
            declared = ", ".join(sorted(n for s, n in known if s == key[0])) or "none"
            problems.append(
                Problem(
                    join_path(at, "name"),
                    f"no HttpTool {ref.name!r} in namespace {key[0]!r} (declared there: "
                    f"{declared}); declare it under httpTools or fix the name",
                )
            )
            continue
        tool = tools.get(key)
        if tool is not None and tool.enabled and tool.endpoint is None:
            problems.append(
                Problem(
                    join_path(at, "name"),
                    f"HttpTool {ref.name!r} has no endpoint, so no agent can call it; give "
                    "it an endpoint or remove the reference",
                )
            )
        if ref.name in inline:
            problems.append(
                Problem(
                    join_path(at, "name"),
                    f"the agent has an inline webhook tool named {ref.name!r} too; tool "
                    "names must be unique per agent: rename one",
                )
            )
        elif webhook_auth_env_name(ref.name) in folded:
            problems.append(
                Problem(
                    join_path(at, "name"),
                    f"its credential env var {webhook_auth_env_name(ref.name)} is also inline "
                    f"webhook tool {folded[webhook_auth_env_name(ref.name)]!r}'s; rename one",
                )
            )
    return problems
