"""Whole-document validation: every problem of every tool and agent at once, with paths.

The models in :mod:`langop_infra.config` check each field; this module validates documents item
by item (so one bad agent does not hide the next one's problems) and adds the checks that span
items: duplicates, dangling references, env-name and container-name clashes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from langop_infra.config._http_tool import HttpToolSpec, flattened_entries
from langop_infra.config._model import ModelSpec, PersonaSpec
from langop_infra.config._names import (
    RESERVED_AGENT_ENV,
    RESERVED_AGENT_ENV_PREFIXES,
    webhook_auth_env_name,
)
from langop_infra.config._pod import WorkloadSpec
from langop_infra.config._pydantic_errors import not_a_mapping
from langop_infra.config.agent import AgentSpec, ToolRef, agent_headers
from langop_infra.config.checks._checked import CheckedCluster
from langop_infra.config.checks._http_tool_checks import (
    declared_http_tools,
    http_secret_problems,
    http_tool_problems,
)
from langop_infra.config.checks._in_cluster_services import unknown_service_problems
from langop_infra.config.checks._items import validate_item, validate_list, validate_partial
from langop_infra.config.checks._model_validation import cluster_model_problems
from langop_infra.config.checks._namespace_checks import (
    egress_to_problems,
    namespace_wide_problems,
)
from langop_infra.config.checks._peer_checks import agent_feature_problems
from langop_infra.config.checks._references import (
    cluster_namespaces,
    dangling_problems,
    reference_problems,
    sidecar_problems,
)
from langop_infra.config.checks._secret_refs import (
    secret_names,
    undeclared_secret_problems,
)
from langop_infra.config.cluster import ClusterSpec, Defaults
from langop_infra.config.tool import ToolSpec
from langop_infra.core.problems import Problem, SpecError, join_path


def _duplicates(
    keyed: Iterable[tuple[str, object]], prefix: str, message: Callable[[Any], str]
) -> list[Problem]:
    first: dict[object, str] = {}
    problems: list[Problem] = []
    for where, key in keyed:
        if key in first:
            text = f"{message(key)} (first at {join_path(prefix, first[key])})"
            problems.append(Problem(join_path(prefix, where), text, "langop_duplicate_name"))
        else:
            first[key] = where
    return problems


def workload_problems(spec: WorkloadSpec, path: str = "") -> list[Problem]:
    """An env var in both ``env`` and ``secretEnv``; ``egressTo`` under ``egress: open``."""
    problems = [
        Problem(
            join_path(path, f"secretEnv.{name}"),
            f"{name} set in both env and secretEnv; keep one",
            "langop_duplicate_env",
        )
        for name in sorted(set(spec.env) & set(spec.secret_env))
    ]
    if spec.egress == "open" and spec.egress_to:
        problems.append(
            Problem(
                join_path(path, "egressTo"),
                "egressTo only applies with egress: restricted; set it or remove egressTo",
                "langop_egress_to_unused",
            )
        )
    return problems


def agent_problems(agent: AgentSpec, path: str = "", namespace: str | None = None) -> list[Problem]:
    """Checks across one agent's lists: duplicates and env-name clashes."""
    problems = workload_problems(agent, path)
    problems += reference_problems(list(enumerate(agent.tools)), agent.namespace or namespace, path)
    problems += _duplicates(
        ((f"mcpServers[{i}].name", s.name) for i, s in enumerate(agent.mcp_servers)),
        path,
        lambda key: f"duplicate MCP server name {key!r}; names must be unique per agent",
    )
    problems += _duplicates(
        ((f"webhookTools[{i}].name", t.name) for i, t in enumerate(agent.webhook_tools)),
        path,
        lambda key: f"duplicate webhook tool name {key!r}; names must be unique per agent",
    )
    for field, names in (("env", agent.env), ("secretEnv", agent.secret_env)):
        for name in names:
            if name in RESERVED_AGENT_ENV or name.startswith(RESERVED_AGENT_ENV_PREFIXES):
                problems.append(
                    Problem(
                        join_path(path, f"{field}.{name}"),
                        f"{name} is set by langop-infra for every agent; rename your variable",
                        "langop_reserved_env",
                    )
                )
    header_envs = [(where, env) for where, env, _ in agent_headers(agent)]
    problems += _duplicates(
        header_envs,
        path,
        lambda key: f"header maps to env var {key} twice; rename the server, tool or header",
    )
    # Webhook credentials land in AGENT_WEBHOOK_<TOOL>_AUTH: two names may fold to one.
    auth_envs = [
        (f"webhookTools[{i}].name", webhook_auth_env_name(t.name))
        for i, t in enumerate(agent.webhook_tools)
        if t.enabled and t.authentication.secret_ref is not None
    ]
    problems += _duplicates(
        auth_envs,
        path,
        lambda key: f"webhook credential maps to env var {key} twice; rename one tool",
    )
    return problems


def parse_tool(data: Any, path: str = "") -> ToolSpec:
    spec, problems, _ = validate_partial(ToolSpec, data, path)
    if spec is not None:
        problems += workload_problems(spec, path)
    if problems or spec is None:
        raise SpecError(problems)
    return spec


def parse_agent(data: Any, path: str = "") -> AgentSpec:
    spec, problems, _ = validate_partial(AgentSpec, data, path)
    if spec is not None:
        problems += agent_problems(spec, path)
    if problems or spec is None:
        raise SpecError(problems)
    return spec


def parse_http_tool(data: Any, path: str = "") -> HttpToolSpec:
    spec, problems = validate_item(HttpToolSpec, data, path)
    if problems:
        raise SpecError(problems)
    return spec


def parse_model(data: Any, path: str = "") -> ModelSpec:
    spec, problems = validate_item(ModelSpec, data, path)
    if problems:
        raise SpecError(problems)
    return spec


def parse_cluster(data: Any, path: str = "") -> ClusterSpec:
    """Validate a whole cluster document; every problem of every tool and agent at once.

    Cross-item checks see every item that can be read: a tool with a bad field still counts
    as declared, and an agent with a bad field still has its references checked.
    """
    if isinstance(data, ClusterSpec):
        problems = cluster_problems(data, path) + cluster_model_problems(data, path)
        problems += unknown_service_problems(data, path)
        if problems:
            raise SpecError(problems)
        return data
    if not isinstance(data, Mapping):
        raise SpecError([Problem(path, not_a_mapping(data))])
    listed = ("tools", "agents", "models", "personas", "httpTools", "http_tools")
    head = {k: v for k, v in data.items() if k not in listed}
    cluster, problems = validate_item(ClusterSpec, head, path)
    tools, found, _ = validate_list(ToolSpec, data.get("tools"), join_path(path, "tools"), True)
    problems += found
    raw_agents = data.get("agents")
    agents, found, lacking = validate_list(AgentSpec, raw_agents, join_path(path, "agents"), True)
    problems += found
    models, found, _ = validate_list(ModelSpec, data.get("models"), join_path(path, "models"))
    problems += found
    raw_personas = data.get("personas")
    personas, found, _ = validate_list(PersonaSpec, raw_personas, join_path(path, "personas"))
    problems += found
    raw_http = flattened_entries(data.get("httpTools", data.get("http_tools")))
    # Partial: a tool with one bad field still has its Secret and references checked.
    http_tools, found, _ = validate_list(HttpToolSpec, raw_http, join_path(path, "httpTools"), True)
    problems += found
    raw_namespace = data.get("namespace")
    namespace = raw_namespace if isinstance(raw_namespace, str) else ""
    declared = _declared_tools(data, namespace)
    # An agent read without its tools (one failed) has its references read from the raw list.
    with_refs = {i for i, _ in agents if "tools" not in lacking.get(i, frozenset())}
    problems += _unparsed_agent_references(data, path, namespace, declared, with_refs)

    readable = secret_names(head)
    base = cluster or ClusterSpec.model_construct(
        namespace=namespace or "",
        defaults=_defaults_or_default(head.get("defaults")),
        # only for the references to them: their contents are not known to be valid
        external_secrets=sorted(readable or ()),
    )
    full = base.model_copy(
        update={
            "tools": [t for _, t in tools],
            "agents": [a for _, a in agents],
            "models": [m for _, m in models],
            "personas": [p for _, p in personas],
            "http_tools": [t for _, t in http_tools],
        }
    )
    problems += cluster_problems(
        full,
        path,
        tool_index=[i for i, _ in tools],
        agent_index=[i for i, _ in agents],
        declared=declared,
        secrets_known=cluster is not None or readable is not None,
        http_index=[i for i, _ in http_tools],
        declared_http=declared_http_tools(raw_http, namespace),
    )
    problems += cluster_model_problems(
        full,
        path,
        model_index=[i for i, _ in models],
        persona_index=[i for i, _ in personas],
        tool_index=[i for i, _ in tools],
        agent_index=[i for i, _ in agents],
        declared_models=_declared_names(data.get("models")),
        declared_personas=_declared_names(data.get("personas")),
    )
    problems += unknown_service_problems(
        full, path, model_index=[i for i, _ in models], agent_index=[i for i, _ in agents]
    )
    if problems:
        raise SpecError(problems)
    return full


def check_cluster(data: Any, path: str = "") -> CheckedCluster:
    """:func:`parse_cluster`'s document as the value later layers take: ``LanguageCluster``
    builds a :class:`CheckedCluster` without checking it again."""
    return CheckedCluster.of(parse_cluster(data, path))


def _declared_tools(data: Mapping[str, object], namespace: str) -> set[tuple[str, str]]:
    """(namespace, name) of every tool the document names, valid or not. ``namespace`` is
    "" when missing: the cluster's stand-in has that namespace, and so do its items."""
    raw_tools = data.get("tools")
    declared: set[tuple[str, str]] = set()
    for tool in raw_tools if isinstance(raw_tools, list) else []:
        name = tool.get("name") if isinstance(tool, Mapping) else None
        if isinstance(name, str):
            space = tool.get("namespace")
            declared.add((space if isinstance(space, str) else namespace, name))
    return declared


def _unparsed_agent_references(
    data: Mapping[str, Any],
    path: str,
    namespace: str,
    declared: set[tuple[str, str]],
    valid_agents: set[int],
) -> list[Problem]:
    """Agents that failed on some field: still check the references they make."""
    listed = data.get("agents")
    raw_agents: list[Any] = listed if isinstance(listed, list) else []
    namespaces = {namespace, *(ns for ns, _ in declared)}
    namespaces |= {
        a["namespace"]
        for a in raw_agents
        if isinstance(a, Mapping) and isinstance(a.get("namespace"), str) and a["namespace"]
    }
    problems: list[Problem] = []
    for i, raw in enumerate(raw_agents):
        if i in valid_agents or not isinstance(raw, Mapping):
            continue
        refs, _, _ = validate_list(ToolRef, raw.get("tools"), "")
        where = join_path(path, f"agents[{i}]")
        space = raw.get("namespace")
        own = space if isinstance(space, str) else namespace
        problems += reference_problems(refs, own, where)
        problems += dangling_problems(refs, own, namespaces, declared, where)
    return problems


def _declared_names(items: object) -> set[str]:
    """The names a raw list declares, its invalid items included."""
    if not isinstance(items, list):
        return set()
    return {i["name"] for i in items if isinstance(i, Mapping) and isinstance(i.get("name"), str)}


def _defaults_or_default(value: object) -> Defaults:
    """The document's defaults without their invalid fields, so that a bad ``resources``
    does not also make ``egress: restricted`` count as unset (its problem is reported)."""
    if not isinstance(value, Mapping):
        return Defaults()
    try:
        return Defaults.model_validate(value)
    except ValidationError as exc:
        bad = {error["loc"][0] for error in exc.errors() if error["loc"]}
    try:
        return Defaults.model_validate({k: v for k, v in value.items() if k not in bad})
    except ValidationError:
        return Defaults()


def _name_duplicates(
    cluster: ClusterSpec, path: str, tool_index: list[int], agent_index: list[int]
) -> list[Problem]:
    """Two tools, or two agents, with one name in one namespace."""
    ns = cluster.namespace
    found = _duplicates(
        (
            (f"tools[{i}].name", (t.namespace or ns, t.name))
            for i, t in zip(tool_index, cluster.tools, strict=True)
        ),
        path,
        lambda key: (
            f"duplicate tool name {key[1]!r} in namespace {key[0]!r}; tool names must "
            "be unique in a namespace"
        ),
    )
    found += _duplicates(
        (
            (f"agents[{i}].name", (a.namespace or ns, a.name))
            for i, a in zip(agent_index, cluster.agents, strict=True)
        ),
        path,
        lambda key: (
            f"duplicate agent name {key[1]!r} in namespace {key[0]!r}; agent names "
            "must be unique in a namespace"
        ),
    )
    return found


def cluster_problems(
    cluster: ClusterSpec,
    path: str = "",
    *,
    tool_index: list[int] | None = None,
    agent_index: list[int] | None = None,
    declared: set[Any] | None = None,
    secrets_known: bool = True,
    http_index: list[int] | None = None,
    declared_http: set[tuple[str, str]] | None = None,
) -> list[Problem]:
    """Checks across tools and agents: duplicates, dangling references, sidecar clashes.

    ``secrets_known=False``: the document's secrets could not be read, so references to
    them are not checked (their problem is reported already)."""
    tool_index = tool_index if tool_index is not None else list(range(len(cluster.tools)))
    agent_index = agent_index if agent_index is not None else list(range(len(cluster.agents)))
    ns = cluster.namespace
    by_key = {(t.namespace or ns, t.name): t for t in cluster.tools}
    declared = declared if declared is not None else set(by_key)
    namespaces = cluster_namespaces(cluster) | {n for n, _ in declared}
    problems = []
    problems += _name_duplicates(cluster, path, tool_index, agent_index)
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        problems += workload_problems(tool, join_path(path, f"tools[{i}]"))
        problems += egress_to_problems(tool, cluster.defaults, join_path(path, f"tools[{i}]"))
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        where = join_path(path, f"agents[{i}]")
        own = agent.namespace or ns
        problems += agent_problems(agent, where, own)
        problems += egress_to_problems(agent, cluster.defaults, where)
        problems += dangling_problems(
            list(enumerate(agent.tools)), own, namespaces, declared, where
        )
        resolved = [by_key.get((r.namespace or own, r.name)) for r in agent.tools]
        problems += sidecar_problems(agent, resolved, where, ns)
    problems += [
        Problem(
            join_path(path, f"secrets.{name}"), "a secret is a non-empty mapping of keys to values"
        )
        for name, values in cluster.secrets.items()
        if not isinstance(values, Mapping) or not values
    ]
    problems += namespace_wide_problems(cluster, path, tool_index, agent_index)
    problems += agent_feature_problems(cluster, agent_index, path)
    http_index = http_index if http_index is not None else list(range(len(cluster.http_tools)))
    problems += http_tool_problems(
        cluster.http_tools,
        cluster.agents,
        ns,
        path,
        http_index=http_index,
        agent_index=agent_index,
        declared=declared_http,
    )
    if secrets_known:
        problems += undeclared_secret_problems(cluster, path, tool_index, agent_index)
        problems += http_secret_problems(cluster, path, http_index)
    # A duplicate name is one problem, not also one per object the name would generate.
    duplicated = {p.path for p in problems if p.kind == "langop_duplicate_name"}
    return [p for p in problems if not (p.kind == "langop_name_clash" and p.path in duplicated)]
