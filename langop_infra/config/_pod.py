"""Pod settings shared by tools and agents: resources, security, env, probes, scheduling,
disruption budgets, autoscaling, persistence, and the workload base spec."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainValidator,
    WithJsonSchema,
    model_validator,
)
from typing_extensions import Self

from langop_infra.config._fields import (
    AnnotationMap,
    DnsLabel,
    EgressMode,
    EnvMap,
    EnvName,
    HttpPath,
    Image,
    Int,
    LabelMap,
    Port,
    Quantity,
    SecretEnvValue,
    Spec,
    dns_subdomain,
    env_name,
    invalid,
    label_key,
    label_value,
    not_reserved_mount,
)
from langop_infra.config._network import EgressRule


class ResourceAmounts(Spec):
    """Amounts of CPU and memory."""

    cpu: Quantity | None = None
    """CPU, a Kubernetes quantity such as 250m."""
    memory: Quantity | None = None
    """Memory, a Kubernetes quantity such as 256Mi."""


class Resources(Spec):
    """Container requests and limits; both default so every pod is schedulable and bounded."""

    requests: ResourceAmounts = ResourceAmounts(cpu="50m", memory="64Mi")
    """What the scheduler reserves for the container."""
    limits: ResourceAmounts = ResourceAmounts(cpu="500m", memory="256Mi")
    """What the container may use at most."""


class Security(Spec):
    """Pod and container security settings; the defaults meet the *restricted* standard."""

    run_as_user: Int = Field(default=10001, ge=0)
    """UID the containers run as."""
    run_as_group: Int = Field(default=10001, ge=0)
    """GID the containers run as."""
    fs_group: Int = Field(default=10001, ge=0)
    """Group owning mounted volumes."""
    run_as_non_root: bool = True
    """Refuse to start a container that would run as root."""
    allow_privilege_escalation: bool = False
    """Allow a process to gain more privileges than its parent."""
    read_only_root_filesystem: bool = True
    """Mount the container's root filesystem read-only."""
    seccomp_profile: Literal["RuntimeDefault", "Unconfined"] = "RuntimeDefault"
    """The seccomp profile of the pods."""
    drop_capabilities: list[str] = ["ALL"]
    """Linux capabilities dropped from the containers."""
    add_capabilities: list[str] = []
    """Linux capabilities added to the containers."""


class LocalObjectRef(Spec):
    """An object of the workload's namespace, by name."""

    name: Annotated[str, AfterValidator(dns_subdomain)]
    """Name of the object."""


def command_list(value: object) -> Any:
    """``"npx"`` as ``["npx"]``: the executable alone, its arguments go in ``args`` (as
    language-operator's MCP client writes it). A string with spaces is left to fail as a
    string: it is a command line to split."""
    return [value] if isinstance(value, str) and value and not value.split()[1:] else value


def local_object_ref(value: object) -> Any:
    """``imagePullSecrets`` entries: ``name`` or ``{name}``."""
    return {"name": value} if isinstance(value, str) else value


class EnvFromSource(Spec):
    """All keys of a Secret or ConfigMap as env vars: exactly one of the two refs."""

    secret_ref: LocalObjectRef | None = None
    """A Secret whose every key becomes an env var."""
    config_map_ref: LocalObjectRef | None = None
    """A ConfigMap whose every key becomes an env var."""
    prefix: Annotated[str, AfterValidator(env_name)] | None = None
    """Prefix added to each variable's name."""

    @model_validator(mode="after")
    def _one_ref(self) -> Self:
        if (self.secret_ref is None) == (self.config_map_ref is None):
            raise invalid("env_from", "give exactly one of secretRef {name} or configMapRef {name}")
        return self


class HttpGetProbe(Spec):
    """A probe that GETs a path; 2xx and 3xx pass."""

    path: HttpPath
    """HTTP path to GET."""
    port: Port
    """Port to connect to."""


class TcpSocketProbe(Spec):
    """A probe that opens a TCP connection."""

    port: Port
    """Port to connect to."""


class ExecProbe(Spec):
    """A probe that runs a command in the container; exit 0 passes."""

    command: Annotated[list[str], Field(min_length=1)]
    """The command and its arguments."""


class ProbeSpec(Spec):
    """A container probe; a tool's probe without a handler keeps its ``healthPath`` check."""

    http_get: HttpGetProbe | None = None
    """Probe with an HTTP GET."""
    tcp_socket: TcpSocketProbe | None = None
    """Probe with a TCP connection."""
    exec: ExecProbe | None = None
    """Probe with a command."""
    initial_delay_seconds: Int | None = Field(default=None, ge=0, le=3600)
    """Seconds after start before the first probe."""
    period_seconds: Int | None = Field(default=None, ge=1, le=3600)
    """Seconds between probes."""
    timeout_seconds: Int | None = Field(default=None, ge=1, le=3600)
    """Seconds a probe may take."""
    success_threshold: Int | None = Field(default=None, ge=1, le=100)
    """Passes in a row that count as success."""
    failure_threshold: Int | None = Field(default=None, ge=1, le=1000)
    """Failures in a row that count as failure."""

    @model_validator(mode="after")
    def _one_handler(self) -> Self:
        handlers = [h for h in (self.http_get, self.tcp_socket, self.exec) if h is not None]
        if len(handlers) > 1:
            raise invalid("probe_handler", "give one of httpGet, tcpSocket or exec, not several")
        return self

    @property
    def has_handler(self) -> bool:
        return any(h is not None for h in (self.http_get, self.tcp_socket, self.exec))


class Probes(Spec):
    """The container's liveness, readiness and startup probes."""

    liveness: ProbeSpec | None = None
    """Restarts the container when it fails."""
    readiness: ProbeSpec | None = None
    """Takes the pod out of its Service while it fails."""
    startup: ProbeSpec | None = None
    """Holds the other probes until it passes once."""


class Toleration(Spec):
    """A taint the pods tolerate."""

    key: Annotated[str, AfterValidator(label_key)] | None = None
    """The taint's key (unset with operator Exists: every taint)."""
    operator: Literal["Exists", "Equal"] = "Equal"
    """Exists matches any value; Equal matches value."""
    value: Annotated[str, AfterValidator(label_value)] | None = None
    """The taint's value (operator Equal)."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    """The taint effect tolerated (unset: every effect)."""
    toleration_seconds: Int | None = Field(default=None, ge=0)
    """Seconds a pod stays bound after a NoExecute taint appears."""

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if self.operator == "Exists" and self.value:
            raise invalid("toleration", "operator Exists takes no value; remove value")
        if self.key is None and self.operator != "Exists":
            raise invalid("toleration", "a toleration without key needs operator: Exists")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise invalid("toleration", "tolerationSeconds applies to effect NoExecute only")
        return self


class SelectorRequirement(Spec):
    """A label requirement: key, operator and values."""

    key: Annotated[str, AfterValidator(label_key)]
    """The label key."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    """How the label's value relates to values."""
    values: list[Annotated[str, AfterValidator(label_value)]] = []
    """Values for In, NotIn, Gt and Lt (none for Exists, DoesNotExist)."""

    @model_validator(mode="after")
    def _values(self) -> Self:
        wants = self.operator in ("In", "NotIn", "Gt", "Lt")
        if wants != bool(self.values):
            need = "needs values" if wants else "takes no values"
            raise invalid("selector_requirement", f"operator {self.operator} {need}")
        return self


class FullLabelSelector(Spec):
    """A label selector with labels and expressions."""

    match_labels: LabelMap = {}
    """Labels an object must carry, all of them."""
    match_expressions: list[SelectorRequirement] = []
    """Requirements an object's labels must meet, all of them."""


class NodeSelectorTerm(Spec):
    """Requirements on a node's labels or fields."""

    match_expressions: list[SelectorRequirement] = []
    """Requirements on the node's labels."""
    match_fields: list[SelectorRequirement] = []
    """Requirements on the node's fields."""


class NodeSelector(Spec):
    """Nodes that match any of the terms."""

    node_selector_terms: Annotated[list[NodeSelectorTerm], Field(min_length=1)]
    """The terms, any of which a node may match."""


class PreferredNodeTerm(Spec):
    """A weighted node preference."""

    weight: Int = Field(ge=1, le=100)
    """Weight, 1-100."""
    preference: NodeSelectorTerm
    """The nodes preferred."""


class NodeAffinity(Spec):
    """Which nodes the pods run on."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    """Nodes the pods must run on."""
    preferred_during_scheduling_ignored_during_execution: list[PreferredNodeTerm] = []
    """Nodes the pods should run on."""


class PodAffinityTerm(Spec):
    """Pods near (or away from) which the pods run, within a topology domain."""

    label_selector: FullLabelSelector | None = None
    """The other pods, by label."""
    namespaces: list[DnsLabel] = []
    """Namespaces of the other pods (unset: the pod's own)."""
    namespace_selector: FullLabelSelector | None = None
    """Namespaces of the other pods, by label."""
    topology_key: Annotated[str, AfterValidator(label_key)]
    """Node label whose value names the domain, e.g. topology.kubernetes.io/zone."""


class WeightedPodAffinityTerm(Spec):
    """A weighted pod (anti-)affinity preference."""

    weight: Int = Field(ge=1, le=100)
    """Weight, 1-100."""
    pod_affinity_term: PodAffinityTerm
    """The term preferred."""


class PodAffinity(Spec):
    """Pods to run near (affinity) or away from (anti-affinity)."""

    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    """Terms the pods must meet."""
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []
    """Terms the pods should meet."""


class Affinity(Spec):
    """Node and pod (anti-)affinity, as in a pod spec."""

    node_affinity: NodeAffinity | None = None
    """Which nodes the pods run on."""
    pod_affinity: PodAffinity | None = None
    """Pods to run near."""
    pod_anti_affinity: PodAffinity | None = None
    """Pods to run away from."""


class TopologySpread(Spec):
    """How the pods spread over zones or nodes."""

    max_skew: Int = Field(ge=1)
    """Largest allowed difference in pod count between domains."""
    topology_key: Annotated[str, AfterValidator(label_key)]
    """Node label whose value names the domain."""
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    """What the scheduler does when the spread cannot be met."""
    label_selector: FullLabelSelector | None = Field(
        default=None, description="Unset: the workload's own pods."
    )
    min_domains: Int | None = Field(default=None, ge=1)
    """Fewest domains counted (whenUnsatisfiable DoNotSchedule only)."""

    @model_validator(mode="after")
    def _min_domains(self) -> Self:
        if self.min_domains is not None and self.when_unsatisfiable != "DoNotSchedule":
            raise invalid("topology_spread", "minDomains needs whenUnsatisfiable: DoNotSchedule")
        return self


class PodSettings(Spec):
    """Pod-level settings any Deployment of the package accepts (tools, agents, gateway)."""

    image_pull_secrets: list[Annotated[LocalObjectRef, BeforeValidator(local_object_ref)]] = []
    """Secrets to pull the image with: names or {name}."""
    env_from: list[EnvFromSource] = []
    """Every key of Secrets or ConfigMaps as env vars."""
    probes: Probes | None = None
    """Liveness, readiness and startup probes."""
    node_selector: LabelMap = {}
    """Node labels the pods must run on."""
    tolerations: list[Toleration] = []
    """Taints the pods tolerate."""
    affinity: Affinity | None = None
    """Node and pod (anti-)affinity."""
    topology_spread_constraints: list[TopologySpread] = []
    """How the pods spread (unset selector: the workload's own pods)."""
    priority_class_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    """PriorityClass of the pods."""
    pod_labels: LabelMap = Field(default={}, description="Extra labels on the pods only.")
    pod_annotations: AnnotationMap = Field(default={}, description="Extra annotations on the pods.")
    termination_grace_period_seconds: Int | None = Field(default=None, ge=0, le=86400)
    """Seconds a pod gets to stop."""


def count_or_percent(value: object) -> int | str:
    """A pod count (``1``, or ``"1"`` as every language but Python must write it: the
    package schema types it a string) or a percentage of the pods (``"50%"``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and re.fullmatch(r"0|[1-9][0-9]{0,8}", value):
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"(100|[1-9]?[0-9])%", value):
        return value
    raise invalid(
        "count_or_percent",
        f"{value!r} is neither a pod count such as 1 nor a percentage such as '50%'",
    )


CountOrPercent = Annotated[int | str, PlainValidator(count_or_percent)]


class DisruptionBudget(Spec):
    """A PodDisruptionBudget: one of maxUnavailable or minAvailable (a count or a percentage)."""

    max_unavailable: CountOrPercent | None = None
    """Pods that may be down at once: a count or a percentage."""
    min_available: CountOrPercent | None = None
    """Pods that must stay up: a count or a percentage."""

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.max_unavailable is None) == (self.min_available is None):
            raise invalid("disruption_budget", "give exactly one of maxUnavailable or minAvailable")
        return self


class Autoscaling(Spec):
    """An autoscaling/v2 HorizontalPodAutoscaler on CPU; the Deployment then omits replicas."""

    min_replicas: Int = Field(default=1, ge=1, le=1000)
    """Fewest pods."""
    max_replicas: Int = Field(ge=1, le=1000)
    """Most pods."""
    target_cpu_utilization_percentage: Int = Field(
        default=80, ge=1, le=1000, alias="targetCPUUtilizationPercentage"
    )
    """Average CPU use, in percent of requests, that the autoscaler aims at."""

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min_replicas > self.max_replicas:
            raise invalid(
                "autoscaling",
                f"minReplicas {self.min_replicas} is above maxReplicas {self.max_replicas}",
            )
        return self


class Persistence(Spec):
    """A PersistentVolumeClaim mounted into a service tool (e.g. the memory tool's SQLite)."""

    size: Quantity = "1Gi"
    """Size of the claim."""
    mount_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = "/data"
    """Where the volume is mounted."""
    storage_class_name: str | None = None
    """StorageClass of the claim (unset: the cluster's default)."""


class WorkloadSpec(PodSettings):
    """Fields shared by tools and agents."""

    name: DnsLabel = Field(description="Kubernetes name of the workload's objects.")
    namespace: DnsLabel | None = Field(default=None, description="Unset: the cluster's namespace.")
    image: Image
    """Container image, e.g. ghcr.io/org/tool:1.2.3."""
    replicas: Int = Field(default=1, ge=0, le=1000)
    """Number of pods."""
    command: Annotated[
        list[str] | None,
        BeforeValidator(command_list),
        # The schema editors read admits the one-string form the validator accepts.
        WithJsonSchema(
            {
                "anyOf": [
                    {"items": {"type": "string"}, "type": "array"},
                    {"type": "string"},
                    {"type": "null"},
                ]
            }
        ),
    ] = None
    """Container command, replacing the image's entrypoint (a string: the executable alone)."""
    args: list[str] | None = None
    """Container arguments."""
    env: EnvMap = {}
    """Plain environment variables."""
    secret_env: dict[EnvName, SecretEnvValue] = {}
    """Secret environment variables: a value (kept in Secret <name>-env) or {secretKeyRef: {name,
    key}}."""
    resources: Resources | None = Field(default=None, description="Unset: the cluster default.")
    labels: LabelMap = {}
    """Extra labels on every object."""
    annotations: AnnotationMap = {}
    """Extra annotations on the workload and its pods."""
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    """When the kubelet pulls the image (unset: the cluster default)."""
    service_account_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    """ServiceAccount of the pods."""
    automount_service_account_token: bool = False
    """Mount the ServiceAccount token into the pods."""
    security: Security | None = Field(default=None, description="Unset: the cluster default.")
    egress: EgressMode | None = Field(
        default=None, description="Unset: the cluster default (open)."
    )
    egress_to: list[EgressRule] = []
    """Where the pods may connect under egress restricted."""
    disruption_budget: DisruptionBudget | None = Field(
        default=None, description="Unset: maxUnavailable 1 when more than one pod runs."
    )
    autoscaling: Autoscaling | None = None
    """A HorizontalPodAutoscaler on CPU; the Deployment then sets no replicas."""
