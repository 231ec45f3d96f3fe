"""What A2A, a schedule and a memory add to one agent's objects: env, config.yaml sections,
pod labels, the card, the pod's card volume and A2A port, the Service port and policies."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langop_infra.config._memory import MemorySpec
from langop_infra.config._network import NetworkPeer
from langop_infra.config.agent import AgentSpec
from langop_infra.manifests import _a2a as a2a, _cronjob as cronjob, _memory as memory
from langop_infra.manifests._a2a_policies import Policy, a2a_policies, with_peer_egress
from langop_infra.manifests._contract import EndpointStyle, EnvVar, ToolTarget
from langop_infra.manifests._k8s_types import PodSpecDict, ServiceSpecDict


@dataclass(frozen=True)
class AgentFeatures:
    """What an agent's plan resolved beyond its tools and models: its A2A peers and its
    memory (a managed memory is among its tool targets too)."""

    peers: Sequence[a2a.PeerTarget] = ()
    memory: MemorySpec | None = None


NO_FEATURES = AgentFeatures()


def feature_env(
    agent: AgentSpec,
    namespace: str,
    features: AgentFeatures,
    targets: Sequence[ToolTarget],
    style: EndpointStyle = "base",
) -> list[EnvVar]:
    """A2A env, memory env, and scheduled mode's ``AGENT_MODE``/``AGENT_INPUT``."""
    env = a2a.a2a_env(agent, features.peers, namespace)
    env += memory.memory_parts(features.memory, namespace, targets, style)[0]
    if agent.schedule is not None:
        env += cronjob.schedule_env(agent.schedule)
    return env


def feature_config(
    agent: AgentSpec,
    namespace: str,
    features: AgentFeatures,
    targets: Sequence[ToolTarget],
    style: EndpointStyle = "base",
) -> dict[str, object]:
    """config.yaml ``a2a:``, ``agents:``, ``memory:`` and ``schedule:``, each when set."""
    doc = a2a.a2a_config(agent, namespace, features.peers)
    scope = agent.memory.scope if agent.memory is not None else "conversation"
    doc.update(memory.memory_parts(features.memory, namespace, targets, style, scope)[1])
    if agent.schedule is not None:
        doc.update(cronjob.schedule_config(agent.schedule))
    return doc


def card_text(agent: AgentSpec, namespace: str) -> str | None:
    """The agent card file, or None for an agent without ``a2a``."""
    return a2a.card_json(a2a.agent_card(agent, namespace)) if agent.a2a is not None else None


def feature_pod(
    pod: PodSpecDict, agent: AgentSpec, peers: Sequence[a2a.PeerTarget] = ()
) -> PodSpecDict:
    """The agent's pod with its card volume and A2A container port, when it serves A2A, and
    the service-account tokens it sends to peers that list it by identity."""
    pod = a2a.with_peer_tokens(pod, peers)
    if agent.a2a is None:
        return pod
    return a2a.with_card_volume(a2a.with_a2a_port(pod, agent.a2a), agent.name)


def feature_service(service: ServiceSpecDict | None, agent: AgentSpec) -> ServiceSpecDict | None:
    """Service ``<agent>`` with port ``a2a`` when it serves A2A."""
    if agent.a2a is None:
        return service
    return a2a.with_a2a_service_port(service, agent.name, agent.a2a)


def feature_policies(
    made: Sequence[Policy],
    agent: AgentSpec,
    namespace: str,
    features: AgentFeatures,
    sync_from: Sequence[NetworkPeer] = (),
) -> list[Policy]:
    """The agent's policies, its egress widened to its peers, then its A2A policies."""
    out = with_peer_egress(made, agent.name, features.peers)
    return [*out, *a2a_policies(agent, namespace, features.peers, sync_from)]
