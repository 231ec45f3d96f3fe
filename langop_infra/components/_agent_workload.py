"""An agent's workload (a Deployment, or a CronJob for a scheduled agent), its A2A card
ConfigMap and its peers' card syncs: registration only, from the specs ``manifests`` built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.components import _inputs as inputs
from langop_infra.components._k8s import (
    Meta,
    Namespace,
    api_object,
    child_options,
    find_component,
    kubernetes_access,
    object_meta,
)
from langop_infra.config._names import A2A_CARD_FILE, a2a_card_config_map_name
from langop_infra.config._schedule import ScheduleSpec
from langop_infra.config.agent import AgentSpec
from langop_infra.manifests._a2a import PeerTarget
from langop_infra.manifests._cronjob import cronjob_spec
from langop_infra.manifests._k8s_types import CronJobSpecDict, DeploymentSpecDict
from langop_infra.sync.card_sync import AgentCardSync


def register_workload(
    key: str,
    agent: AgentSpec,
    metadata: Any,
    deployment: Any,
    opts: pulumi.ResourceOptions,
) -> tuple[k8s.apps.v1.Deployment | None, k8s.batch.v1.CronJob | None]:
    """The agent's Deployment, or its CronJob running the same pod template."""
    schedule = agent.schedule
    if schedule is None:
        return k8s.apps.v1.Deployment(key, metadata=metadata, spec=deployment, opts=opts), None
    spec = api_object(_cron_spec(schedule, deployment))
    return None, k8s.batch.v1.CronJob(key, metadata=metadata, spec=spec, opts=opts)


def _cron_spec(
    schedule: ScheduleSpec, deployment: DeploymentSpecDict | pulumi.Output[DeploymentSpecDict]
) -> CronJobSpecDict | pulumi.Output[CronJobSpecDict]:
    if isinstance(deployment, pulumi.Output):
        return deployment.apply(lambda spec: cronjob_spec(schedule, spec))
    return cronjob_spec(schedule, deployment)


def register_card(
    key: str,
    agent: AgentSpec,
    namespace: Namespace,
    labels: Meta,
    objects: object,
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.ConfigMap | None:
    """ConfigMap ``<agent>-a2a-card`` (key ``agent-card.json``) of an agent serving A2A."""
    if agent.a2a is None:
        return None
    name = a2a_card_config_map_name(agent.name)
    return k8s.core.v1.ConfigMap(
        f"{key}-a2a-card",
        metadata=object_meta(name, namespace, labels),
        data={A2A_CARD_FILE: inputs.part(objects, lambda o: o.card_text)},
        opts=opts,
    )


def register_card_syncs(
    key: str,
    parent: pulumi.Resource,
    peers: Sequence[tuple[PeerTarget, pulumi.Output[PeerTarget] | None]],
    access: str,
    opts: pulumi.ResourceOptions | None,
    handed: Mapping[str, Any] | None = None,
) -> list[AgentCardSync]:
    """One AgentCardSync per in-cluster peer, after the peer's workload when it was built
    first (peers may call each other, so the other one of a pair starts unordered, and its
    first sync may find the peer not ready: phase Error, then Synced on the next ``up``).
    Each peer comes with an Output of it as it resolves when its namespace is an Output
    (then it is a stand-in); ``handed`` holds the peer LanguageAgent objects by name."""
    context, kubeconfig = kubernetes_access(opts)
    made: list[AgentCardSync] = []
    for peer, resolved in peers:
        if peer.agent is None or peer.namespace is None:
            continue
        callee = (handed or {}).get(peer.name)
        if callee is None and resolved is None:
            callee = find_component("LanguageAgent", peer.namespace, peer.agent)
        after = [callee.deployment] if callee is not None and callee.deployment else []
        inputs = {
            **_card_target(peer, resolved),
            "access": access,
            "timeout": 10.0,
            "required": False,
            "kube_context": context,
            "kubeconfig": kubeconfig,
        }
        made.append(
            AgentCardSync(
                f"{key}/{peer.name}-card", inputs, opts=child_options(parent, opts, after)
            )
        )
    return made


def _card_target(peer: PeerTarget, resolved: pulumi.Output[PeerTarget] | None) -> dict[str, Any]:
    """Where a peer's card is read: ``peer``'s, or the resolved one's fields as Outputs."""
    if resolved is None:
        return {
            "endpoint": peer.card_url,
            "namespace": peer.namespace,
            "service": peer.agent,
            "port": peer.port,
        }
    return {
        "endpoint": resolved.apply(lambda p: p.card_url),
        "namespace": resolved.apply(lambda p: p.namespace),
        "service": peer.agent,
        "port": peer.port,
    }
