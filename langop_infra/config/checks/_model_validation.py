"""Checks across models, personas and agents: references, fallbacks, the gateway's key.

Each model and persona is validated on its own by :mod:`langop_infra.config._model`; these
checks need the whole cluster. ``cluster_model_problems`` returns every problem with its path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from langop_infra.config._model import (
    GATEWAY_NAME,
    KNOWN_ENDPOINTS,
    ModelGatewayDefaults,
    ModelSpec,
    PersonaSpec,
    via_gateway,
)
from langop_infra.config.agent import AgentSpec
from langop_infra.config.checks._gateway_routes import gateway_agents, gateway_namespaces
from langop_infra.config.cluster import ClusterSpec, Defaults, gateway_defaults
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, join_path


def _known(names: Iterable[str]) -> str:
    return ", ".join(sorted(names)) or "none"


def _duplicates(
    items: Sequence[tuple[int, str]], path: str, field: str, what: str
) -> list[Problem]:
    first: dict[str, int] = {}
    problems: list[Problem] = []
    for i, name in items:
        if name in first:
            problems.append(
                Problem(
                    join_path(path, f"{field}[{i}].name"),
                    f"duplicate {what} name {name!r}; names must be unique in a cluster "
                    f"(first at {join_path(path, f'{field}[{first[name]}]')})",
                )
            )
        else:
            first[name] = i
    return problems


def fallback_cycles(models: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Every cycle of the fallback graph once, each starting at its first model in order."""
    cycles: list[list[str]] = []
    seen: set[frozenset[str]] = set()
    for start in models:
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in models.get(node, ()):
                if nxt == start:
                    key = frozenset(trail)
                    if key not in seen:
                        seen.add(key)
                        cycles.append([*trail, start])
                elif nxt not in trail and nxt in models:
                    stack.append((nxt, [*trail, nxt]))
    return cycles


def models_problems(
    models: Sequence[tuple[int, ModelSpec]],
    gateway: ModelGatewayDefaults,
    path: str = "",
    declared: set[str] | None = None,
) -> list[Problem]:
    """Duplicates, fallbacks (exist, through the gateway, no cycle), direct-mode endpoints."""
    declared = declared if declared is not None else {m.name for _, m in models}
    by_name = {m.name: m for _, m in models}
    problems = _duplicates([(i, m.name) for i, m in models], path, "models", "model")
    for i, model in models:
        where = join_path(path, f"models[{i}]")
        for j, fallback in enumerate(model.fallbacks):
            if fallback not in declared:
                problems.append(
                    Problem(
                        join_path(where, f"fallbacks[{j}]"),
                        f"no model named {fallback!r} (known: {_known(declared)}); "
                        f"{did_you_mean(fallback, declared)}declare it under models or remove "
                        "the fallback",
                    )
                )
            elif fallback in by_name and not (
                via_gateway(model, gateway) and via_gateway(by_name[fallback], gateway)
            ):
                problems.append(
                    Problem(
                        join_path(where, f"fallbacks[{j}]"),
                        "fallbacks are applied by the gateway, and this model or its fallback "
                        "is reached directly (gateway: false); route both through the gateway",
                    )
                )
        direct = not via_gateway(model, gateway)
        if direct and model.endpoint is None and model.provider not in KNOWN_ENDPOINTS:
            problems.append(
                Problem(
                    join_path(where, "endpoint"),
                    f"agents call {model.provider!r} models directly when the gateway is "
                    "off, and need its endpoint; set endpoint or use the gateway",
                )
            )
    index = {m.name: i for i, m in models}
    graph = {m.name: list(m.fallbacks) for _, m in models}
    for cycle in fallback_cycles(graph):
        problems.append(
            Problem(
                join_path(path, f"models[{index[cycle[0]]}].fallbacks"),
                f"fallback cycle {' -> '.join(cycle)}; remove one of these fallbacks",
            )
        )
    return problems


def agent_model_problems(
    agent: AgentSpec, models: set[str], personas: set[str] | None, path: str = ""
) -> list[Problem]:
    """The agent's model references and persona name exist; each model referenced once.

    ``personas`` None: the caller has no persona list (an agent outside a cluster).
    """
    # ark's ``model:`` may name a model no one declares: passed on, with a warning (advice).
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for j, ref in enumerate(agent.models):
        where = join_path(path, f"models[{j}].name")
        if ref.name not in models:
            problems.append(
                Problem(
                    where,
                    f"no model named {ref.name!r} (known: {_known(models)}); "
                    f"{did_you_mean(ref.name, models)}declare it under models or fix the name",
                )
            )
        if ref.name in seen:
            problems.append(
                Problem(
                    where,
                    f"model {ref.name!r} is referenced twice (first at "
                    f"{join_path(path, f'models[{seen[ref.name]}]')}); reference it once",
                )
            )
        seen.setdefault(ref.name, j)
    if isinstance(agent.persona, str) and personas is not None and agent.persona not in personas:
        problems.append(
            Problem(
                join_path(path, "persona"),
                f"no persona named {agent.persona!r} (known: {_known(personas)}); declare it "
                "under personas or fix the name",
            )
        )
    return problems


def builtin_model_problems(agent: AgentSpec, path: str = "") -> list[Problem]:
    """A ``runtime: builtin`` agent names a model: without one it has no ``MODEL_ENDPOINT``
    or ``LLM_MODEL`` and exits at start."""
    if agent.runtime != "builtin" or agent.model is not None or agent.models:
        return []
    return [
        Problem(
            join_path(path, "model"),
            "a runtime: builtin agent needs a model (without one it exits at start: no "
            "MODEL_ENDPOINT or LLM_MODEL); give it model: <one of models:>, or models: "
            "[{name: ...}]",
            kind="langop_builtin_model",
        )
    ]


def shorthand_problems(
    agent: AgentSpec, models: Sequence[ModelSpec], path: str = ""
) -> list[Problem]:
    """ark's ``model: <id>`` naming no model but the ``modelName`` of several: ambiguous."""
    if agent.model is None or any(m.name == agent.model for m in models):
        return []
    serving = sorted(m.name for m in models if m.model_name == agent.model)
    if len(serving) < 2:
        return []
    return [
        Problem(
            join_path(path, "model"),
            f"models {', '.join(serving)} all serve modelName {agent.model!r}; set model to "
            "one of their names",
        )
    ]


def gateway_problems(
    cluster: ClusterSpec,
    path: str = "",
    tool_index: Sequence[int] | None = None,
    agent_index: Sequence[int] | None = None,
) -> list[Problem]:
    """The gateway's keys (the master key under requireAuth, the agents' own beside a
    master key), and names that would collide with its objects."""
    gateway = gateway_defaults(cluster.defaults)
    if not any(via_gateway(m, gateway) for m in cluster.models):
        return []
    problems: list[Problem] = []
    if gateway.require_auth and gateway.master_key is None:
        problems.append(
            Problem(
                join_path(path, "defaults.modelGateway.masterKey"),
                "requireAuth is true and models use the gateway, which has no key; set "
                "masterKey: {secretKeyRef: {name, key}}",
            )
        )
    problems += agent_keys_problems(cluster, path)
    problems += agent_key_secret_problems(cluster, path)
    tool_index = tool_index if tool_index is not None else range(len(cluster.tools))
    agent_index = agent_index if agent_index is not None else range(len(cluster.agents))
    named = [(f"tools[{i}].name", t.name) for i, t in zip(tool_index, cluster.tools, strict=True)]
    named += [
        (f"agents[{i}].name", a.name) for i, a in zip(agent_index, cluster.agents, strict=True)
    ]
    for where, name in named:
        if name == GATEWAY_NAME:
            problems.append(
                Problem(
                    join_path(path, where),
                    "the model gateway's Deployment and Service are named 'gateway'; rename "
                    "this workload",
                )
            )
    return problems


def _agents(names: Sequence[str]) -> str:
    return f"agent {names[0]} calls" if len(names) == 1 else f"agents {', '.join(names)} call"


def agent_keys_problems(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """The cluster's agents that call its gateways have keys of their own, when needed; and
    ``agentKeys`` comes with a master key, without which LiteLLM's proxy refuses to start."""
    gateway = gateway_defaults(cluster.defaults)
    if gateway.master_key is None and gateway.agent_keys is not None:
        return [
            Problem(
                join_path(path, "defaults.modelGateway.masterKey"),
                "agentKeys needs a masterKey too: LiteLLM's proxy does not start without one "
                "(it stays the admins' key, never an agent's); set masterKey: {secretKeyRef: "
                "{name, key}}",
                kind="langop_gateway_agent_keys",
            )
        ]
    callers = [a for space in gateway_namespaces(cluster) for a in gateway_agents(cluster, space)]
    return missing_agent_keys(gateway, callers, path)


def agent_key_problems(
    agent: AgentSpec, models: Sequence[ModelSpec], defaults: Defaults
) -> list[Problem]:
    """A standalone agent calling a gateway whose ``defaults`` name a master key."""
    gateway = gateway_defaults(defaults)
    calls = any(via_gateway(m, gateway) for m in models)
    return missing_agent_keys(gateway, [agent.name] if calls else [])


def missing_agent_keys(
    gateway: ModelGatewayDefaults, callers: Sequence[str], path: str = ""
) -> list[Problem]:
    """A gateway with a master key admits agents only with keys of their own: the master key
    is never handed out, so agents that call it (``callers``) need ``agentKeys``."""
    if gateway.master_key is None or gateway.agent_keys is not None or not callers:
        return []
    return [
        Problem(
            join_path(path, "defaults.modelGateway.agentKeys"),
            f"{_agents(sorted(set(callers)))} the gateway, whose masterKey agents never get; "
            "set agentKeys: {secretName: <a Secret with one key per agent, named after it>}",
            kind="langop_gateway_agent_keys",
        )
    ]


def agent_key_secret_problems(cluster: ClusterSpec, path: str = "") -> list[Problem]:
    """An ``agentKeys`` Secret declared under ``secrets`` has a key for every calling agent."""
    gateway = gateway_defaults(cluster.defaults)
    if gateway.agent_keys is None:
        return []
    name = gateway.agent_keys.secret_name
    keys = cluster.secrets.get(name)
    if not isinstance(keys, Mapping):
        return []
    callers = [a for space in gateway_namespaces(cluster) for a in gateway_agents(cluster, space)]
    return [
        Problem(
            join_path(path, "defaults.modelGateway.agentKeys.secretName"),
            f"secret {name!r} under secrets has no key {agent!r} for agent {agent!r}, which "
            f"calls the gateway; add {agent}: <its own key> to that secret",
        )
        for agent in sorted(set(callers))
        if agent not in keys
    ]


def secret_key_problems(
    cluster: ClusterSpec, models: Sequence[tuple[int, ModelSpec]], path: str = ""
) -> list[Problem]:
    """Model API keys and the master key that point at a declared secret lacking the key."""
    refs = [
        (f"models[{i}].apiKey.secretKeyRef.key", m.api_key.secret_key_ref)
        for i, m in models
        if m.api_key is not None
    ]
    master = gateway_defaults(cluster.defaults).master_key
    if master is not None:
        refs.append(("defaults.modelGateway.masterKey.secretKeyRef.key", master.secret_key_ref))
    problems: list[Problem] = []
    for where, ref in refs:
        keys = cluster.secrets.get(ref.name)
        if isinstance(keys, Mapping) and ref.key not in keys:
            problems.append(
                Problem(
                    join_path(path, where),
                    f"secret {ref.name!r} under secrets has no key {ref.key!r} (it has: "
                    f"{_known(keys)}); fix the key or add it",
                )
            )
    return problems


def cluster_model_problems(
    cluster: ClusterSpec,
    path: str = "",
    *,
    model_index: Sequence[int] | None = None,
    persona_index: Sequence[int] | None = None,
    tool_index: Sequence[int] | None = None,
    agent_index: Sequence[int] | None = None,
    declared_models: set[str] | None = None,
    declared_personas: set[str] | None = None,
) -> list[Problem]:
    """Every cross-item problem of the cluster's models, personas and model references.

    The ``*_index`` lists give each valid item's position in the document (items that failed
    their own validation are left out of ``cluster``); ``declared_*`` hold every name the
    document declares, valid or not, so a reference to a broken model is not "unknown".
    """
    model_index = model_index if model_index is not None else range(len(cluster.models))
    persona_index = persona_index if persona_index is not None else range(len(cluster.personas))
    agent_index = agent_index if agent_index is not None else range(len(cluster.agents))
    models = list(zip(model_index, cluster.models, strict=True))
    personas: list[tuple[int, PersonaSpec]] = list(
        zip(persona_index, cluster.personas, strict=True)
    )
    declared_models = declared_models or {m.name for _, m in models}
    declared_personas = declared_personas or {p.name for _, p in personas}
    gateway = gateway_defaults(cluster.defaults)
    problems = models_problems(models, gateway, path, declared_models)
    problems += _duplicates([(i, p.name) for i, p in personas], path, "personas", "persona")
    for i, agent in zip(agent_index, cluster.agents, strict=True):
        problems += agent_model_problems(
            agent, declared_models, declared_personas, join_path(path, f"agents[{i}]")
        )
        where = join_path(path, f"agents[{i}]")
        problems += shorthand_problems(agent, [m for _, m in models], where)
        problems += builtin_model_problems(agent, where)
    problems += gateway_problems(cluster, path, tool_index, agent_index)
    problems += secret_key_problems(cluster, models, path)
    return problems
