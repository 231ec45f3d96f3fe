"""A standalone LanguageAgent's A2A peers and memory: the LanguageAgent objects it was
handed as peers, or those built earlier in the program and named by reference, and the
LanguageMemory (LanguageCluster resolves its own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, cast

import pulumi

from langop_infra.components import _agent_namespace as agent_namespace
from langop_infra.components._k8s import find_component
from langop_infra.components.args import AgentPeerRefArgs
from langop_infra.config.agent import AgentSpec, ToolRef
from langop_infra.config.checks._peer_checks import mode_problems, peer_problems
from langop_infra.core.problems import Problem, SpecError
from langop_infra.manifests import _contract as contract
from langop_infra.manifests._a2a import peer_targets
from langop_infra.manifests._agent_features import AgentFeatures


class PeerAgent(Protocol):
    """What a caller reads of a peer LanguageAgent handed over as an object (a protocol: this
    module is imported by the one that defines LanguageAgent)."""

    @property
    def spec(self) -> AgentSpec: ...

    @property
    def namespace(self) -> pulumi.Output[str]: ...


if TYPE_CHECKING:
    # A peer LanguageAgent, or a reference to one.
    PeerEntry = AgentPeerRefArgs | PeerAgent
else:  # what Pulumi's analyzer reads: no Union in a package schema
    PeerEntry = AgentPeerRefArgs

PeerIndex = Mapping[tuple[str, str], AgentSpec]


def peer_document(
    data: dict[str, object],
) -> tuple[dict[tuple[str, str], AgentSpec], dict[str, PeerAgent], list[agent_namespace.Placed]]:
    """Replace LanguageAgent objects in ``agents`` by references; return their specs by
    (namespace, name), the objects by name, and the peers whose namespace is an Output:
    filed under :data:`agent_namespace.FOLLOWING`, taken to be in the caller's namespace and
    checked as both resolve."""
    given = data.get("agents")
    if not isinstance(given, list):
        return {}, {}, []
    items = cast("list[object]", given)
    specs: dict[tuple[str, str], AgentSpec] = {}
    objects: dict[str, PeerAgent] = {}
    following: list[agent_namespace.Placed] = []
    refs: list[object] = []
    for i, item in enumerate(items):
        spec = getattr(item, "spec", None)
        if not isinstance(spec, AgentSpec) or isinstance(item, pulumi.Output):
            refs.append(cast(object, item))
            continue
        peer = cast("PeerAgent", item)
        objects[spec.name] = peer
        namespace = peer.namespace
        if agent_namespace.follows(item):
            specs[(agent_namespace.FOLLOWING, spec.name)] = spec.model_copy(
                update={"namespace": None}
            )
            following.append((f"agents[{i}]", f"LanguageAgent {spec.name!r}", namespace))
            refs.append({"name": spec.name})
        else:
            space = spec.namespace or contract.DEFAULT_NAMESPACE
            specs[(space, spec.name)] = spec
            refs.append({"name": spec.name, "namespace": space})
    data["agents"] = refs
    return specs, objects, following


def placed_peers(given: PeerIndex, namespace: str) -> dict[tuple[str, str], AgentSpec]:
    """``given`` with the following peers filed in the caller's ``namespace``."""
    return {
        (namespace if space == agent_namespace.FOLLOWING else space, name): spec
        for (space, name), spec in given.items()
    }


def resolve_features(
    agent: AgentSpec, given_memory: Any = None, given_peers: PeerIndex | None = None
) -> tuple[AgentSpec, AgentFeatures, list[Any]]:
    """The agent (with its managed memory's tool reference added), its peers (``given_peers``,
    the LanguageAgent objects it was handed, or agents built earlier) and memory
    (``given_memory``, the LanguageMemory object it was handed, or one built earlier), and
    the memory's LanguageTool when it runs one; every miss at once."""
    namespace = agent.namespace or contract.DEFAULT_NAMESPACE
    handed = placed_peers(given_peers or {}, namespace)
    known: dict[tuple[str, str], AgentSpec] = {(namespace, agent.name): agent}
    for peer in agent.agents:
        if peer.remote:
            continue
        key = (peer.namespace or namespace, peer.name)
        built = find_component("LanguageAgent", *key)
        if key in handed:
            known[key] = handed[key]
        elif built is not None:
            known[key] = built.spec
    indexed = [(0, agent), *((1, spec) for spec in known.values() if spec is not agent)]
    problems = mode_problems(agent)
    problems += [
        Problem(p.path.removeprefix("agents[0]."), p.message, p.kind)
        for p in peer_problems(indexed, namespace)
        if p.path.startswith("agents[0].")
    ]
    memory = None
    tools: list[object] = []
    if agent.memory is not None:
        space = agent.memory.namespace or namespace
        built_memory = given_memory or find_component("LanguageMemory", space, agent.memory.name)
        if built_memory is None:
            problems.append(
                Problem(
                    "memory.name",
                    f"no LanguageMemory {agent.memory.name!r} in namespace {space!r}; create "
                    "it before the agent",
                )
            )
        else:
            memory = built_memory.spec
            if built_memory.tool is not None:
                ref = ToolRef(name=memory.name, namespace=space)
                # One handed over as an object is referenced already (see with_memory_tool).
                if given_memory is None:
                    agent = agent.model_copy(update={"tools": [*agent.tools, ref]})
                tools.append(built_memory.tool)
    if problems:
        raise SpecError(problems)
    return agent, AgentFeatures(tuple(peer_targets(agent, namespace, known)), memory), tools
