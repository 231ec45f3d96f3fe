"""Pod settings, disruption budgets and autoscalers as plain Kubernetes-shaped data.

:func:`apply_pod_settings` works on any pod template (``{metadata, spec}``), so every
Deployment of the package (tools, agents, a model gateway) takes the same fields the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import cast

from pydantic import BaseModel

from langop_infra.config._pod import Autoscaling, PodSettings, ProbeSpec, WorkloadSpec
from langop_infra.manifests._k8s_types import (
    ContainerDict,
    HorizontalPodAutoscalerSpecDict,
    JSONObject,
    LabelSelectorDict,
    PodDisruptionBudgetSpecDict,
    PodTemplateSpecDict,
    ProbeDict,
)

PROBE_FIELDS = {
    "liveness": "livenessProbe",
    "readiness": "readinessProbe",
    "startup": "startupProbe",
}


def dump(spec: BaseModel) -> JSONObject:
    """A spec as its Kubernetes fields (camelCase, unset fields left out)."""
    return spec.model_dump(by_alias=True, exclude_none=True, exclude_defaults=False)


def probe_manifest(probe: ProbeSpec, base: ProbeDict | None = None) -> ProbeDict:
    """``probe`` over ``base``: the fields it sets replace those of ``base``; a probe without
    a handler keeps the handler of ``base``."""
    out: ProbeDict = {**base} if base else {}
    if probe.has_handler:
        out.pop("httpGet", None)
        out.pop("tcpSocket", None)
        out.pop("exec", None)
    # The ProbeSpec model holds the Probe API's fields, by their API names.
    out.update(cast(ProbeDict, dump(probe)))
    return out


def with_probes(
    container: ContainerDict,
    settings: PodSettings,
    fallback: Mapping[str, ProbeDict] | None = None,
) -> ContainerDict:
    """The container with the probes ``settings`` name merged over its own, or over
    ``fallback[key]`` for a probe the container does not have yet."""
    if settings.probes is None:
        return container
    out: ContainerDict = {**container}
    for field, key in PROBE_FIELDS.items():
        probe = getattr(settings.probes, field)
        if probe is not None:
            base = container.get(key) or (fallback or {}).get(key)
            out[key] = probe_manifest(probe, base)
    return out


def _selector_manifest(selector: BaseModel | None, default: Mapping[str, str]) -> JSONObject:
    if selector is None:
        return {"matchLabels": dict(default)}
    out = dump(selector)
    return {k: v for k, v in out.items() if v}


def apply_pod_settings(
    settings: PodSettings,
    template: PodTemplateSpecDict,
    *,
    container: str,
    selector: Mapping[str, str],
) -> PodTemplateSpecDict:
    """A pod template (``{metadata: {labels, annotations}, spec}``) with ``settings`` applied:
    scheduling fields and pull secrets on the pod, ``envFrom`` and probes on ``container``,
    ``podLabels``/``podAnnotations`` on the template. ``selector`` labels the workload's own
    pods: a topology constraint without labelSelector spreads those."""
    out = copy.deepcopy(template)
    metadata, pod = out.setdefault("metadata", {}), out["spec"]
    if settings.pod_labels:
        # The selector labels must stay: they tie the pods to their Deployment and policies.
        metadata["labels"] = {**settings.pod_labels, **metadata.get("labels", {})}
    if settings.pod_annotations:
        metadata["annotations"] = {**settings.pod_annotations, **metadata.get("annotations", {})}
    if settings.image_pull_secrets:
        pod["imagePullSecrets"] = [{"name": ref.name} for ref in settings.image_pull_secrets]
    if settings.node_selector:
        pod["nodeSelector"] = dict(settings.node_selector)
    if settings.tolerations:
        pod["tolerations"] = [dump(t) for t in settings.tolerations]
    if settings.affinity is not None:
        pod["affinity"] = _prune_object(dump(settings.affinity))
    if settings.topology_spread_constraints:
        pod["topologySpreadConstraints"] = [
            {
                **{k: v for k, v in dump(c).items() if k != "labelSelector"},
                "labelSelector": _selector_manifest(c.label_selector, selector),
            }
            for c in settings.topology_spread_constraints
        ]
    if settings.priority_class_name:
        pod["priorityClassName"] = settings.priority_class_name
    if settings.termination_grace_period_seconds is not None:
        pod["terminationGracePeriodSeconds"] = settings.termination_grace_period_seconds
    pod["containers"] = [
        _main_container(c, settings) if c["name"] == container else c for c in pod["containers"]
    ]
    return out


def _main_container(container: ContainerDict, settings: PodSettings) -> ContainerDict:
    out = with_probes(container, settings)
    if settings.env_from:
        out["envFrom"] = [dump(source) for source in settings.env_from]
    return out


def _prune_object(value: JSONObject) -> JSONObject:
    """Empty lists and mappings left out, as ``kubectl`` would show the object."""
    pruned = {k: _prune(v) for k, v in value.items()}
    return {k: v for k, v in pruned.items() if v not in ([], {})}


def _prune(value: object) -> object:
    if isinstance(value, dict):
        return _prune_object(cast("JSONObject", value))
    if isinstance(value, list):
        return [_prune(v) for v in cast("list[object]", value)]
    return value


def pod_count(workload: WorkloadSpec) -> int:
    """The pods the workload keeps running: its replicas, or its HPA's minimum."""
    if workload.autoscaling is not None:
        return workload.autoscaling.min_replicas
    return workload.replicas


def disruption_budget_spec(
    workload: WorkloadSpec, selector: Mapping[str, str]
) -> PodDisruptionBudgetSpecDict | None:
    """A PodDisruptionBudget for a workload that runs several pods (``maxUnavailable: 1``
    unless ``disruptionBudget`` says otherwise), or for any that sets ``disruptionBudget``."""
    budget = workload.disruption_budget
    if budget is None and pod_count(workload) <= 1:
        return None
    matching: LabelSelectorDict = {"matchLabels": dict(selector)}
    if budget is None:
        return {"maxUnavailable": 1, "selector": matching}
    if budget.max_unavailable is not None:
        return {"maxUnavailable": budget.max_unavailable, "selector": matching}
    # The spec holds exactly one of the two (DisruptionBudget refuses both or neither).
    return {"minAvailable": budget.min_available or 0, "selector": matching}


def autoscaler_spec(name: str, autoscaling: Autoscaling) -> HorizontalPodAutoscalerSpecDict:
    """An autoscaling/v2 HorizontalPodAutoscaler spec scaling Deployment ``name`` on CPU."""
    return {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
        "minReplicas": autoscaling.min_replicas,
        "maxReplicas": autoscaling.max_replicas,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {
                        "type": "Utilization",
                        "averageUtilization": autoscaling.target_cpu_utilization_percentage,
                    },
                },
            }
        ],
    }
