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
    model_validator,
)
from typing_extensions import Self

from langop_infra.spec.fields import (
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
from langop_infra.spec.network import EgressRule


class ResourceAmounts(Spec):
    cpu: Quantity | None = None
    memory: Quantity | None = None


class Resources(Spec):
    """Container requests and limits; both default so every pod is schedulable and bounded."""

    requests: ResourceAmounts = ResourceAmounts(cpu="50m", memory="64Mi")
    limits: ResourceAmounts = ResourceAmounts(cpu="500m", memory="256Mi")


class Security(Spec):
    """Pod and container security settings; the defaults meet the *restricted* standard."""

    run_as_user: Int = Field(10001, ge=0)
    run_as_group: Int = Field(10001, ge=0)
    fs_group: Int = Field(10001, ge=0)
    run_as_non_root: bool = True
    allow_privilege_escalation: bool = False
    read_only_root_filesystem: bool = True
    seccomp_profile: Literal["RuntimeDefault", "Unconfined"] = "RuntimeDefault"
    drop_capabilities: list[str] = ["ALL"]
    add_capabilities: list[str] = []


class LocalObjectRef(Spec):
    name: Annotated[str, AfterValidator(dns_subdomain)]


def local_object_ref(value: Any) -> Any:
    """``imagePullSecrets`` entries: ``name`` or ``{name}``."""
    return {"name": value} if isinstance(value, str) else value


class EnvFromSource(Spec):
    """All keys of a Secret or ConfigMap as env vars: exactly one of the two refs."""

    secret_ref: LocalObjectRef | None = None
    config_map_ref: LocalObjectRef | None = None
    prefix: Annotated[str, AfterValidator(env_name)] | None = None

    @model_validator(mode="after")
    def _one_ref(self) -> Self:
        if (self.secret_ref is None) == (self.config_map_ref is None):
            raise invalid("env_from", "give exactly one of secretRef {name} or configMapRef {name}")
        return self


class HttpGetProbe(Spec):
    path: HttpPath
    port: Port


class TcpSocketProbe(Spec):
    port: Port


class ExecProbe(Spec):
    command: Annotated[list[str], Field(min_length=1)]


class ProbeSpec(Spec):
    """A container probe; a tool's probe without a handler keeps its ``healthPath`` check."""

    http_get: HttpGetProbe | None = None
    tcp_socket: TcpSocketProbe | None = None
    exec: ExecProbe | None = None
    initial_delay_seconds: Int | None = Field(None, ge=0, le=3600)
    period_seconds: Int | None = Field(None, ge=1, le=3600)
    timeout_seconds: Int | None = Field(None, ge=1, le=3600)
    success_threshold: Int | None = Field(None, ge=1, le=100)
    failure_threshold: Int | None = Field(None, ge=1, le=1000)

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
    liveness: ProbeSpec | None = None
    readiness: ProbeSpec | None = None
    startup: ProbeSpec | None = None


class Toleration(Spec):
    key: Annotated[str, AfterValidator(label_key)] | None = None
    operator: Literal["Exists", "Equal"] = "Equal"
    value: Annotated[str, AfterValidator(label_value)] | None = None
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"] | None = None
    toleration_seconds: Int | None = Field(None, ge=0)

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
    key: Annotated[str, AfterValidator(label_key)]
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[Annotated[str, AfterValidator(label_value)]] = []

    @model_validator(mode="after")
    def _values(self) -> Self:
        wants = self.operator in ("In", "NotIn", "Gt", "Lt")
        if wants != bool(self.values):
            need = "needs values" if wants else "takes no values"
            raise invalid("selector_requirement", f"operator {self.operator} {need}")
        return self


class FullLabelSelector(Spec):
    match_labels: LabelMap = {}
    match_expressions: list[SelectorRequirement] = []


class NodeSelectorTerm(Spec):
    match_expressions: list[SelectorRequirement] = []
    match_fields: list[SelectorRequirement] = []


class NodeSelector(Spec):
    node_selector_terms: Annotated[list[NodeSelectorTerm], Field(min_length=1)]


class PreferredNodeTerm(Spec):
    weight: Int = Field(ge=1, le=100)
    preference: NodeSelectorTerm


class NodeAffinity(Spec):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredNodeTerm] = []


class PodAffinityTerm(Spec):
    label_selector: FullLabelSelector | None = None
    namespaces: list[DnsLabel] = []
    namespace_selector: FullLabelSelector | None = None
    topology_key: Annotated[str, AfterValidator(label_key)]


class WeightedPodAffinityTerm(Spec):
    weight: Int = Field(ge=1, le=100)
    pod_affinity_term: PodAffinityTerm


class PodAffinity(Spec):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] = []
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] = []


class Affinity(Spec):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class TopologySpread(Spec):
    max_skew: Int = Field(ge=1)
    topology_key: Annotated[str, AfterValidator(label_key)]
    when_unsatisfiable: Literal["DoNotSchedule", "ScheduleAnyway"]
    label_selector: FullLabelSelector | None = Field(
        None, description="Unset: the workload's own pods."
    )
    min_domains: Int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _min_domains(self) -> Self:
        if self.min_domains is not None and self.when_unsatisfiable != "DoNotSchedule":
            raise invalid("topology_spread", "minDomains needs whenUnsatisfiable: DoNotSchedule")
        return self


class PodSettings(Spec):
    """Pod-level settings any Deployment of the package accepts (tools, agents, gateway)."""

    image_pull_secrets: list[Annotated[LocalObjectRef, BeforeValidator(local_object_ref)]] = []
    env_from: list[EnvFromSource] = []
    probes: Probes | None = None
    node_selector: LabelMap = {}
    tolerations: list[Toleration] = []
    affinity: Affinity | None = None
    topology_spread_constraints: list[TopologySpread] = []
    priority_class_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    pod_labels: LabelMap = Field({}, description="Extra labels on the pods only.")
    pod_annotations: AnnotationMap = Field({}, description="Extra annotations on the pods.")
    termination_grace_period_seconds: Int | None = Field(None, ge=0, le=86400)


def count_or_percent(value: Any) -> int | str:
    """A pod count (``1``) or a percentage of the pods (``"50%"``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
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
    min_available: CountOrPercent | None = None

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.max_unavailable is None) == (self.min_available is None):
            raise invalid("disruption_budget", "give exactly one of maxUnavailable or minAvailable")
        return self


class Autoscaling(Spec):
    """An autoscaling/v2 HorizontalPodAutoscaler on CPU; the Deployment then omits replicas."""

    min_replicas: Int = Field(1, ge=1, le=1000)
    max_replicas: Int = Field(ge=1, le=1000)
    target_cpu_utilization_percentage: Int = Field(
        80, ge=1, le=1000, alias="targetCPUUtilizationPercentage"
    )

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
    mount_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = "/data"
    storage_class_name: str | None = None


class WorkloadSpec(PodSettings):
    """Fields shared by tools and agents."""

    name: DnsLabel = Field(description="Kubernetes name of the workload's objects.")
    namespace: DnsLabel | None = Field(None, description="Unset: the cluster's namespace.")
    image: Image
    replicas: Int = Field(1, ge=0, le=1000)
    command: list[str] | None = None
    args: list[str] | None = None
    env: EnvMap = {}
    secret_env: dict[EnvName, SecretEnvValue] = {}
    resources: Resources | None = Field(None, description="Unset: the cluster default.")
    labels: LabelMap = {}
    annotations: AnnotationMap = {}
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    service_account_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    automount_service_account_token: bool = False
    security: Security | None = Field(None, description="Unset: the cluster default.")
    egress: EgressMode | None = Field(None, description="Unset: the cluster default (open).")
    egress_to: list[EgressRule] = []
    disruption_budget: DisruptionBudget | None = Field(
        None, description="Unset: maxUnavailable 1 when more than one pod runs."
    )
    autoscaling: Autoscaling | None = None


