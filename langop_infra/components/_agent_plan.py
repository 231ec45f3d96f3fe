"""An agent's plan: its document validated, its tools and models resolved, before any
registration. ``LanguageCluster`` hands agents a plan; a standalone ``LanguageAgent`` makes one."""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, cast

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.components import (
    _agent_namespace as agent_namespace,
    _in_cluster as in_cluster,
    _inputs as inputs,
    _namespace as namespaces,
    _user_meta as user_meta,
)
from langop_infra.components._agent_http_tools import http_tool_document, resolve_http_tools
from langop_infra.components._k8s import component_error, find_component
from langop_infra.components._peers import peer_document, placed_peers, resolve_features
from langop_infra.config._memory import MemorySpec
from langop_infra.config._model import ModelSpec, PersonaSpec
from langop_infra.config.agent import AgentSpec, ToolRef, passthrough_model
from langop_infra.config.checks._admission import deploy_problems
from langop_infra.config.checks._advice import agent_warnings, passthrough_warning
from langop_infra.config.checks._image_pins import workload_unpinned_images
from langop_infra.config.checks._model_validation import agent_key_problems
from langop_infra.config.checks._references import sidecar_problems
from langop_infra.config.checks._validation import parse_agent
from langop_infra.config.cluster import Defaults
from langop_infra.core._program_index import built_components
from langop_infra.core._text import did_you_mean
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract
from langop_infra.manifests._a2a import peer_targets
from langop_infra.manifests._agent_features import NO_FEATURES, AgentFeatures

# A tool an agent may reach: its target, and its component when this program built it.
ToolIndex = Mapping[tuple[str, str], tuple[contract.ToolTarget, Any]]


@dataclasses.dataclass(frozen=True)
class AgentPlan:
    """A validated agent with its tools resolved: what LanguageCluster hands an agent."""

    spec: AgentSpec
    defaults: Defaults
    part_of: str
    targets: list[contract.ToolTarget]
    tools: list[Any]
    managed_secrets: Mapping[str, k8s.core.v1.Secret] = dataclasses.field(
        default_factory=dict[str, k8s.core.v1.Secret]
    )
    models: Sequence[ModelSpec] = ()
    persona: PersonaSpec | None = None
    # False while the image is an Output not resolved yet: its labels wait for it.
    image_known: bool = True
    #: A2A peers and memory.
    features: AgentFeatures = NO_FEATURES
    # Its namespace is an Output: ``spec``, ``part_of`` and ``targets`` hold a stand-in for
    # it, which :meth:`placed` replaces; ``followers`` are ``(index in tools, LanguageTool)``
    # of the tools whose namespace is an Output (see components/_agent_namespace.py).
    namespace_late: bool = False
    part_of_given: bool = True
    followers: Sequence[tuple[int, Any]] = ()
    # ``(field, HttpTool)`` of the HttpTools whose namespace is an Output.
    http_followers: Sequence[agent_namespace.Follower] = ()
    # Other components in an Output namespace it was handed (gateway models, A2A peers).
    others: Sequence[agent_namespace.Placed] = ()
    # The Secrets its HttpTools' credentials are read from (a given value's, a user's own).
    http_secrets: Sequence[Any] = ()
    # The A2A peers handed over as LanguageAgent objects: specs by (namespace, name), a
    # following one's (its namespace an Output) under agent_namespace.FOLLOWING; objects by name.
    peer_specs: Mapping[tuple[str, str], AgentSpec] = dataclasses.field(
        default_factory=dict[tuple[str, str], AgentSpec]
    )
    peer_objects: Mapping[str, Any] = dataclasses.field(default_factory=dict[str, Any])

    def placed(self, spec: AgentSpec) -> tuple[str, list[contract.ToolTarget]]:
        """``part_of`` and ``targets`` for ``spec``, the agent as it resolves."""
        if not self.namespace_late:
            return self.part_of, list(self.targets)
        part_of = self.part_of if self.part_of_given else agent_namespace.namespace_of(spec)
        return part_of, agent_namespace.retargeted(self.targets, self.namespace, spec)

    def features_for(self, spec: AgentSpec) -> AgentFeatures:
        """``features`` for ``spec``, the agent as it resolves: its peers in its namespace."""
        if not self.namespace_late or not self.features.peers:
            return self.features
        namespace = agent_namespace.namespace_of(spec)
        known = {**placed_peers(self.peer_specs, namespace), (namespace, spec.name): spec}
        peers = tuple(peer_targets(spec, namespace, known))
        return dataclasses.replace(self.features, peers=peers)

    @property
    def namespace(self) -> str:
        return self.spec.namespace or contract.DEFAULT_NAMESPACE


def agent_document(
    name: str, args: Any, fields: Mapping[str, Any]
) -> tuple[dict[str, Any], ToolIndex]:
    """One mapping from ``args`` and keyword fields, and the tools given as objects."""
    data = inputs.merged_input(args, fields, AgentSpec)
    data.setdefault("name", name)
    given: dict[tuple[str, str], tuple[contract.ToolTarget, Any]] = {}
    refs: list[Any] = []
    inputs.refuse_whole_lists(data, AgentSpec, f"LanguageAgent {data.get('name')!r}")
    _refuse_single_tool(data.get("tools"), f"LanguageAgent {data.get('name')!r}")
    items: list[Any] = data.get("tools") or []
    for item in items:
        # An Output item stays as it is: resolve() refuses it with its path (tools decide
        # which policies exist), where getattr would lift ``target`` into another Output.
        target: Any = item
        if not isinstance(item, pulumi.Output):
            target = getattr(item, "target", item)
        follows = agent_namespace.follows(cast("object", item))
        if isinstance(target, contract.ToolTarget) and follows:
            # Its namespace is an Output: taken to be the agent's, checked as both resolve.
            given[(agent_namespace.FOLLOWING, target.name)] = (target, item)
            refs.append({"name": target.name})
        elif isinstance(target, contract.ToolTarget):
            given[(target.namespace, target.name)] = (target, None if item is target else item)
            refs.append({"name": target.name, "namespace": target.namespace})
        else:
            refs.append(item)
    if "tools" in data:
        data["tools"] = refs
    return data, given


def _refuse_single_tool(tools: object, subject: str) -> None:
    """``tools=memory`` for ``tools=[memory]``: a field problem, not a TypeError."""
    target = getattr(tools, "target", tools)
    if isinstance(target, contract.ToolTarget) or isinstance(tools, Mapping):
        one = "LanguageTool" if isinstance(target, contract.ToolTarget) else "reference"
        name = (
            target.name
            if isinstance(target, contract.ToolTarget)
            else cast("Mapping[str, Any]", tools).get("name")
        )
        fix = f"tools=[{name}]" if one == "LanguageTool" else f"tools=[{{'name': {name!r}}}]"
        message = f"expected a list of tools, got one {one}; write {fix}"
        raise SpecError([Problem("tools", message)], subject=subject)


def model_document(
    data: dict[str, Any],
    gateways: dict[str, str] | None = None,
    following: list[agent_namespace.Placed] | None = None,
) -> dict[str, ModelSpec]:
    """Replace LanguageModel objects in ``model``/``models`` by their names; return their
    specs by name (and put the namespace of each one's gateway in ``gateways``, or, when it
    is an Output, the model in ``following``: checked against the agent's as both resolve)."""
    given: dict[str, ModelSpec] = {}

    def name_of(item: Any, field: str) -> Any:
        spec = getattr(item, "spec", None)
        if isinstance(spec, ModelSpec):
            given[spec.name] = spec
            gateway = getattr(item, "gateway_namespace", None)
            if gateways is not None and isinstance(gateway, str):
                gateways[spec.name] = gateway
            if following is not None and isinstance(gateway, pulumi.Output):
                placed = cast(pulumi.Output[str], gateway)
                following.append((field, f"LanguageModel {spec.name!r}", placed))
            return spec.name
        return item

    if data.get("model") is not None:
        data["model"] = name_of(data["model"], "model")
    if data.get("models"):
        data["models"] = [
            {"name": name_of(m, f"models[{i}]")}
            if isinstance(getattr(m, "spec", None), ModelSpec)
            else m
            for i, m in enumerate(data["models"])
        ]
    return given


def gateway_problems(agent: AgentSpec, gateways: Mapping[str, str]) -> list[Problem]:
    """A model that goes through a LanguageCluster's gateway, used by an agent of another
    namespace: the agent would call ``gateway.<its namespace>``, which nothing creates."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    refs = [("model", agent.model)] if agent.model else []
    refs += [(f"models[{i}].name", r.name) for i, r in enumerate(agent.models)]
    return [
        Problem(
            where,
            f"LanguageModel {name!r} goes through the model gateway of namespace "
            f"{gateways[name]!r}, and an agent calls the gateway of its own namespace "
            f"({namespace!r}), which nothing creates; declare the agent among that "
            f"LanguageCluster's agents (with namespace: {namespace!r} it gets a gateway "
            f"there), put it in namespace {gateways[name]!r}, or use a model with gateway: false",
            "langop_gateway_elsewhere",
        )
        for where, name in refs
        if name in gateways and gateways[name] != namespace
    ]


def resolve_models(agent: AgentSpec, given: Mapping[str, ModelSpec]) -> list[ModelSpec]:
    """The referenced models: given as objects, or LanguageModels built earlier; every miss
    at once."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    found: list[ModelSpec] = []
    problems: list[Problem] = []
    refs = [("model", agent.model)] if agent.model else []
    refs += [(f"models[{i}].name", r.name) for i, r in enumerate(agent.models)]
    for where, name in refs:
        built = find_component("LanguageModel", namespace, name)
        spec = given.get(name) or (built.spec if built is not None else None)
        if spec is None and where == "model":
            # ark's model id with no LanguageModel: passed on as AGENT_MODEL (plan_agent warns).
            continue
        if spec is None:
            problems.append(
                Problem(
                    where,
                    f"no LanguageModel {name!r} in namespace {namespace!r}; create it before "
                    "the agent, pass the LanguageModel itself, or declare it in the same "
                    "LanguageCluster",
                )
            )
        else:
            found.append(spec)
    if isinstance(agent.persona, str):
        problems.append(
            Problem(
                "persona",
                "a persona name needs a LanguageCluster's personas; pass the persona itself "
                "(a LanguagePersona or a dict)",
            )
        )
    if problems:
        raise SpecError(problems)
    return found


def resolve_tools(
    agent: AgentSpec, index: ToolIndex
) -> tuple[list[contract.ToolTarget], list[Any]]:
    """Targets of the enabled references, in order, and their components; every miss at
    once. A reference not in ``index`` may name a LanguageTool built earlier in the program."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    targets: list[contract.ToolTarget] = []
    tools: list[object] = []
    resolved: list[contract.ToolTarget | None] = []
    problems: list[Problem] = []
    for i, ref in enumerate(agent.tools):
        key = (ref.namespace or namespace, ref.name)
        found = (index.get(key) or _built_tool(*key)) if ref.enabled else None
        resolved.append(found[0] if found else None)
        if not ref.enabled:
            continue
        if found is None:
            problems.append(
                Problem(
                    f"tools[{i}].name",
                    f"no LanguageTool {ref.name!r} in namespace {key[0]!r}; "
                    f"{did_you_mean(ref.name, _known_tools(index, key[0]))}create it before "
                    "the agent, pass the LanguageTool object itself, declare the tool in the "
                    "same LanguageCluster, or set enabled: false",
                )
            )
            continue
        target, tool = found
        if not getattr(tool, "target_known", True):
            problems.append(
                Problem(
                    f"tools[{i}]",
                    f"LanguageTool {ref.name!r} takes its port or mcpPath from an Output; "
                    "an agent needs them when the program runs (its config and network "
                    "policies): give that tool plain values",
                )
            )
            continue
        targets.append(dataclasses.replace(target, required=ref.required))
        tools.append(tool)
    problems += sidecar_problems(agent, resolved, "", namespace)
    if problems:
        raise SpecError(problems)
    return targets, tools


def _known_tools(index: ToolIndex, namespace: str) -> set[str]:
    """The tools an agent in ``namespace`` could name: those handed in and those built."""
    built = {n for kind, ns, n in built_components() if kind == "LanguageTool" and ns == namespace}
    return built | {n for ns, n in index if ns == namespace}


def _built_tool(namespace: str, name: str) -> tuple[contract.ToolTarget, Any] | None:
    tool = find_component("LanguageTool", namespace, name)
    # Found in ``namespace``: its target's may be a stand-in (a namespace from an Output).
    target = dataclasses.replace(tool.target, namespace=namespace) if tool is not None else None
    return (target, tool) if target is not None else None


def plan_agent(name: str, args: object, fields: Mapping[str, object]) -> tuple[AgentPlan, Any]:
    """Validate a standalone agent and resolve its tools; return its plan and its spec as
    it will be once every Output resolves (an Output itself when one does not yet)."""
    data, given = agent_document(name, args, fields)
    given_memory = memory_document(data)
    gateways: dict[str, str] = {}
    others: list[agent_namespace.Placed] = []
    given_models = model_document(data, gateways, others)
    given_http, http_followers, http_objects = http_tool_document(data)
    given_peers, peer_objects, peer_followers = peer_document(data)
    others += peer_followers
    subject = f"LanguageAgent {data.get('name')!r}"
    with component_error(subject):
        part_of = data.pop("part_of", None) or data.pop("partOf", None)
        defaults = Defaults.model_validate(data.pop("defaults", None) or {})

        def parse(document: object) -> AgentSpec:
            agent = parse_agent(document)
            problems = deploy_problems(agent, defaults)
            if problems:
                raise SpecError(problems)
            return with_memory_tool(resolve_http_tools(agent, given_http), given_memory)

        agent, final = inputs.resolve(
            data, parse, lambda spec: spec, _structure, subject, namespaces.LATE
        )
        late = isinstance(final, inputs.Pending) and bool(
            final.depends(agent_namespace.namespace_of)
        )
        following = {n for ns, n in given if ns == agent_namespace.FOLLOWING}
        given = agent_namespace.rekeyed(given, agent_namespace.namespace_of(agent))
        if late:
            agent_namespace.refuse_unplaced(
                agent, given, given_models, subject, given_memory, given_peers
            )
        agent, features, memory_tools = resolve_features(agent, given_memory, given_peers)
        given = {**given, **memory_index(agent, memory_tools)}
        targets, tools = resolve_tools(agent, given)
        models = resolve_models(agent, given_models)
        if not late and (problems := gateway_problems(agent, gateways)):
            raise SpecError(problems)
        if problems := agent_key_problems(agent, models, defaults):
            raise SpecError(problems)
        in_cluster.refuse_unknown_services(
            called_addresses(agent), agent_namespace.namespace_of(agent)
        )
    warnings = agent_warnings(agent) + workload_unpinned_images(agent)
    if (model := passthrough_model(agent, {m.name: m for m in models})) is not None:
        warnings.append(passthrough_warning(model, "model"))
    for warning in warnings:
        pulumi.log.warn(user_meta.pythonic(f"{subject}: {warning}"))
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    plan = AgentPlan(
        agent,
        defaults,
        part_of or namespace,
        targets,
        tools,
        models=models,
        # The image's labels are built from the real image as it resolves (inputs.Pending).
        image_known=True,
        features=features,
        namespace_late=late,
        part_of_given=bool(part_of),
        http_followers=http_followers,
        others=others,
        http_secrets=[s for t in http_objects if t.spec.enabled for s in t.read_secrets],
        peer_specs=given_peers,
        peer_objects=peer_objects,
        followers=[
            (i, given[(namespace, r.name)][1])
            for i, r in enumerate(agent.tools)
            if (r.name in following and not r.namespace and (namespace, r.name) in given)
            or (i == len(agent.tools) - 1 and _follows_with_tool(given_memory))
        ],
    )
    return plan, final


def called_addresses(agent: AgentSpec) -> list[tuple[str, object]]:
    """(field, URL) of the MCP servers and remote A2A peers the user gave the agent."""
    found: list[tuple[str, object]] = [
        (f"mcp_servers[{i}].url", str(s.url)) for i, s in enumerate(agent.mcp_servers)
    ]
    found += [(f"agents[{i}].url", str(p.url)) for i, p in enumerate(agent.agents) if p.url]
    return found


def memory_document(data: dict[str, Any]) -> Any:
    """Replace a LanguageMemory object in ``memory`` by a reference; return the object. One
    whose namespace is an Output is taken to be in the agent's namespace."""
    memory = data.get("memory")
    spec = getattr(memory, "spec", None)
    if not isinstance(spec, MemorySpec):
        return None
    ref: dict[str, Any] = {"name": spec.name}
    if not agent_namespace.follows(memory) and spec.namespace:
        ref["namespace"] = spec.namespace
    data["memory"] = ref
    return memory


def with_memory_tool(agent: AgentSpec, memory: Any) -> AgentSpec:
    """``agent`` referencing the tool of the managed LanguageMemory it was handed, as every
    parse of it must (its objects are rebuilt as its Outputs resolve); one that follows the
    agent's namespace by name alone."""
    if getattr(memory, "tool", None) is None:
        return agent
    namespace = None if agent_namespace.follows(memory) else memory.spec.namespace
    ref = ToolRef(name=memory.spec.name, namespace=namespace)
    return agent.model_copy(update={"tools": [*agent.tools, ref]})


def _follows_with_tool(memory: Any) -> bool:
    """A managed LanguageMemory (its tool the agent's last reference) in an Output namespace."""
    return agent_namespace.follows(memory) and getattr(memory, "tool", None) is not None


def memory_index(agent: AgentSpec, tools: Sequence[Any]) -> dict[tuple[str, str], Any]:
    """The managed memory's LanguageTool filed where the agent's reference finds it: a
    following one (its namespace an Output) in the agent's namespace."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    index: dict[tuple[str, str], Any] = {}
    for tool in tools:
        target = tool.target
        if agent_namespace.follows(tool):
            target = dataclasses.replace(target, namespace=namespace)
        index[(target.namespace, target.name)] = (target, tool)
    return index


def _structure(agent: AgentSpec) -> tuple[Any, ...]:
    return (
        agent.name,
        agent.tools,
        sorted(agent.secret_env),
        agent.egress,
        bool(agent.ports),
        agent.workspace is None,
        agent.autoscaling is None,
        agent.service_account is not None and agent.service_account.create,
    )
