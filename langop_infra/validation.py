"""Whole-document validation: every problem of every tool and agent at once, with paths.

The models in :mod:`langop_infra.specs` check each field; this module validates documents item
by item (so one bad agent does not hide the next one's problems) and adds the checks that span
items: duplicates, dangling references, env-name and container-name clashes.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from langop_infra.admission import deploy_problems, resource_problems, security_problems
from langop_infra.collisions import name_clashes
from langop_infra.egress_check import egress_findings
from langop_infra.errors import Problem, SpecError, join_path, problems_from
from langop_infra.model_specs import ModelSpec, PersonaSpec
from langop_infra.model_validation import cluster_model_problems
from langop_infra.names import (
    RESERVED_AGENT_ENV,
    RESERVED_AGENT_ENV_PREFIXES,
    header_env_name,
    webhook_auth_env_name,
)
from langop_infra.specs import (
    AgentSpec,
    ClusterSpec,
    Defaults,
    HeaderSpec,
    Resources,
    SecretKeyRef,
    SecretSource,
    Spec,
    ToolRef,
    ToolSpec,
    WorkloadSpec,
)


def _all_models(root: type[BaseModel]) -> list[type[BaseModel]]:
    found, stack = [], [root]
    while stack:
        model = stack.pop()
        found.append(model)
        stack.extend(model.__subclasses__())
    return found


# Every field name and alias of every spec model: what a misspelt key is matched against.
KNOWN_FIELDS = sorted(
    {
        name
        for model in _all_models(Spec)
        for field_name, info in model.model_fields.items()
        for name in (field_name, info.alias or field_name)
    }
)


def _validate(model: type[Spec], data: Any, path: str) -> tuple[Any, list[Problem]]:
    if isinstance(data, model):
        return data, []
    if not isinstance(data, Mapping):
        return None, [Problem(path, f"expected a mapping, got {type(data).__name__}")]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, problems_from(exc, path, data, KNOWN_FIELDS, model)


def _validate_list(
    model: type[Spec], items: Any, path: str
) -> tuple[list[tuple[int, Any]], list[Problem]]:
    if items is None:
        return [], []
    if not isinstance(items, (list, tuple)):
        return [], [Problem(path, f"expected a list, got {type(items).__name__}")]
    valid, problems = [], []
    for index, item in enumerate(items):
        spec, found = _validate(model, item, f"{path}[{index}]")
        problems += found
        if spec is not None:
            valid.append((index, spec))
    return valid, problems


def _duplicates(
    keyed: Iterable[tuple[str, Any]], prefix: str, message: Callable[[Any], str]
) -> list[Problem]:
    first: dict[Any, str] = {}
    problems = []
    for where, key in keyed:
        if key in first:
            text = f"{message(key)} (first at {join_path(prefix, first[key])})"
            problems.append(Problem(join_path(prefix, where), text))
        else:
            first[key] = where
    return problems


def workload_problems(spec: WorkloadSpec, path: str = "") -> list[Problem]:
    """An env var in both ``env`` and ``secretEnv``; ``egressTo`` under ``egress: open``."""
    problems = [
        Problem(
            join_path(path, f"secretEnv.{name}"), f"{name} set in both env and secretEnv; keep one"
        )
        for name in sorted(set(spec.env) & set(spec.secret_env))
    ]
    if spec.egress == "open" and spec.egress_to:
        problems.append(
            Problem(
                join_path(path, "egressTo"),
                "egressTo only applies with egress: restricted; set it or remove egressTo",
            )
        )
    return problems


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
                    )
                )
    header_envs = [
        (f"mcpServers[{i}].headers[{j}]", header_env_name(server.name, header.name))
        for i, server in enumerate(agent.mcp_servers)
        for j, header in enumerate(server.headers)
    ]
    problems += _duplicates(
        header_envs,
        path,
        lambda key: f"header maps to env var {key} twice; rename the server or header",
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
    spec, problems = _validate(ToolSpec, data, path)
    if spec is not None:
        problems += workload_problems(spec, path)
    if problems:
        raise SpecError(problems)
    return spec


def parse_agent(data: Any, path: str = "") -> AgentSpec:
    spec, problems = _validate(AgentSpec, data, path)
    if spec is not None:
        problems += agent_problems(spec, path)
    if problems:
        raise SpecError(problems)
    return spec


def parse_model(data: Any, path: str = "") -> ModelSpec:
    spec, problems = _validate(ModelSpec, data, path)
    if problems:
        raise SpecError(problems)
    return spec


def parse_cluster(data: Any, path: str = "") -> ClusterSpec:
    """Validate a whole cluster document; every problem of every tool and agent at once.

    Cross-item checks see every item that can be read: a tool with a bad field still counts
    as declared, and an agent with a bad field still has its references checked.
    """
    if isinstance(data, ClusterSpec):
        if data._validated:
            return data
        problems = cluster_problems(data, path) + cluster_model_problems(data, path)
        if problems:
            raise SpecError(problems)
        data._validated = True
        return data
    if not isinstance(data, Mapping):
        raise SpecError([Problem(path, f"expected a mapping, got {type(data).__name__}")])
    head = {k: v for k, v in data.items() if k not in ("tools", "agents", "models", "personas")}
    cluster, problems = _validate(ClusterSpec, head, path)
    tools, found = _validate_list(ToolSpec, data.get("tools"), join_path(path, "tools"))
    problems += found
    agents, found = _validate_list(AgentSpec, data.get("agents"), join_path(path, "agents"))
    problems += found
    models, found = _validate_list(ModelSpec, data.get("models"), join_path(path, "models"))
    problems += found
    personas, found = _validate_list(PersonaSpec, data.get("personas"), join_path(path, "personas"))
    problems += found
    raw_tools = data.get("tools") if isinstance(data.get("tools"), list) else []
    # "" when missing: the cluster's stand-in (below) has that namespace, and so do its items.
    namespace = data.get("namespace") if isinstance(data.get("namespace"), str) else ""
    declared = {
        (t.get("namespace") if isinstance(t.get("namespace"), str) else namespace, t["name"])
        for t in raw_tools
        if isinstance(t, Mapping) and isinstance(t.get("name"), str)
    }
    raw_agents = data.get("agents") if isinstance(data.get("agents"), list) else []
    valid_agents = {i for i, _ in agents}
    namespaces = {namespace, *(ns for ns, _ in declared)}
    namespaces |= {
        a.get("namespace") for a in raw_agents if isinstance(a, Mapping) and a.get("namespace")
    }

    # Agents that failed on some field: still check the references they make.
    for i, raw in enumerate(raw_agents):
        if i in valid_agents or not isinstance(raw, Mapping):
            continue
        refs, _ = _validate_list(ToolRef, raw.get("tools"), "")
        where = join_path(path, f"agents[{i}]")
        own = raw.get("namespace") if isinstance(raw.get("namespace"), str) else namespace
        problems += reference_problems(refs, own, where)
        problems += _dangling(refs, own, namespaces, declared, where)

    readable = _secret_names(head)
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
        }
    )
    problems += cluster_problems(
        full,
        path,
        tool_index=[i for i, _ in tools],
        agent_index=[i for i, _ in agents],
        declared=declared,
        secrets_known=cluster is not None or readable is not None,
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
    if problems:
        raise SpecError(problems)
    full._validated = True
    return full


def _declared_names(items: Any) -> set[str]:
    """The names a raw list declares, its invalid items included."""
    if not isinstance(items, list):
        return set()
    return {i["name"] for i in items if isinstance(i, Mapping) and isinstance(i.get("name"), str)}


def _secret_names(head: Mapping[str, Any]) -> set[str] | None:
    """The Secret names a document declares, even when another of its fields is invalid;
    None when they cannot be read, so that no reference is called undeclared for that."""
    secrets = head.get("secrets", {})
    external = head.get("externalSecrets", head.get("external_secrets", []))
    if not isinstance(secrets, Mapping) or not isinstance(external, (list, tuple)):
        return None
    return {str(name) for name in [*secrets, *external]}


def _defaults_or_default(value: Any) -> Defaults:
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


def _dangling(
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
                    "declare it under tools, fix the name, or set enabled: false",
                )
            )
    return problems


def cluster_problems(
    cluster: ClusterSpec,
    path: str = "",
    *,
    tool_index: list[int] | None = None,
    agent_index: list[int] | None = None,
    declared: set[Any] | None = None,
    secrets_known: bool = True,
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
    problems += _duplicates(
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
    problems += _duplicates(
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
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        problems += workload_problems(tool, join_path(path, f"tools[{i}]"))
        problems += egress_to_problems(tool, cluster.defaults, join_path(path, f"tools[{i}]"))
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        where = join_path(path, f"agents[{i}]")
        own = agent.namespace or ns
        problems += agent_problems(agent, where, own)
        problems += egress_to_problems(agent, cluster.defaults, where)
        problems += _dangling(list(enumerate(agent.tools)), own, namespaces, declared, where)
        resolved = [by_key.get((r.namespace or own, r.name)) for r in agent.tools]
        problems += sidecar_problems(agent, resolved, where)
    for name, values in cluster.secrets.items():
        if not isinstance(values, Mapping) or not values:
            problems.append(
                Problem(
                    join_path(path, f"secrets.{name}"),
                    "a secret is a non-empty mapping of keys to values",
                )
            )
    problems += _namespace_wide_problems(cluster, path, tool_index, agent_index)
    if secrets_known:
        problems += _undeclared_secret_problems(cluster, path, tool_index, agent_index)
    return problems


def cluster_namespaces(cluster: ClusterSpec) -> set[str]:
    """Every namespace a cluster deploys into: its own and those its items name."""
    items = [*cluster.tools, *cluster.agents]
    return {cluster.namespace, *(w.namespace for w in items if w.namespace)}


def egress_to_problems(workload: WorkloadSpec, defaults: Defaults, path: str) -> list[Problem]:
    """``egressTo`` without restricted egress would be silently ignored."""
    if workload.egress_to and workload.egress is None and defaults.egress == "open":
        return [
            Problem(
                join_path(path, "egressTo"),
                "egressTo only applies with egress: restricted; set egress (here or in "
                "defaults) or remove egressTo",
            )
        ]
    return []


def _namespace_wide_problems(
    cluster: ClusterSpec, path: str, tool_index: list[int], agent_index: list[int]
) -> list[Problem]:
    """Names that collide with generated objects, secrets, security and resource bounds."""
    defaults = cluster.defaults
    restricted = cluster.create_namespace
    problems = security_problems(
        defaults.security, join_path(path, "defaults"), fields=None, restricted=restricted
    )
    # Once here, not once for each workload that inherits them.
    problems += resource_problems(
        Resources(), defaults.resources, join_path(path, "defaults"), join_path(path, "defaults")
    )
    workloads: list[tuple[str, WorkloadSpec]] = [
        (f"tools[{i}]", t) for i, t in zip(tool_index, cluster.tools, strict=True)
    ] + [(f"agents[{i}]", a) for i, a in zip(agent_index, cluster.agents, strict=True)]
    for where, workload in workloads:
        full = join_path(path, where)
        problems += deploy_problems(
            workload,
            defaults,
            full,
            join_path(path, "defaults"),
            restricted=restricted,
            check_defaults=False,
        )
    problems += name_clashes(cluster, path, tool_index, agent_index)
    if defaults.strict_egress:
        problems += egress_findings(cluster, path, agent_index)
    for where, ref in secret_refs(cluster, tool_index, agent_index):
        keys = cluster.secrets.get(ref.name)
        if isinstance(keys, Mapping) and ref.key not in keys:
            problems.append(
                Problem(
                    join_path(path, f"{where}.key"),
                    f"secret {ref.name!r} under secrets has no key {ref.key!r} (it has: "
                    f"{', '.join(sorted(keys))}); fix the key or add it",
                )
            )
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        for where, ref in sync_secret_refs(tool):
            if ref.name not in cluster.secrets:
                problems.append(
                    Problem(
                        join_path(path, f"tools[{i}].{where}"),
                        f"secret {ref.name!r} key {ref.key!r} is not declared under secrets; "
                        f"{_did_you_mean(ref.name, cluster.secrets)}schema sync can only send "
                        "values this program holds",
                    )
                )
    return problems


def sync_secret_refs(tool: ToolSpec) -> Iterator[tuple[str, SecretKeyRef]]:
    """The Secrets schema sync reads (header values, the OAuth client secret): ``pulumi up``
    cannot read the cluster's Secrets, so the program must hold these values itself."""
    for j, header in enumerate(tool.schema_sync.headers):
        if header.value_from is not None:
            yield f"schemaSync.headers[{j}].valueFrom", header.value_from.secret_key_ref
    if tool.schema_sync.auth is not None:
        yield "schemaSync.auth.clientSecret", tool.schema_sync.auth.client_secret.secret_key_ref


def _did_you_mean(name: str, known: Iterable[str], then: str = "") -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.8)
    return f"did you mean {close[0]!r}? {then}" if close else ""


def _undeclared_secret_problems(
    cluster: ClusterSpec, path: str, tool_index: list[int], agent_index: list[int]
) -> list[Problem]:
    """A secretKeyRef to a Secret that neither ``secrets`` creates nor ``externalSecrets``
    names: a typo would otherwise surface only as a pod stuck in CreateContainerConfigError."""
    problems = [
        Problem(
            join_path(path, f"externalSecrets[{i}]"),
            f"{name!r} is also under secrets, which creates it; remove it from one of them",
        )
        for i, name in enumerate(cluster.external_secrets)
        if name in cluster.secrets
    ]
    known = {*cluster.secrets, *cluster.external_secrets}
    for where, ref in secret_refs(cluster, tool_index, agent_index):
        # Schema sync needs the value itself: a stricter check covers its headers.
        if ref.name in known or ".schemaSync." in where:
            continue
        problems.append(
            Problem(
                join_path(path, f"{where}.name"),
                f"no Secret {ref.name!r} under secrets or externalSecrets; "
                f"{_did_you_mean(ref.name, known, 'Otherwise ')}declare it under secrets, or "
                "list it in externalSecrets if something outside this program creates it",
            )
        )
    return problems


# Header names whose literal value is a credential in plain sight (ConfigMap, env, state).
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "x-api-key"})


def cluster_warnings(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """What is valid but unwise: credential headers given as a literal ``value``."""
    warnings = []
    for i, tool in enumerate(cluster.tools):
        warnings += header_warnings(
            tool.schema_sync.headers, join_path(path, f"tools[{i}].schemaSync"), "Pulumi state"
        )
    for i, agent in enumerate(cluster.agents):
        warnings += agent_warnings(agent, join_path(path, f"agents[{i}]"))
    return warnings


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


def secret_refs(
    cluster: ClusterSpec, tool_index: list[int], agent_index: list[int]
) -> Iterator[tuple[str, SecretKeyRef]]:
    """Every reference to a Secret's key in the cluster, with its path."""
    for i, tool in zip(tool_index, cluster.tools, strict=True):
        for name, value in tool.secret_env.items():
            if isinstance(value, SecretSource):
                yield f"tools[{i}].secretEnv.{name}.secretKeyRef", value.secret_key_ref
        for j, header in enumerate(tool.schema_sync.headers):
            if header.value_from is not None:
                yield (
                    f"tools[{i}].schemaSync.headers[{j}].valueFrom.secretKeyRef",
                    header.value_from.secret_key_ref,
                )
        if tool.schema_sync.auth is not None:
            yield (
                f"tools[{i}].schemaSync.auth.clientSecret.secretKeyRef",
                tool.schema_sync.auth.client_secret.secret_key_ref,
            )
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        for name, value in agent.secret_env.items():
            if isinstance(value, SecretSource):
                yield f"agents[{i}].secretEnv.{name}.secretKeyRef", value.secret_key_ref
        for j, server in enumerate(agent.mcp_servers):
            for k, header in enumerate(server.headers):
                if header.value_from is not None:
                    yield (
                        f"agents[{i}].mcpServers[{j}].headers[{k}].valueFrom.secretKeyRef",
                        header.value_from.secret_key_ref,
                    )
        for j, webhook in enumerate(agent.webhook_tools):
            if webhook.authentication.secret_ref is not None:
                yield (
                    f"agents[{i}].webhookTools[{j}].authentication.secretRef",
                    webhook.authentication.secret_ref,
                )


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
