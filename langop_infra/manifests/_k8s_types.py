"""The Kubernetes objects the builders make, as TypedDicts (in the manner of
pulumi-kubernetes' ``*ArgsDict``, with plain values): strict pyright checks every key a
builder writes and every key a caller reads. Keys are the API's camelCase; ``from`` and
``except`` are Python keywords, so the types holding them use the functional form.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import NotRequired, TypedDict

Protocol = Literal["TCP", "UDP", "SCTP"]

JSONObject = dict[str, object]
"""A Kubernetes field the builders copy whole from a spec the user wrote (a toleration, an
affinity, an ``envFrom`` source): its shape is the config model's, checked there."""


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


# --- Workloads: what the pod and container builders write -------------------------------


class ObjectFieldSelectorDict(TypedDict):
    fieldPath: str


class SecretKeySelectorDict(TypedDict):
    name: str | None
    key: str | None


class EnvVarSourceDict(TypedDict, total=False):
    """Where an env var's value comes from: the downward API or a Secret key."""

    fieldRef: ObjectFieldSelectorDict
    secretKeyRef: SecretKeySelectorDict


class EnvVarDict(TypedDict):
    """One container env var: a literal ``value`` or a ``valueFrom``."""

    name: str
    value: NotRequired[str | None]
    valueFrom: NotRequired[EnvVarSourceDict]


class VolumeMountDict(TypedDict):
    name: str
    mountPath: str
    readOnly: NotRequired[bool]
    subPath: NotRequired[str]


class KeyToPathDict(TypedDict):
    key: str
    path: str


class ConfigMapVolumeSourceDict(TypedDict):
    name: str
    items: NotRequired[list[KeyToPathDict]]
    defaultMode: NotRequired[int]
    optional: NotRequired[bool]


class VolumeProjectionDict(TypedDict, total=False):
    """One source of a projected volume."""

    configMap: ConfigMapVolumeSourceDict
    secret: JSONObject
    serviceAccountToken: JSONObject


class ProjectedVolumeSourceDict(TypedDict):
    sources: list[VolumeProjectionDict]
    defaultMode: NotRequired[int]


class PersistentVolumeClaimVolumeSourceDict(TypedDict):
    claimName: str
    readOnly: NotRequired[bool]


class EmptyDirVolumeSourceDict(TypedDict, total=False):
    medium: str
    sizeLimit: str


class VolumeDict(TypedDict):
    """A pod volume: one of the sources the restricted Pod Security Standard admits."""

    name: str
    emptyDir: NotRequired[EmptyDirVolumeSourceDict]
    configMap: NotRequired[ConfigMapVolumeSourceDict]
    secret: NotRequired[JSONObject]
    persistentVolumeClaim: NotRequired[PersistentVolumeClaimVolumeSourceDict]
    projected: NotRequired[ProjectedVolumeSourceDict]


class ContainerPortDict(TypedDict):
    name: str
    containerPort: int
    protocol: Protocol


class HTTPGetActionDict(TypedDict):
    path: str
    port: int | str


class ProbeDict(TypedDict, total=False):
    """A liveness, readiness or startup probe: one handler and its timing."""

    httpGet: HTTPGetActionDict
    tcpSocket: JSONObject
    exec: JSONObject
    grpc: JSONObject
    initialDelaySeconds: int
    periodSeconds: int
    timeoutSeconds: int
    successThreshold: int
    failureThreshold: int
    terminationGracePeriodSeconds: int


class ResourceRequirementsDict(TypedDict, total=False):
    requests: dict[str, str]
    limits: dict[str, str]


class CapabilitiesDict(TypedDict):
    drop: list[str]
    add: NotRequired[list[str]]


class SeccompProfileDict(TypedDict):
    type: str


class SecurityContextDict(TypedDict):
    """A container's security context (the restricted standard by default)."""

    allowPrivilegeEscalation: bool
    readOnlyRootFilesystem: bool
    runAsNonRoot: bool
    runAsUser: int | None
    runAsGroup: int | None
    capabilities: CapabilitiesDict
    seccompProfile: SeccompProfileDict
    privileged: bool


class PodSecurityContextDict(TypedDict):
    runAsNonRoot: bool
    runAsUser: int | None
    runAsGroup: int | None
    fsGroup: int | None
    seccompProfile: SeccompProfileDict


class ContainerDict(TypedDict):
    """A container (main, init, sidecar or native sidecar)."""

    name: str
    image: str
    env: list[EnvVarDict]
    resources: ResourceRequirementsDict
    securityContext: SecurityContextDict
    volumeMounts: list[VolumeMountDict]
    command: NotRequired[list[str]]
    args: NotRequired[list[str]]
    imagePullPolicy: NotRequired[str]
    ports: NotRequired[list[ContainerPortDict]]
    envFrom: NotRequired[list[JSONObject]]
    readinessProbe: NotRequired[ProbeDict]
    livenessProbe: NotRequired[ProbeDict]
    startupProbe: NotRequired[ProbeDict]
    restartPolicy: NotRequired[Literal["Always"]]


class LocalObjectReferenceDict(TypedDict):
    name: str


class PodSpecDict(TypedDict):
    """A pod: its containers and volumes, then the scheduling fields of ``podSettings``."""

    automountServiceAccountToken: bool
    securityContext: PodSecurityContextDict
    containers: list[ContainerDict]
    volumes: list[VolumeDict]
    serviceAccountName: NotRequired[str]
    initContainers: NotRequired[list[ContainerDict]]
    restartPolicy: NotRequired[Literal["Always", "OnFailure", "Never"]]
    imagePullSecrets: NotRequired[list[LocalObjectReferenceDict]]
    nodeSelector: NotRequired[dict[str, str]]
    tolerations: NotRequired[list[JSONObject]]
    affinity: NotRequired[JSONObject]
    topologySpreadConstraints: NotRequired[list[JSONObject]]
    priorityClassName: NotRequired[str]
    terminationGracePeriodSeconds: NotRequired[int]


class TemplateMetaDict(TypedDict, total=False):
    """A pod template's metadata (no name: the workload names its pods)."""

    labels: dict[str, str]
    annotations: dict[str, str]


class PodTemplateSpecDict(TypedDict):
    metadata: TemplateMetaDict
    spec: PodSpecDict


class DeploymentStrategyDict(TypedDict):
    type: Literal["Recreate", "RollingUpdate"]


class DeploymentSpecDict(TypedDict):
    """A Deployment's spec; no ``replicas`` when an autoscaler owns the count."""

    replicas: NotRequired[int]
    selector: LabelSelectorDict
    template: PodTemplateSpecDict
    strategy: NotRequired[DeploymentStrategyDict]


class ServicePortDict(TypedDict):
    name: str
    port: int
    targetPort: int | str
    protocol: Protocol


class ServiceSpecDict(TypedDict):
    type: str
    selector: dict[str, str]
    ports: list[ServicePortDict]


class PersistentVolumeClaimResourcesDict(TypedDict):
    requests: dict[str, str]


class PersistentVolumeClaimSpecDict(TypedDict):
    accessModes: list[str]
    resources: PersistentVolumeClaimResourcesDict
    storageClassName: NotRequired[str]


class JobSpecDict(TypedDict):
    backoffLimit: int
    activeDeadlineSeconds: NotRequired[int]
    template: PodTemplateSpecDict


class JobTemplateSpecDict(TypedDict):
    metadata: TemplateMetaDict
    spec: JobSpecDict


class CronJobSpecDict(TypedDict):
    """A batch/v1 CronJob's spec."""

    schedule: str
    timeZone: NotRequired[str]
    concurrencyPolicy: str
    suspend: bool
    startingDeadlineSeconds: NotRequired[int]
    successfulJobsHistoryLimit: int
    failedJobsHistoryLimit: int
    jobTemplate: JobTemplateSpecDict


class ConfigMapDict(TypedDict):
    apiVersion: Literal["v1"]
    kind: Literal["ConfigMap"]
    metadata: ObjectMetaDict
    data: dict[str, str]


class DeploymentDict(TypedDict):
    apiVersion: Literal["apps/v1"]
    kind: Literal["Deployment"]
    metadata: ObjectMetaDict
    spec: DeploymentSpecDict


class ServiceDict(TypedDict):
    apiVersion: Literal["v1"]
    kind: Literal["Service"]
    metadata: ObjectMetaDict
    spec: ServiceSpecDict
