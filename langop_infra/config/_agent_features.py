"""An agent's A2A serving and peers, memory and schedule: the fields LanguageAgent gains for
them (their rules across fields are in config/checks/_peer_checks.py)."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import Field

from langop_infra.config._a2a import A2ASpec, AgentPeerRef
from langop_infra.config._fields import HeaderSpec, Spec
from langop_infra.config._memory import MemoryRef
from langop_infra.config._names import peer_header_env_name
from langop_infra.config._network import PeerSpec
from langop_infra.config._schedule import ScheduleSpec


class AgentFeatureFields(Spec):
    """A2A, memory and schedule fields of an agent."""

    a2a: A2ASpec | None = Field(default=None, alias="a2a")  # to_camel would say a2A
    """Serve A2A: a Service port named a2a and an agent card."""
    agents: list[AgentPeerRef] = []
    """A2A peers it calls: {name, namespace} (an agent of the stack) or {name, url, headers}."""
    memory: MemoryRef | None = None
    """A LanguageMemory of the stack the agent uses: {name}."""
    schedule: ScheduleSpec | None = None
    """Run as a CronJob on this schedule (AGENT_MODE=scheduled) instead of a Deployment."""
    metrics_from: list[PeerSpec] = Field(
        default=[],
        description="runtime: builtin: who may reach the health port (9090: /metrics, "
        "/healthz, /readyz), and that port only, e.g. Prometheus (nobody when empty; the "
        "kubelet's probes come from the node).",
    )


def peer_headers(agent: AgentFeatureFields) -> Iterator[tuple[str, str, HeaderSpec]]:
    """Each A2A peer header with its path and env var ``A2A_PEER_<PEER>_HEADER_<HEADER>``."""
    for i, peer in enumerate(agent.agents):
        for j, header in enumerate(peer.headers):
            yield f"agents[{i}].headers[{j}]", peer_header_env_name(peer.name, header.name), header
