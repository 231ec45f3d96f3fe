"""The Kubernetes objects the builders make, as TypedDicts (in the manner of
pulumi-kubernetes' ``*ArgsDict``, with plain values): strict pyright checks every key a
builder writes and every key a caller reads. Keys are the API's camelCase; ``from`` and
``except`` are Python keywords, so the types holding them use the functional form.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict

Protocol = Literal["TCP", "UDP", "SCTP"]


class LabelSelectorDict(TypedDict):
    """A label selector by labels alone (``{}`` selects every pod)."""

    matchLabels: NotRequired[dict[str, str]]


IPBlockDict = TypedDict(
    "IPBlockDict",
    {"cidr": str, "except": NotRequired[list[str]]},
)
"""An address range, less the ranges under ``except``."""


class NetworkPolicyPeerDict(TypedDict):
    """Pods (by labels, in namespaces by labels) or an address range."""

    podSelector: NotRequired[LabelSelectorDict]
    namespaceSelector: NotRequired[LabelSelectorDict]
    ipBlock: NotRequired[IPBlockDict]


class NetworkPolicyPortDict(TypedDict):
    """One port a rule admits."""

    protocol: Protocol
    port: int


NetworkPolicyIngressRuleDict = TypedDict(
    "NetworkPolicyIngressRuleDict",
    {"from": list[NetworkPolicyPeerDict], "ports": list[NetworkPolicyPortDict]},
)
"""Traffic from these peers on these ports."""


class NetworkPolicyEgressRuleDict(TypedDict):
    """Traffic to these peers, on these ports (every port when ``ports`` is absent)."""

    to: list[NetworkPolicyPeerDict]
    ports: NotRequired[list[NetworkPolicyPortDict]]


class NetworkPolicySpecDict(TypedDict):
    """A NetworkPolicy's spec: the pods it selects and what it admits."""

    podSelector: LabelSelectorDict
    policyTypes: list[Literal["Ingress", "Egress"]]
    ingress: NotRequired[list[NetworkPolicyIngressRuleDict]]
    egress: NotRequired[list[NetworkPolicyEgressRuleDict]]


class ObjectMetaDict(TypedDict):
    """The metadata the builders set."""

    name: str
    namespace: NotRequired[str]
    labels: NotRequired[dict[str, str]]
    annotations: NotRequired[dict[str, str]]


class NetworkPolicyDict(TypedDict):
    """A whole NetworkPolicy object."""

    apiVersion: Literal["networking.k8s.io/v1"]
    kind: Literal["NetworkPolicy"]
    metadata: ObjectMetaDict
    spec: NetworkPolicySpecDict


# A policy to register: (name, namespace, spec).
PolicyEntry = tuple[str, str, NetworkPolicySpecDict]


class PodDisruptionBudgetSpecDict(TypedDict):
    """A PodDisruptionBudget's spec: one of ``maxUnavailable`` or ``minAvailable``."""

    maxUnavailable: NotRequired[int | str]
    minAvailable: NotRequired[int | str]
    selector: LabelSelectorDict


class CrossVersionObjectReferenceDict(TypedDict):
    """The workload an autoscaler scales."""

    apiVersion: str
    kind: str
    name: str


class MetricTargetDict(TypedDict):
    type: Literal["Utilization"]
    averageUtilization: int


class ResourceMetricSourceDict(TypedDict):
    name: Literal["cpu", "memory"]
    target: MetricTargetDict


class MetricSpecDict(TypedDict):
    type: Literal["Resource"]
    resource: ResourceMetricSourceDict


class HorizontalPodAutoscalerSpecDict(TypedDict):
    """An autoscaling/v2 HorizontalPodAutoscaler's spec."""

    scaleTargetRef: CrossVersionObjectReferenceDict
    minReplicas: int
    maxReplicas: int
    metrics: list[MetricSpecDict]
