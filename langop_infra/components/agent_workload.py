"""An agent's workload (a Deployment, or a CronJob for a scheduled agent) and its A2A card
ConfigMap: registration only, from the specs ``manifests`` built."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from langop_infra.components import inputs
from langop_infra.components.k8s import object_meta
from langop_infra.config.agent import AgentSpec
from langop_infra.config.names import A2A_CARD_FILE, a2a_card_config_map_name
from langop_infra.config.schedule import ScheduleSpec
from langop_infra.manifests.cronjob import cronjob_spec


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
    spec = _cron_spec(schedule, deployment)
    return None, k8s.batch.v1.CronJob(key, metadata=metadata, spec=spec, opts=opts)


def _cron_spec(schedule: ScheduleSpec, deployment: Any) -> Any:
    if isinstance(deployment, pulumi.Output):
        resolved: pulumi.Output[dict[str, Any]] = deployment
        return resolved.apply(lambda spec: cronjob_spec(schedule, spec))
    return cronjob_spec(schedule, deployment)


def register_card(
    key: str,
    agent: AgentSpec,
    namespace: str,
    labels: dict[str, str],
    objects: Any,
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
