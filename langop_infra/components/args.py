"""The components' input TypedDicts: GENERATED from the specs by ``python
tools/generate_args.py``; do not edit (tests/test_typed_contract.py checks it is current).

Each field's type, whether it is required and its description come from the pydantic spec of
the same name; see ``tools/generate_args.py`` for the rules.
"""

from typing import TYPE_CHECKING, Any, Literal, Union

import pulumi
from typing_extensions import NotRequired, TypedDict

if TYPE_CHECKING:
    import pulumi_kubernetes as k8s

    from langop_infra.config._model import PersonaSpec

# A duration: '30s', '1m', '500ms', or seconds such as '30'.
Duration = str
# A pod count such as '1' or a percentage such as '50%'.
CountOrPercent = str


if TYPE_CHECKING:
    A2AAccess = Literal["authenticated", "open"]
    A2ASecuritySchemeType = Literal["bearer", "apiKey"]
    A2ATokenVerificationMethod = Literal["tokenReview", "oidc"]
    AccessModes = Literal["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod", "ReadOnlyMany"]
    ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
    DeploymentMode = Literal["service", "sidecar"]
    Egress = Literal["open", "restricted"]
    EndpointStyle = Literal["base", "path"]
    ImagePullPolicy = Literal["Always", "IfNotPresent", "Never"]
    McpServerTransport = Literal["http", "url"]
    Medium = Literal["", "Memory"]
    MemoryType = Literal["managed", "external"]
    ModelRefRole = Literal["primary", "fallback", "reasoning", "tool-calling", "summarization"]
    PortProtocol = Literal["TCP", "UDP", "SCTP"]
    Provider = Literal["openai", "anthropic", "azure", "bedrock", "vertex", "openai-compatible", "ollama", "custom"]
    Runtime = Literal["image", "builtin"]
    SchemaSyncAccess = Literal["auto", "direct", "apiserver-proxy"]
    SchemaSyncProtocol = Literal["auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    Scope = Literal["conversation", "shared"]
    SeccompProfile = Literal["RuntimeDefault", "Unconfined"]
    SelectorRequirementOperator = Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    ServiceSettingsType = Literal["ClusterIP", "NodePort", "LoadBalancer"]
    SidecarStyle = Literal["native", "container"]
    SyncAuthType = Literal["oauth2"]
    TolerationEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    TolerationOperator = Literal["Exists", "Equal"]
    ToolType = Literal["mcp"]
    TracesSampler = Literal["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"]
    Transport = Literal["http", "stdio"]
    WebhookAuthType = Literal["none", "bearer", "basic", "apiKey", "oauth2"]
    WebhookToolMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
    WhenUnsatisfiable = Literal["DoNotSchedule", "ScheduleAnyway"]
    # A secret: a string or a pulumi secret Output (kept in a Secret), or an existing Secret's key.
    SecretValue = Union[pulumi.Input[str], "SecretSourceArgs"]
    # A persona's name, or the persona itself.
    PersonaEntry = Union[str, "PersonaArgs", "PersonaSpec"]
    # A Secret's name, or the Secret itself.
    SecretName = Union[pulumi.Input[str], "k8s.core.v1.Secret"]
else:  # what Pulumi's analyzer reads: no Literal or Union in a package schema
    A2AAccess = str
    A2ASecuritySchemeType = str
    A2ATokenVerificationMethod = str
    AccessModes = str
    ConcurrencyPolicy = str
    DeploymentMode = str
    Egress = str
    EndpointStyle = str
    ImagePullPolicy = str
    McpServerTransport = str
    Medium = str
    MemoryType = str
    ModelRefRole = str
    PortProtocol = str
    Provider = str
    Runtime = str
    SchemaSyncAccess = str
    SchemaSyncProtocol = str
    Scope = str
    SeccompProfile = str
    SelectorRequirementOperator = str
    ServiceSettingsType = str
    SidecarStyle = str
    SyncAuthType = str
    TolerationEffect = str
    TolerationOperator = str
    ToolType = str
    TracesSampler = str
    Transport = str
    WebhookAuthType = str
    WebhookToolMethod = str
    WhenUnsatisfiable = str
    SecretValue = pulumi.Input[str]
    PersonaEntry = str
    SecretName = pulumi.Input[str]


class HttpToolSecretRefArgs(TypedDict):
    """A key of a Kubernetes Secret in the workload's namespace, the Secret by name or as the object."""

    name: SecretName
    """Secret name, or your own k8s.core.v1.Secret: its data then rolls the agents that read it."""
    key: str
    """Key within the Secret."""


class HttpToolAuthArgs(TypedDict):
    """How an HttpTool authenticates: a stack file's ``authentication`` fields, or the credential's ``value`` itself."""

    type: NotRequired[WebhookAuthType]
    """bearer: '<headerName>: Bearer <value>'; basic: the value is user:password, sent base64-encoded; apiKey: the raw value in headerName; oauth2: the value is JSON {"tokenUrl", "clientId", "clientSecret", "scope"} for a client-credentials token, or a ready access token. One of: none, bearer, basic, apiKey, oauth2. Default: "none"."""
    secret_ref: NotRequired[HttpToolSecretRefArgs]
    """The Secret key holding the credential (same namespace as the agent)."""
    header_name: NotRequired[str]
    """The header that carries the credential. Default: "Authorization"."""
    value: NotRequired[pulumi.Input[str]]
    """The credential itself, as a secret Output (config.require_secret(...), pulumi.Output.secret(...)): kept in the tool's own Secret `<tool>.http-tool`, key `credential`, which agents read through secretKeyRef. Give value or secretRef, not both."""


class LocalObjectRefArgs(TypedDict):
    """An object of the workload's namespace, by name."""

    name: str
    """Name of the object."""


class EnvFromSourceArgs(TypedDict):
    """All keys of a Secret or ConfigMap as env vars: exactly one of the two refs."""

    secret_ref: NotRequired[LocalObjectRefArgs]
    """A Secret whose every key becomes an env var."""
    config_map_ref: NotRequired[LocalObjectRefArgs]
    """A ConfigMap whose every key becomes an env var."""
    prefix: NotRequired[str]
    """Prefix added to each variable's name."""


class HttpGetProbeArgs(TypedDict):
    """A probe that GETs a path; 2xx and 3xx pass."""

    path: str
    """HTTP path to GET."""
    port: int
    """Port to connect to."""


class TcpSocketProbeArgs(TypedDict):
    """A probe that opens a TCP connection."""

    port: int
    """Port to connect to."""


class ExecProbeArgs(TypedDict):
    """A probe that runs a command in the container; exit 0 passes."""

    command: list[str]
    """The command and its arguments."""


class ProbeArgs(TypedDict):
    """A container probe; a tool's probe without a handler keeps its ``healthPath`` check."""

    http_get: NotRequired[HttpGetProbeArgs]
    """Probe with an HTTP GET."""
    tcp_socket: NotRequired[TcpSocketProbeArgs]
    """Probe with a TCP connection."""
    exec: NotRequired[ExecProbeArgs]
    """Probe with a command."""
    initial_delay_seconds: NotRequired[int]
    """Seconds after start before the first probe."""
    period_seconds: NotRequired[int]
    """Seconds between probes."""
    timeout_seconds: NotRequired[int]
    """Seconds a probe may take."""
    success_threshold: NotRequired[int]
    """Passes in a row that count as success."""
    failure_threshold: NotRequired[int]
    """Failures in a row that count as failure."""


class ProbesArgs(TypedDict):
    """The container's liveness, readiness and startup probes."""

    liveness: NotRequired[ProbeArgs]
    """Restarts the container when it fails."""
    readiness: NotRequired[ProbeArgs]
    """Takes the pod out of its Service while it fails."""
    startup: NotRequired[ProbeArgs]
    """Holds the other probes until it passes once."""


class TolerationArgs(TypedDict):
    """A taint the pods tolerate."""

    key: NotRequired[str]
    """The taint's key (unset with operator Exists: every taint)."""
    operator: NotRequired[TolerationOperator]
    """Exists matches any value; Equal matches value. One of: Exists, Equal. Default: "Equal"."""
    value: NotRequired[str]
    """The taint's value (operator Equal)."""
    effect: NotRequired[TolerationEffect]
    """The taint effect tolerated (unset: every effect). One of: NoSchedule, PreferNoSchedule, NoExecute."""
    toleration_seconds: NotRequired[int]
    """Seconds a pod stays bound after a NoExecute taint appears."""


class SelectorRequirementArgs(TypedDict):
    """A label requirement: key, operator and values."""

    key: str
    """The label key."""
    operator: SelectorRequirementOperator
    """How the label's value relates to values. One of: In, NotIn, Exists, DoesNotExist, Gt, Lt."""
    values: NotRequired[list[str]]
    """Values for In, NotIn, Gt and Lt (none for Exists, DoesNotExist)."""


class NodeSelectorTermArgs(TypedDict):
    """Requirements on a node's labels or fields."""

    match_expressions: NotRequired[list[SelectorRequirementArgs]]
    """Requirements on the node's labels."""
    match_fields: NotRequired[list[SelectorRequirementArgs]]
    """Requirements on the node's fields."""


class NodeSelectorArgs(TypedDict):
    """Nodes that match any of the terms."""

    node_selector_terms: list[NodeSelectorTermArgs]
    """The terms, any of which a node may match."""


class PreferredNodeTermArgs(TypedDict):
    """A weighted node preference."""

    weight: int
    """Weight, 1-100."""
    preference: NodeSelectorTermArgs
    """The nodes preferred."""


class NodeAffinityArgs(TypedDict):
    """Which nodes the pods run on."""

    required_during_scheduling_ignored_during_execution: NotRequired[NodeSelectorArgs]
    """Nodes the pods must run on."""
    preferred_during_scheduling_ignored_during_execution: NotRequired[list[PreferredNodeTermArgs]]
    """Nodes the pods should run on."""


class FullLabelSelectorArgs(TypedDict):
    """A label selector with labels and expressions."""

    match_labels: NotRequired[dict[str, str]]
    """Labels an object must carry, all of them."""
    match_expressions: NotRequired[list[SelectorRequirementArgs]]
    """Requirements an object's labels must meet, all of them."""


class PodAffinityTermArgs(TypedDict):
    """Pods near (or away from) which the pods run, within a topology domain."""

    label_selector: NotRequired[FullLabelSelectorArgs]
    """The other pods, by label."""
    namespaces: NotRequired[list[str]]
    """Namespaces of the other pods (unset: the pod's own)."""
    namespace_selector: NotRequired[FullLabelSelectorArgs]
    """Namespaces of the other pods, by label."""
    topology_key: str
    """Node label whose value names the domain, e.g. topology.kubernetes.io/zone."""


class WeightedPodAffinityTermArgs(TypedDict):
    """A weighted pod (anti-)affinity preference."""

    weight: int
    """Weight, 1-100."""
    pod_affinity_term: PodAffinityTermArgs
    """The term preferred."""


class PodAffinityArgs(TypedDict):
    """Pods to run near (affinity) or away from (anti-affinity)."""

    required_during_scheduling_ignored_during_execution: NotRequired[list[PodAffinityTermArgs]]
    """Terms the pods must meet."""
    preferred_during_scheduling_ignored_during_execution: NotRequired[list[WeightedPodAffinityTermArgs]]
    """Terms the pods should meet."""


class AffinityArgs(TypedDict):
    """Node and pod (anti-)affinity, as in a pod spec."""

    node_affinity: NotRequired[NodeAffinityArgs]
    """Which nodes the pods run on."""
    pod_affinity: NotRequired[PodAffinityArgs]
    """Pods to run near."""
    pod_anti_affinity: NotRequired[PodAffinityArgs]
    """Pods to run away from."""


class TopologySpreadArgs(TypedDict):
    """How the pods spread over zones or nodes."""

    max_skew: int
    """Largest allowed difference in pod count between domains."""
    topology_key: str
    """Node label whose value names the domain."""
    when_unsatisfiable: WhenUnsatisfiable
    """What the scheduler does when the spread cannot be met. One of: DoNotSchedule, ScheduleAnyway."""
    label_selector: NotRequired[FullLabelSelectorArgs]
    """Unset: the workload's own pods."""
    min_domains: NotRequired[int]
    """Fewest domains counted (whenUnsatisfiable DoNotSchedule only)."""


class ResourceAmountsArgs(TypedDict):
    """Amounts of CPU and memory."""

    cpu: NotRequired[str]
    """CPU, a Kubernetes quantity such as 250m."""
    memory: NotRequired[str]
    """Memory, a Kubernetes quantity such as 256Mi."""


class ResourcesArgs(TypedDict):
    """Container requests and limits; both default so every pod is schedulable and bounded."""

    requests: NotRequired[ResourceAmountsArgs]
    """What the scheduler reserves for the container."""
    limits: NotRequired[ResourceAmountsArgs]
    """What the container may use at most."""


class SecurityArgs(TypedDict):
    """Pod and container security settings; the defaults meet the *restricted* standard."""

    run_as_user: NotRequired[int]
    """UID the containers run as. Default: 10001."""
    run_as_group: NotRequired[int]
    """GID the containers run as. Default: 10001."""
    fs_group: NotRequired[int]
    """Group owning mounted volumes. Default: 10001."""
    run_as_non_root: NotRequired[bool]
    """Refuse to start a container that would run as root. Default: true."""
    allow_privilege_escalation: NotRequired[bool]
    """Allow a process to gain more privileges than its parent. Default: false."""
    read_only_root_filesystem: NotRequired[bool]
    """Mount the container's root filesystem read-only. Default: true."""
    seccomp_profile: NotRequired[SeccompProfile]
    """The seccomp profile of the pods. One of: RuntimeDefault, Unconfined."""
    drop_capabilities: NotRequired[list[str]]
    """Linux capabilities dropped from the containers."""
    add_capabilities: NotRequired[list[str]]
    """Linux capabilities added to the containers."""


class PortArgs(TypedDict):
    """A port and its protocol."""

    port: int
    """Port number, 1-65535."""
    protocol: NotRequired[PortProtocol]
    """Protocol of the port. One of: TCP, UDP, SCTP. Default: "TCP"."""


class EgressRuleArgs(TypedDict):
    """A destination a workload with ``egress: restricted`` may reach: a CIDR, or pods by namespace and labels; on ``ports`` (all ports when empty)."""

    cidr: NotRequired[str]
    """An IP range, e.g. 10.0.0.0/8 (not with namespace or podLabels)."""
    except_: NotRequired[list[str]]
    """Ranges inside cidr to leave out; each must be strictly smaller than cidr."""
    namespace: NotRequired[str]
    """Pods of this namespace."""
    pod_labels: NotRequired[dict[str, str]]
    """Pods with these labels."""
    host: NotRequired[str]
    """The host name this CIDR serves, for the render's egress check."""
    ports: NotRequired[list[PortArgs]]
    """Ports allowed (all ports when empty)."""


class DisruptionBudgetArgs(TypedDict):
    """A PodDisruptionBudget: one of maxUnavailable or minAvailable (a count or a percentage)."""

    max_unavailable: NotRequired[CountOrPercent]
    """Pods that may be down at once: a count or a percentage."""
    min_available: NotRequired[CountOrPercent]
    """Pods that must stay up: a count or a percentage."""


class AutoscalingArgs(TypedDict):
    """An autoscaling/v2 HorizontalPodAutoscaler on CPU; the Deployment then omits replicas."""

    min_replicas: NotRequired[int]
    """Fewest pods. Default: 1."""
    max_replicas: int
    """Most pods."""
    target_cpu_utilization_percentage: NotRequired[int]
    """Average CPU use, in percent of requests, that the autoscaler aims at. Default: 80."""


class KeyToPathArgs(TypedDict):
    """One key of a ConfigMap or Secret as a file: ``{key, path, mode}``."""

    key: str
    """A key of the source."""
    path: str
    """The file it becomes, relative to the mount."""
    mode: NotRequired[int]
    """The file's mode; unset: defaultMode."""


class ConfigMapVolumeArgs(TypedDict):
    """A ConfigMap's keys as files."""

    name: str
    """The ConfigMap."""
    items: NotRequired[list[KeyToPathArgs]]
    """Keys to project; unset: every key."""
    default_mode: NotRequired[int]
    """Mode of the files; unset: 0644."""
    optional: NotRequired[bool]
    """Start the pod without the ConfigMap."""


class SecretVolumeArgs(TypedDict):
    """A Secret's keys as files."""

    secret_name: str
    """The Secret."""
    items: NotRequired[list[KeyToPathArgs]]
    """Keys to project; unset: every key."""
    default_mode: NotRequired[int]
    """Mode of the files; unset: 0644."""
    optional: NotRequired[bool]
    """Start the pod without the Secret."""


class ClaimVolumeArgs(TypedDict):
    """An existing PersistentVolumeClaim."""

    claim_name: str
    """An existing PersistentVolumeClaim in the workload's namespace."""
    read_only: NotRequired[bool]
    """Mount the claim read-only."""


class EmptyDirVolumeArgs(TypedDict):
    """Scratch space that lives as long as the pod."""

    medium: NotRequired[Medium]
    """Memory: a tmpfs (counted in the container's memory); unset: disk. One of: , Memory."""
    size_limit: NotRequired[str]
    """The most it may hold, e.g. 64Mi."""


class ProjectedConfigMapArgs(TypedDict):
    """A ConfigMap or Secret inside a projected volume."""

    name: str
    """The ConfigMap or Secret."""
    items: NotRequired[list[KeyToPathArgs]]
    """Keys to project; unset: every key."""
    optional: NotRequired[bool]
    """Start the pod without it."""


class ServiceAccountTokenProjectionArgs(TypedDict):
    """A bound ServiceAccount token as a file (workload identity)."""

    path: str
    """The token's file, relative to the mount."""
    audience: NotRequired[str]
    """Who the token is for (e.g. sts.amazonaws.com); unset: the API server."""
    expiration_seconds: NotRequired[int]
    """Token lifetime (at least 600); unset: one hour."""


class ProjectedSourceArgs(TypedDict):
    """One source of a projected volume: exactly one of configMap, secret, serviceAccountToken."""

    config_map: NotRequired[ProjectedConfigMapArgs]
    """{name, items, optional}"""
    secret: NotRequired[ProjectedConfigMapArgs]
    """{name, items, optional}"""
    service_account_token: NotRequired[ServiceAccountTokenProjectionArgs]
    """{path, audience, expirationSeconds}: a bound token (workload identity)."""


class ProjectedVolumeArgs(TypedDict):
    """ConfigMaps, Secrets and ServiceAccount tokens in one folder."""

    sources: list[ProjectedSourceArgs]
    """What the volume combines, in order."""
    default_mode: NotRequired[int]
    """Mode of the files; unset: 0644."""


class VolumeArgs(TypedDict):
    """An extra pod volume: exactly one of configMap, secret, persistentVolumeClaim, emptyDir or projected (the types the restricted Pod Security Standard admits)."""

    name: str
    """The volume's name, for volumeMounts."""
    config_map: NotRequired[ConfigMapVolumeArgs]
    """{name, items, defaultMode, optional}: a ConfigMap's keys as files."""
    secret: NotRequired[SecretVolumeArgs]
    """{secretName, items, defaultMode, optional}: a Secret's keys as files."""
    persistent_volume_claim: NotRequired[ClaimVolumeArgs]
    """{claimName, readOnly}: a claim made outside this workload."""
    empty_dir: NotRequired[EmptyDirVolumeArgs]
    """{medium, sizeLimit}: scratch space that lives as long as the pod."""
    projected: NotRequired[ProjectedVolumeArgs]
    """{sources, defaultMode}: configMaps, secrets and tokens in one folder."""
    host_path: NotRequired[dict[str, str]]
    """Refused: the restricted standard forbids it."""


class VolumeMountArgs(TypedDict):
    """Mounts one of ``volumes`` into the main container (or an init container)."""

    name: str
    """A volume under volumes."""
    mount_path: str
    """An absolute path; not /tmp, /etc/agent or another generated mount."""
    sub_path: NotRequired[str]
    """A file or folder of the volume."""
    read_only: NotRequired[bool]
    """Mount it read-only."""


class InitContainerArgs(TypedDict):
    """A container run to completion before the workload's own, with the same security context as the main container (the restricted standard), and its resources."""

    name: str
    """Unique in the pod."""
    image: str
    """Container image."""
    command: NotRequired[list[str]]
    """Replaces the image's entrypoint."""
    args: NotRequired[list[str]]
    """Arguments of the command."""
    env: NotRequired[dict[str, str]]
    """Plain environment variables (no secrets: use a volume)."""
    volume_mounts: NotRequired[list[VolumeMountArgs]]
    """Mounts of the workload's volumes."""
    resources: NotRequired[ResourcesArgs]
    """Unset: the workload's."""


class ServiceAccountArgs(TypedDict):
    """The pod's Kubernetes identity: ``{create: true, annotations}`` makes ServiceAccount ``<workload>`` (annotations for cloud workload identity), ``{name}`` uses an existing one."""

    create: NotRequired[bool]
    """Make a ServiceAccount named after the workload. Default: false."""
    name: NotRequired[str]
    """An existing ServiceAccount (without create)."""
    annotations: NotRequired[dict[str, str]]
    """Annotations of the created ServiceAccount (e.g. workload identity)."""


class LabelSelectorArgs(TypedDict):
    """Objects selected by their labels."""

    match_labels: NotRequired[dict[str, str]]
    """Labels an object must carry, all of them."""


class IPBlockArgs(TypedDict):
    """A range of IP addresses, less some sub-ranges."""

    cidr: str
    """The range, e.g. 10.0.0.0/8."""
    except_: NotRequired[list[str]]
    """Ranges inside cidr to leave out; each must be strictly smaller than cidr."""


class PeerArgs(TypedDict):
    """An extra ingress source: pods and/or namespaces by label, or an IP block."""

    pod_selector: NotRequired[LabelSelectorArgs]
    """Pods with these labels (in the workload's namespace unless namespaceSelector is set)."""
    namespace_selector: NotRequired[LabelSelectorArgs]
    """Namespaces with these labels."""
    ip_block: NotRequired[IPBlockArgs]
    """An IP range (not with the selectors)."""


class SecretKeyRefArgs(TypedDict):
    """A key of an existing Kubernetes Secret in the workload's namespace."""

    name: str
    """Secret name."""
    key: str
    """Key within the Secret."""


class SecretSourceArgs(TypedDict):
    """Where a secret value comes from: an existing Secret's key."""

    secret_key_ref: SecretKeyRefArgs
    """The Secret's name and key."""


class HeaderArgs(TypedDict):
    """An HTTP header: a literal ``value``, an existing Secret's key, or a Pulumi secret."""

    name: str
    """HTTP header name."""
    value: NotRequired[str]
    """The header's literal value (not for credentials: use valueFrom or secret)."""
    value_from: NotRequired[SecretSourceArgs]
    """{secretKeyRef: {name, key}}: the value of an existing Secret's key."""
    secret: NotRequired[pulumi.Input[str]]
    """A pulumi secret (Python) or a secret string."""


class SyncAuthArgs(TypedDict):
    """OAuth 2.1 client credentials for schema sync (the MCP authorization spec): the client discovers the authorization server from the tool's 401 and asks for a token itself."""

    type: NotRequired[SyncAuthType]
    """The scheme: OAuth 2.1 client credentials. One of: oauth2. Default: "oauth2"."""
    client_id: str
    """The client ID registered with the authorization server."""
    client_secret: SecretSourceArgs
    """{secretKeyRef: {name, key}} naming a secret under langop-infra:secrets."""
    scopes: NotRequired[list[str]]
    """Scopes to ask for; unset: those the tool's 401 names."""
    issuer: NotRequired[str]
    """The authorization server's issuer URL (the `issuer` of its metadata): the client secret goes only to that server's token endpoint. HTTPS, or http on loopback. Required."""


class SchemaSyncArgs(TypedDict):
    """How ``pulumi up`` reads the tool's schema with MCP ``tools/list``."""

    enabled: NotRequired[bool]
    """Read the tool's schema at deployment. Default: true."""
    access: NotRequired[SchemaSyncAccess]
    """auto, direct or apiserver-proxy; unset: the cluster default (auto). One of: auto, direct, apiserver-proxy."""
    sync_url: NotRequired[str]
    """Call this URL instead of the endpoint."""
    required: NotRequired[bool]
    """Fail the deployment when the sync fails. Default: false."""
    timeout: NotRequired[Duration]
    """Timeout of the whole sync. Default: 10.0."""
    headers: NotRequired[list[HeaderArgs]]
    """HTTP headers sent with each request."""
    auth: NotRequired[SyncAuthArgs]
    """OAuth 2.1 client credentials for a tool that demands a token."""
    protocol: NotRequired[SchemaSyncProtocol]
    """MCP revision: auto negotiates, newest first. One of: auto, 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05. Default: "auto"."""
    max_bytes: NotRequired[str]
    """Cap on the whole listing's size over all pages (default 32Mi)."""
    max_response_bytes: NotRequired[str]
    """Cap on one response or SSE event, counted decoded (default 8Mi)."""
    max_tools: NotRequired[int]
    """Cap on the tools listed. Default: 10000."""
    max_pages: NotRequired[int]
    """Cap on tools/list pages. Default: 100."""


class PersistenceArgs(TypedDict):
    """A PersistentVolumeClaim mounted into a service tool (e.g. the memory tool's SQLite)."""

    size: NotRequired[str]
    """Size of the claim. Default: "1Gi"."""
    mount_path: NotRequired[str]
    """Where the volume is mounted. Default: "/data"."""
    storage_class_name: NotRequired[str]
    """StorageClass of the claim (unset: the cluster's default)."""


class ServiceSettingsArgs(TypedDict):
    """A service tool's Service: its type and extra metadata."""

    type: NotRequired[ServiceSettingsType]
    """NodePort or LoadBalancer also expose the tool outside. One of: ClusterIP, NodePort, LoadBalancer. Default: "ClusterIP"."""
    annotations: NotRequired[dict[str, str]]
    """E.g. a cloud load balancer's settings."""
    labels: NotRequired[dict[str, str]]
    """Extra labels on the Service."""


class A2ASkillArgs(TypedDict):
    """One skill of the agent card (A2A ``AgentSkill``)."""

    id: str
    """Unique id of the skill within the card."""
    name: str
    """Human-readable name."""
    description: str
    """What the skill does, for callers and their LLMs."""
    tags: list[str]
    """Keywords, at least one (A2A v1.0 requires them)."""
    examples: NotRequired[list[str]]
    """Example prompts."""
    input_modes: NotRequired[list[str]]
    """Media types the skill accepts (unset: the card's defaultInputModes)."""
    output_modes: NotRequired[list[str]]
    """Media types the skill returns (unset: the card's defaultOutputModes)."""


class A2ASecuritySchemeArgs(TypedDict):
    """A security scheme the agent accepts (the card's ``securitySchemes``)."""

    name: str
    """The scheme's name in the card."""
    type: A2ASecuritySchemeType
    """bearer: HTTP Authorization: Bearer; apiKey: a key in a header. One of: bearer, apiKey."""
    header_name: NotRequired[str]
    """The header an apiKey travels in. Default: "Authorization"."""
    bearer_format: NotRequired[str]
    """A hint such as JWT."""
    description: NotRequired[str]
    """Shown to callers."""


class A2ACallerArgs(TypedDict):
    """A caller that may send the agent messages: by a bearer token of its own, or by the identity a verified token names (``a2a.tokenVerification``)."""

    name: str
    """The caller: an agent of the stack in this namespace (it is then given the token to send), or the name of a caller from elsewhere."""
    token_from: NotRequired[SecretSourceArgs]
    """{secretKeyRef: {name, key}}: the caller's token (16+ characters), reaching the agent as env A2A_CALLER_<NAME>_TOKEN."""
    identity: NotRequired[str]
    """The subject a verified token must name (env A2A_CALLER_<NAME>_IDENTITY): a Kubernetes service account as system:serviceaccount:<namespace>:<name>, or an OIDC token's sub."""


class A2ATokenVerificationArgs(TypedDict):
    """How the runtime checks the signed tokens callers with an ``identity`` present."""

    method: A2ATokenVerificationMethod
    """tokenReview: Kubernetes service-account tokens, checked by the API server (the agent's ServiceAccount needs system:auth-delegator and its token mounted); oidc: an issuer's JWTs, checked against its published keys (JWKS). One of: tokenReview, oidc."""
    audience: NotRequired[str]
    """The audience a token must name (unset: the agent's A2A endpoint URL); a caller's projected serviceAccountToken volume asks for it."""
    issuer: NotRequired[str]
    """oidc: the issuer (its iss claim and discovery document)."""
    jwks_url: NotRequired[str]
    """oidc: the issuer's keys (unset: the jwks_uri of its discovery document)."""


class A2AArgs(TypedDict):
    """The agent serves A2A: a Service port named ``a2a`` and an agent card."""

    port: NotRequired[int]
    """Port of the A2A endpoint (env A2A_PORT). Default: 8080."""
    path: NotRequired[str]
    """HTTP path of the JSON-RPC endpoint (env A2A_PATH). Default: "/"."""
    description: NotRequired[str]
    """The card's description (unset: from instructions or name)."""
    version: NotRequired[str]
    """The agent's version in its card. Default: "1.0.0"."""
    skills: list[A2ASkillArgs]
    """The skills the card advertises, at least one (A2A v1.0 requires one)."""
    default_input_modes: NotRequired[list[str]]
    """Media types the agent accepts."""
    default_output_modes: NotRequired[list[str]]
    """Media types the agent returns."""
    streaming: NotRequired[bool]
    """The agent streams (message/stream). Default: false."""
    push_notifications: NotRequired[bool]
    """The agent sends push notifications. Default: false."""
    security_schemes: NotRequired[list[A2ASecuritySchemeArgs]]
    """Schemes the agent accepts; each is required (the card's securityRequirements)."""
    access: NotRequired[A2AAccess]
    """Who may call (enforced by runtime: builtin): callers with a token (authenticated), or anyone who reaches the port (open, asked for by name). One of: authenticated, open. Default: "authenticated"."""
    callers: NotRequired[list[A2ACallerArgs]]
    """The callers allowed in: each with a bearer token (env A2A_CALLER_<NAME>_TOKEN) or the identity of a verified token (env A2A_CALLER_<NAME>_IDENTITY): the allow-list."""
    token_verification: NotRequired[A2ATokenVerificationArgs]
    """How tokens of callers given by identity are verified (required when one is)."""


class ScheduleArgs(TypedDict):
    """Run the agent as a batch/v1 CronJob (env AGENT_MODE=scheduled) instead of a Deployment."""

    cron: str
    """5-field cron expression (minute hour day-of-month month day-of-week)."""
    time_zone: NotRequired[str]
    """IANA time zone of the schedule (unset: the controller's, usually UTC)."""
    input: str
    """The prompt each run receives (env AGENT_INPUT, config.yaml schedule.input)."""
    concurrency_policy: NotRequired[ConcurrencyPolicy]
    """What a run does while the previous one still runs. One of: Allow, Forbid, Replace. Default: "Forbid"."""
    suspend: NotRequired[bool]
    """Pause the schedule. Default: false."""
    starting_deadline_seconds: NotRequired[int]
    """A run missed by more than this is skipped."""
    active_deadline_seconds: NotRequired[int]
    """A run is stopped after this long."""
    backoff_limit: NotRequired[int]
    """Retries of a failed run. Default: 2."""
    successful_jobs_history_limit: NotRequired[int]
    """Finished runs kept. Default: 3."""
    failed_jobs_history_limit: NotRequired[int]
    """Failed runs kept. Default: 1."""


class McpServerArgs(TypedDict):
    """An external MCP server (ark style), reached at ``url`` with optional headers."""

    name: str
    """Name the agent knows the server by."""
    url: str
    """The server's MCP endpoint."""
    headers: NotRequired[list[HeaderArgs]]
    """HTTP headers sent with each request."""
    timeout: NotRequired[Duration]
    """Per-request timeout (unset: the agent's default)."""
    transport: NotRequired[McpServerTransport]
    """http: url is the MCP endpoint; url: url is a well-known document the agent discovers the endpoint from (language-operator's MCP client). One of: http, url. Default: "http"."""
    auto_connect: NotRequired[bool]
    """false: the agent connects only when asked (registry.connect). Default: true."""
    allowed_tools: NotRequired[list[str]]
    """Only these of the server's tools are offered to the agent (config.yaml mcpServers[].allowedTools, which the agent's registry enforces). Unset: all of them."""


class WebhookAuthArgs(TypedDict):
    """How an HTTP tool authenticates; the credential reaches the agent only as a ``secretKeyRef`` env var (``AGENT_WEBHOOK_<TOOL>_AUTH``)."""

    type: NotRequired[WebhookAuthType]
    """bearer: '<headerName>: Bearer <value>'; basic: the value is user:password, sent base64-encoded; apiKey: the raw value in headerName; oauth2: the value is JSON {"tokenUrl", "clientId", "clientSecret", "scope"} for a client-credentials token, or a ready access token. One of: none, bearer, basic, apiKey, oauth2. Default: "none"."""
    secret_ref: NotRequired[SecretKeyRefArgs]
    """The Secret key holding the credential (same namespace as the agent)."""
    header_name: NotRequired[str]
    """The header that carries the credential. Default: "Authorization"."""


class RateLimitArgs(TypedDict):
    """A token bucket per agent pod: a call waits up to the timeout for a token."""

    requests_per_minute: int
    """Refill rate (1-10000)."""
    burst: int
    """Bucket size: calls allowed at once (1-1000)."""


class WebhookToolArgs(TypedDict):
    """An inline HTTP tool (ark inline tool): the agent calls ``url`` directly."""

    description: NotRequired[str]
    """What the tool does, for the LLM. Default: ""."""
    method: NotRequired[WebhookToolMethod]
    """GET and DELETE send the arguments as the query; others as JSON. One of: GET, POST, PUT, PATCH, DELETE. Default: "POST"."""
    input_schema: NotRequired[dict[str, Any]]
    """JSON Schema draft-07 the arguments are checked against: an object, or a JSON string (ark's form, passed on as written)."""
    timeout: NotRequired[Duration]
    """Per call, rate-limit wait included (e.g. 30s, 1m). Default: 30.0."""
    authentication: NotRequired[WebhookAuthArgs]
    """The credential, if any."""
    rate_limit: NotRequired[RateLimitArgs]
    """Unset: no limit."""
    enabled: NotRequired[bool]
    """false: agents are not given the tool. Default: true."""
    name: str
    """The tool's name as the LLM sees it."""
    url: str
    """The endpoint (alias endpoint, as in an HttpTool)."""
    endpoint: NotRequired[str]
    """Alias of url."""


class WorkspaceArgs(TypedDict):
    """A persistent workspace: PVC ``<agent>-workspace``, given initial files once where none of that name exists yet (an agent's edits survive restarts)."""

    size: NotRequired[str]
    """Size of the claim. Default: "1Gi"."""
    storage_class_name: NotRequired[str]
    """StorageClass of the claim (unset: the cluster's default)."""
    access_modes: NotRequired[list[AccessModes]]
    """Access modes of the claim; several pods need ReadWriteMany. One of: ReadWriteOnce, ReadWriteMany, ReadWriteOncePod, ReadOnlyMany."""
    mount_path: NotRequired[str]
    """Unset: the agent's workspacePath."""
    initial_files: NotRequired[dict[str, str]]
    """Files written once into an empty workspace: {name: content}."""
    initial_files_config_map: NotRequired[str]
    """A ConfigMap whose keys are copied once into the workspace."""
    init_image: NotRequired[str]
    """The image of the init container that copies the initial files (needs sh, cp). Default: "docker.io/library/busybox:1.36.1@sha256:73aaf090f3d85aa34ee199857f03fa3a95c8ede2ffd4cc2cdb5b94e566b11662"."""


class AgentPortArgs(TypedDict):
    """A port the agent listens on, published by ClusterIP Service ``<agent>``."""

    name: str
    """An IANA service name: at most 15 lower-case letters, digits and '-'."""
    port: int
    """Port number, 1-65535."""


class ApiKeyRefArgs(TypedDict):
    """A key of an existing Secret in the namespace; ``key`` defaults to ``api-key``."""

    name: str
    """Secret name."""
    key: NotRequired[str]
    """Key within the Secret. Default: "api-key"."""


class ApiKeySourceArgs(TypedDict):
    """Where a model's API key or the gateway's master key comes from: a Secret's key."""

    secret_key_ref: ApiKeyRefArgs
    """The Secret's name and key (key defaults to api-key)."""


class RetryPolicyArgs(TypedDict):
    """How often a failed model call is retried."""

    max_attempts: NotRequired[int]
    """Retries after a failed call (LiteLLM's max_retries). Default: 3."""


class ModelConfigurationArgs(TypedDict):
    """Request defaults the gateway applies to every call of the model."""

    max_tokens: NotRequired[int]
    """Most tokens a response may hold."""
    temperature: NotRequired[float]
    """Sampling temperature, 0-2."""
    top_p: NotRequired[float]
    """Nucleus sampling mass, 0-1."""
    stop_sequences: NotRequired[list[str]]
    """Sequences that end a response (at most 16)."""


class ModelRateLimitsArgs(TypedDict):
    """Rate limits the gateway applies to the model."""

    requests_per_minute: NotRequired[int]
    """LiteLLM's rpm."""
    tokens_per_minute: NotRequired[int]
    """LiteLLM's tpm."""


class MemoryAddressArgs(TypedDict):
    """Where an external memory is: a literal URL, or a Secret key holding it."""

    value: NotRequired[str]
    """The memory's MCP endpoint."""
    value_from: NotRequired[SecretSourceArgs]
    """{secretKeyRef: {name, key}}: the endpoint kept in a Secret."""


class ApiRefArgs(TypedDict):
    """The API the tool comes from (STOA's ``apiRef``)."""

    name: str
    """The source API's name."""
    version: NotRequired[str]
    """The API's version, e.g. v2."""
    operation_id: NotRequired[str]
    """The OpenAPI operationId."""


class NetworkPeerArgs(TypedDict):
    """A peer given as ``{cidr, except}`` or as ``{namespace, podLabels}`` (not both)."""

    cidr: NotRequired[str]
    """An IP range, e.g. 10.0.0.0/8 (not with namespace or podLabels)."""
    except_: NotRequired[list[str]]
    """Ranges inside cidr to leave out; each must be strictly smaller than cidr."""
    namespace: NotRequired[str]
    """Pods of this namespace."""
    pod_labels: NotRequired[dict[str, str]]
    """Pods with these labels."""
    host: NotRequired[str]
    """The host name this CIDR serves, for the render's egress check."""


class AgentKeysArgs(TypedDict):
    """The Secret holding one gateway key per agent: key = agent name, value = its key."""

    secret_name: str
    """Secret with one key per agent that uses the gateway, named after it."""


class ModelGatewayDefaultsArgs(TypedDict):
    """The namespace's LiteLLM proxy (Deployment and Service ``gateway``, port 8000)."""

    enabled: NotRequired[bool]
    """false: every model is reached directly. Default: true."""
    image: NotRequired[str]
    """Image of the LiteLLM proxy. Default: "ghcr.io/berriai/litellm-non_root:main-stable"."""
    replicas: NotRequired[int]
    """Pods of the gateway. Default: 1."""
    master_key: NotRequired[ApiKeySourceArgs]
    """{secretKeyRef: {name, key}}: the gateway's admin key; never given to agents."""
    agent_keys: NotRequired[AgentKeysArgs]
    """{secretName}: each agent's own gateway key (MODEL_API_KEY), key = agent name; the gateway admits exactly these and the master key."""
    require_auth: NotRequired[bool]
    """Refuse a gateway without masterKey. Default: false."""
    resources: NotRequired[ResourcesArgs]
    """The gateway's requests and limits over its built-in ones."""


class ObservabilityDefaultsArgs(TypedDict):
    """Where agents, tools and the gateway send telemetry."""

    otlp_endpoint: NotRequired[str]
    """OTEL_EXPORTER_OTLP_ENDPOINT of agents, tools and the gateway."""
    traces_sampler: NotRequired[TracesSampler]
    """OTEL_TRACES_SAMPLER of agents and tools. One of: always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio."""
    traces_sampler_arg: NotRequired[str]
    """OTEL_TRACES_SAMPLER_ARG, e.g. 0.25 for a ratio sampler."""


class DefaultsArgs(TypedDict):
    """Cluster-wide defaults applied to every tool and agent that does not set its own."""

    image_pull_policy: NotRequired[ImagePullPolicy]
    """When the kubelet pulls images (unset: Kubernetes' default). One of: Always, IfNotPresent, Never."""
    resources: NotRequired[ResourcesArgs]
    """Requests and limits of every workload that sets none."""
    security: NotRequired[SecurityArgs]
    """Security settings of every workload that sets none."""
    egress: NotRequired[Egress]
    """open, or restricted (only DNS, the workload's tools and egressTo). One of: open, restricted. Default: "open"."""
    default_deny: NotRequired[bool]
    """Add a NetworkPolicy denying every ingress the others do not admit. Default: false."""
    schema_sync_access: NotRequired[SchemaSyncAccess]
    """How schema sync reaches tools: auto, direct or apiserver-proxy. One of: auto, direct, apiserver-proxy. Default: "auto"."""
    schema_sync_from: NotRequired[list[NetworkPeerArgs]]
    """Where schema sync reaches tools from: {cidr, except} for the control plane under apiserver-proxy, or {namespace, podLabels} for an in-cluster runner."""
    service_cidr: NotRequired[str]
    """The cluster's Service range (kube-apiserver --service-cluster-ip-range): its first address is the API server's ClusterIP, which endpoint advice then warns of (unset: the common distributions' defaults)."""
    sidecar_style: NotRequired[SidecarStyle]
    """native: init containers with restartPolicy Always (Kubernetes >= 1.29); container: plain containers, for older clusters. One of: native, container. Default: "native"."""
    endpoint_style: NotRequired[EndpointStyle]
    """base: endpoints without the MCP path; path: with it. One of: base, path. Default: "base"."""
    strict_egress: NotRequired[bool]
    """Fail when restricted egress does not admit an agent's servers. Default: false."""
    model_gateway: NotRequired[ModelGatewayDefaultsArgs]
    """Unset: built-ins."""
    require_image_digests: NotRequired[bool]
    """Refuse an image given by tag without a digest (name@sha256:...), the built-in gateway image included; off: validate and render warn. Default: false."""
    observability: NotRequired[ObservabilityDefaultsArgs]
    """Telemetry settings (unset: none)."""


class ToolArgs(TypedDict):
    """A LanguageTool: an MCP server run as a Deployment + Service, or as an agent sidecar."""

    image_pull_secrets: NotRequired[list[LocalObjectRefArgs]]
    """Secrets to pull the image with: names or {name}."""
    env_from: NotRequired[list[EnvFromSourceArgs]]
    """Every key of Secrets or ConfigMaps as env vars."""
    probes: NotRequired[ProbesArgs]
    """Liveness, readiness and startup probes."""
    node_selector: NotRequired[dict[str, str]]
    """Node labels the pods must run on."""
    tolerations: NotRequired[list[TolerationArgs]]
    """Taints the pods tolerate."""
    affinity: NotRequired[AffinityArgs]
    """Node and pod (anti-)affinity."""
    topology_spread_constraints: NotRequired[list[TopologySpreadArgs]]
    """How the pods spread (unset selector: the workload's own pods)."""
    priority_class_name: NotRequired[str]
    """PriorityClass of the pods."""
    pod_labels: NotRequired[dict[str, str]]
    """Extra labels on the pods only."""
    pod_annotations: NotRequired[dict[str, str]]
    """Extra annotations on the pods."""
    termination_grace_period_seconds: NotRequired[int]
    """Seconds a pod gets to stop."""
    name: str
    """Name of the tool's Deployment and Service."""
    namespace: NotRequired[str]
    """Unset: the cluster's namespace."""
    image: str
    """Container image, e.g. ghcr.io/org/tool:1.2.3."""
    replicas: NotRequired[int]
    """Number of pods. Default: 1."""
    command: NotRequired[list[str]]
    """Container command, replacing the image's entrypoint (a string: the executable alone)."""
    args: NotRequired[list[str]]
    """Container arguments."""
    env: NotRequired[dict[str, str]]
    """Plain environment variables."""
    secret_env: NotRequired[dict[str, SecretValue]]
    """Secret environment variables: a value (kept in Secret <name>-env) or {secretKeyRef: {name, key}}."""
    resources: NotRequired[ResourcesArgs]
    """Unset: the cluster default."""
    labels: NotRequired[dict[str, str]]
    """Extra labels on every object."""
    annotations: NotRequired[dict[str, str]]
    """Extra annotations on the workload and its pods."""
    image_pull_policy: NotRequired[ImagePullPolicy]
    """When the kubelet pulls the image (unset: the cluster default). One of: Always, IfNotPresent, Never."""
    service_account_name: NotRequired[str]
    """ServiceAccount of the pods."""
    automount_service_account_token: NotRequired[bool]
    """Mount the ServiceAccount token into the pods. Default: false."""
    security: NotRequired[SecurityArgs]
    """Unset: the cluster default."""
    egress: NotRequired[Egress]
    """Unset: the cluster default (open). One of: open, restricted."""
    egress_to: NotRequired[list[EgressRuleArgs]]
    """Where the pods may connect under egress restricted."""
    disruption_budget: NotRequired[DisruptionBudgetArgs]
    """Unset: maxUnavailable 1 when more than one pod runs."""
    autoscaling: NotRequired[AutoscalingArgs]
    """A HorizontalPodAutoscaler on CPU; the Deployment then sets no replicas."""
    volumes: NotRequired[list[VolumeArgs]]
    """Extra pod volumes: configMap, secret, persistentVolumeClaim, emptyDir, projected (hostPath is refused)."""
    volume_mounts: NotRequired[list[VolumeMountArgs]]
    """Mounts of those volumes into the main container."""
    init_containers: NotRequired[list[InitContainerArgs]]
    """Run before the workload's containers, with its security context."""
    service_account: NotRequired[ServiceAccountArgs]
    """{create: true, annotations} for a ServiceAccount of its own, or {name} of an existing one; unset: the namespace's default (no token mounted either way, unless automountServiceAccountToken)."""
    type: NotRequired[ToolType]
    """The kind of tool server. One of: mcp. Default: "mcp"."""
    transport: NotRequired[Transport]
    """stdio: command, args and env start a stdio-only MCP server, run behind the mcp-proxy bridge in the same container, which serves /mcp on port (the image must hold mcp-proxy and the server's runtime). One of: http, stdio. Default: "http"."""
    deployment_mode: NotRequired[DeploymentMode]
    """service: Deployment + Service; sidecar: joins each referencing agent's pod. One of: service, sidecar. Default: "service"."""
    port: NotRequired[int]
    """Port the server listens on. Default: 8080."""
    mcp_path: NotRequired[str]
    """HTTP path of the MCP endpoint. Default: "/mcp"."""
    health_path: NotRequired[str]
    """HTTP path of the readiness and liveness probes. Default: "/health"."""
    allow_from: NotRequired[list[PeerArgs]]
    """Extra ingress sources (service mode)."""
    schema_sync: NotRequired[SchemaSyncArgs]
    """How pulumi up reads the tool's schema with tools/list."""
    persistence: NotRequired[PersistenceArgs]
    """A PersistentVolumeClaim <tool>-data mounted into a service tool."""
    service: NotRequired[ServiceSettingsArgs]
    """The Service's type (ClusterIP, NodePort, LoadBalancer), annotations and labels (service mode); unset: ClusterIP."""


class AgentPeerRefArgs(TypedDict):
    """A peer agent this agent calls over A2A: an agent of the stack by ``name`` (and ``namespace``), or a remote one by ``url``."""

    name: str
    """The agent's name (in-cluster), or the name this agent knows a remote peer by."""
    namespace: NotRequired[str]
    """Namespace of an in-cluster peer (unset: the caller's)."""
    url: NotRequired[str]
    """A remote peer's A2A endpoint (unset: an agent of the stack)."""
    card_url: NotRequired[str]
    """A remote peer's agent card (unset: <origin of url>/.well-known/agent-card.json)."""
    headers: NotRequired[list[HeaderArgs]]
    """Headers sent to a remote peer: a value, or valueFrom.secretKeyRef, reaching the agent only as env A2A_PEER_<PEER>_HEADER_<HEADER>."""


class MemoryRefArgs(TypedDict):
    """An agent's memory: a LanguageMemory of the stack."""

    name: str
    """The memory's name."""
    namespace: NotRequired[str]
    """Its namespace (unset: the agent's)."""
    scope: NotRequired[Scope]
    """conversation: a conversation recalls only what it stored; shared: every conversation of the agent recalls what any stored. One of: conversation, shared. Default: "conversation"."""


class ToolOverrideArgs(TypedDict):
    """How the agent is shown one tool of a reference (ToolHive's ``toolsOverride``)."""

    name: NotRequired[str]
    """The name the agent's LLM sees (letters, digits, _ and -, at most 64: what OpenAI and Anthropic accept); calls map back to the tool's own name."""
    description: NotRequired[str]
    """The description the LLM sees instead of the tool's."""


class ToolRefArgs(TypedDict):
    """A reference from an agent to a LanguageTool."""

    name: str
    """Name of the LanguageTool."""
    namespace: NotRequired[str]
    """Namespace of the tool (unset: the agent's)."""
    enabled: NotRequired[bool]
    """false: keep the reference but do not wire the tool. Default: true."""
    required: NotRequired[bool]
    """The agent waits for the tool to be ready. Default: false."""
    allowed_tools: NotRequired[list[str]]
    """Only these of the tool's tools are offered to the agent (config.yaml allowedTools; the agent's registry enforces it, schema sync reports unknown names). Unset: all of them."""
    headers: NotRequired[list[HeaderArgs]]
    """Headers the agent sends to the tool: a value, or valueFrom.secretKeyRef, reaching the agent only as env LANGOP_TOOL_<TOOL>_HEADER_<HEADER>."""
    require_approval: NotRequired[list[str]]
    """These of the tool's tools run only once a person approves each call: the built-in runtime puts the A2A task in input-required with the call's name and arguments, and the caller's next message on the task approves (yes) or rejects it."""
    overrides: NotRequired[dict[str, ToolOverrideArgs]]
    """{<tool>: {name, description}}: the agent's registry offers the tool under this name and description and maps calls back; schema sync sees the original."""


class HttpToolRefArgs(TypedDict):
    """A reference from an agent to an HttpTool (``httpTools:``) of the stack."""

    name: str
    """The HttpTool's name."""
    namespace: NotRequired[str]
    """Unset: the agent's namespace."""


class ModelRefArgs(TypedDict):
    """A reference from an agent to a LanguageModel of its namespace."""

    name: str
    """Name of the LanguageModel."""
    role: NotRequired[ModelRefRole]
    """What the agent uses the model for. One of: primary, fallback, reasoning, tool-calling, summarization. Default: "primary"."""
    priority: NotRequired[int]
    """Lower is tried first."""


class AgentArgs(TypedDict):
    """A LanguageAgent: a Deployment wired to its tools, MCP servers and webhook tools."""

    a2a: NotRequired[A2AArgs]
    """Serve A2A: a Service port named a2a and an agent card."""
    agents: NotRequired[list[AgentPeerRefArgs]]
    """A2A peers it calls: {name, namespace} (an agent of the stack) or {name, url, headers}."""
    memory: NotRequired[MemoryRefArgs]
    """A LanguageMemory of the stack the agent uses: {name}."""
    schedule: NotRequired[ScheduleArgs]
    """Run as a CronJob on this schedule (AGENT_MODE=scheduled) instead of a Deployment."""
    metrics_from: NotRequired[list[PeerArgs]]
    """runtime: builtin: who may reach the health port (9090: /metrics, /healthz, /readyz), and that port only, e.g. Prometheus (nobody when empty; the kubelet's probes come from the node)."""
    image_pull_secrets: NotRequired[list[LocalObjectRefArgs]]
    """Secrets to pull the image with: names or {name}."""
    env_from: NotRequired[list[EnvFromSourceArgs]]
    """Every key of Secrets or ConfigMaps as env vars."""
    probes: NotRequired[ProbesArgs]
    """Liveness, readiness and startup probes."""
    node_selector: NotRequired[dict[str, str]]
    """Node labels the pods must run on."""
    tolerations: NotRequired[list[TolerationArgs]]
    """Taints the pods tolerate."""
    affinity: NotRequired[AffinityArgs]
    """Node and pod (anti-)affinity."""
    topology_spread_constraints: NotRequired[list[TopologySpreadArgs]]
    """How the pods spread (unset selector: the workload's own pods)."""
    priority_class_name: NotRequired[str]
    """PriorityClass of the pods."""
    pod_labels: NotRequired[dict[str, str]]
    """Extra labels on the pods only."""
    pod_annotations: NotRequired[dict[str, str]]
    """Extra annotations on the pods."""
    termination_grace_period_seconds: NotRequired[int]
    """Seconds a pod gets to stop."""
    name: str
    """Kubernetes name of the workload's objects."""
    namespace: NotRequired[str]
    """Unset: the cluster's namespace."""
    image: NotRequired[str]
    """Container image, e.g. ghcr.io/org/agent:1.2.3 (required unless runtime is builtin). Default: ""."""
    replicas: NotRequired[int]
    """Number of pods. Default: 1."""
    command: NotRequired[list[str]]
    """Container command, replacing the image's entrypoint (a string: the executable alone)."""
    args: NotRequired[list[str]]
    """Container arguments."""
    env: NotRequired[dict[str, str]]
    """Plain environment variables."""
    secret_env: NotRequired[dict[str, SecretValue]]
    """Secret environment variables: a value (kept in Secret <name>-env) or {secretKeyRef: {name, key}}."""
    resources: NotRequired[ResourcesArgs]
    """Unset: the cluster default."""
    labels: NotRequired[dict[str, str]]
    """Extra labels on every object."""
    annotations: NotRequired[dict[str, str]]
    """Extra annotations on the workload and its pods."""
    image_pull_policy: NotRequired[ImagePullPolicy]
    """When the kubelet pulls the image (unset: the cluster default). One of: Always, IfNotPresent, Never."""
    service_account_name: NotRequired[str]
    """ServiceAccount of the pods."""
    automount_service_account_token: NotRequired[bool]
    """Mount the ServiceAccount token into the pods. Default: false."""
    security: NotRequired[SecurityArgs]
    """Unset: the cluster default."""
    egress: NotRequired[Egress]
    """Unset: the cluster default (open). One of: open, restricted."""
    egress_to: NotRequired[list[EgressRuleArgs]]
    """Where the pods may connect under egress restricted."""
    disruption_budget: NotRequired[DisruptionBudgetArgs]
    """Unset: maxUnavailable 1 when more than one pod runs."""
    autoscaling: NotRequired[AutoscalingArgs]
    """A HorizontalPodAutoscaler on CPU; the Deployment then sets no replicas."""
    volumes: NotRequired[list[VolumeArgs]]
    """Extra pod volumes: configMap, secret, persistentVolumeClaim, emptyDir, projected (hostPath is refused)."""
    volume_mounts: NotRequired[list[VolumeMountArgs]]
    """Mounts of those volumes into the main container."""
    init_containers: NotRequired[list[InitContainerArgs]]
    """Run before the workload's containers, with its security context."""
    service_account: NotRequired[ServiceAccountArgs]
    """{create: true, annotations} for a ServiceAccount of its own, or {name} of an existing one; unset: the namespace's default (no token mounted either way, unless automountServiceAccountToken)."""
    runtime: NotRequired[Runtime]
    """image: run the agent image given; builtin: the package's own agent (image ghcr.io/langop/langop-agent:0.1.0 unless image is given; command python -m langop_infra.agent serve unless command is given). One of: image, builtin. Default: "image"."""
    max_iterations: NotRequired[int]
    """The built-in runtime's bound on model calls per turn (config.yaml agent.maxIterations; unset: 10)."""
    tools: NotRequired[list[ToolRefArgs]]
    """LanguageTool references; ark's inline webhook tools may sit here too."""
    mcp_servers: NotRequired[list[McpServerArgs]]
    """External MCP servers (ark style)."""
    webhook_tools: NotRequired[list[WebhookToolArgs]]
    """Inline HTTP tools the agent calls directly."""
    http_tools: NotRequired[list[HttpToolRefArgs]]
    """HttpTools of the stack the agent may call: {name, namespace}."""
    workspace_path: NotRequired[str]
    """Where the workspace shared with sidecar tools is mounted. Default: "/workspace"."""
    workspace: NotRequired[WorkspaceArgs]
    """Unset: an emptyDir workspace."""
    ports: NotRequired[list[AgentPortArgs]]
    """Ports the agent listens on, published by Service <agent>."""
    allow_from: NotRequired[list[PeerArgs]]
    """Who may reach the agent's ports (nobody when empty)."""
    model: NotRequired[str]
    """ark's shorthand, one model (role primary): a declared model's name or modelName, or any model id, passed on as AGENT_MODEL with a warning."""
    models: NotRequired[list[ModelRefArgs]]
    """LanguageModels of the namespace, in order."""
    instructions: NotRequired[str]
    """System prompt (alias systemPrompt): AGENT_INSTRUCTIONS."""
    system_prompt: NotRequired[str]
    """Alias of instructions."""
    persona: NotRequired[PersonaEntry]
    """A persona's name under personas, or the persona itself."""


class HttpToolEntryArgs(TypedDict):
    """An HTTP tool of a namespace (STOA's Tool): flattened, or the manifest itself."""

    description: str
    """What the tool does, for the LLM (1-1024 characters)."""
    method: NotRequired[WebhookToolMethod]
    """GET and DELETE send the arguments as the query; others as JSON. One of: GET, POST, PUT, PATCH, DELETE. Default: "POST"."""
    input_schema: NotRequired[dict[str, Any]]
    """JSON Schema draft-07 the arguments are checked against."""
    timeout: NotRequired[Duration]
    """Per call, rate-limit wait included (e.g. 30s, 1m). Default: 30.0."""
    authentication: NotRequired[WebhookAuthArgs]
    """The credential, if any."""
    rate_limit: NotRequired[RateLimitArgs]
    """Unset: no limit."""
    enabled: NotRequired[bool]
    """false: agents are not given the tool. Default: true."""
    name: str
    """Unique in its namespace; the tool's name for the LLM."""
    namespace: NotRequired[str]
    """Unset: the stack's namespace."""
    labels: NotRequired[dict[str, str]]
    """Extra labels on the tool's ConfigMap."""
    annotations: NotRequired[dict[str, str]]
    """Annotations on the tool's ConfigMap."""
    display_name: str
    """Human-readable name (1-64 characters)."""
    endpoint: NotRequired[str]
    """The http(s) URL agents call; unset: phase Pending, not callable."""
    tags: NotRequired[list[str]]
    """Categorisation tags."""
    version: NotRequired[str]
    """The tool's version. Default: "1.0.0"."""
    api_ref: NotRequired[ApiRefArgs]
    """The source API: {name, version, operationId}."""
    probe: NotRequired[bool]
    """At deploy, send one request to the endpoint (no arguments, no credential) and set phase Error when it cannot be reached. Default: false."""


class ModelArgs(TypedDict):
    """A LanguageModel: a provider's model, reached through the namespace gateway or directly."""

    name: str
    """The name agents use (LLM_MODEL, the gateway's alias)."""
    provider: Provider
    """The model's provider. One of: openai, anthropic, azure, bedrock, vertex, openai-compatible, ollama, custom."""
    model_name: str
    """The provider's model id; for 'custom', LiteLLM's '<provider>/<model>'."""
    endpoint: NotRequired[str]
    """Required for openai-compatible, azure, ollama and custom."""
    api_key: NotRequired[ApiKeySourceArgs]
    """{secretKeyRef: {name, key}}."""
    timeout: NotRequired[Duration]
    """Per-call timeout. Default: 300.0."""
    retry_policy: NotRequired[RetryPolicyArgs]
    """Retries after a failed call."""
    fallbacks: NotRequired[list[str]]
    """Models tried in order when this fails."""
    configuration: NotRequired[ModelConfigurationArgs]
    """Request defaults: maxTokens, temperature, topP, stopSequences."""
    rate_limits: NotRequired[ModelRateLimitsArgs]
    """Requests and tokens per minute (unset: none)."""
    egress_to: NotRequired[list[EgressRuleArgs]]
    """Where the gateway (or, in direct mode, the agent) may connect."""
    gateway: NotRequired[bool]
    """false: agents call the provider directly. Default: true."""


class MemoryArgs(TypedDict):
    """A LanguageMemory: ``managed`` runs a memory MCP server with a persistent volume; ``external`` points agents at one that exists."""

    name: str
    """The memory's name (a managed memory's Deployment and Service)."""
    namespace: NotRequired[str]
    """Unset: the cluster's namespace."""
    type: NotRequired[MemoryType]
    """managed: deployed here as a LanguageTool preset; external: address and headers. One of: managed, external. Default: "managed"."""
    image: NotRequired[str]
    """Managed: the memory MCP server's image. Default: "ghcr.io/langop/memory-mcp:0.1.0@sha256:5be4c0a1b7e1a9f1f2c5d44d6e0b3f0d8c8a4f4c3e2d1b0a9f8e7d6c5b4a3f21"."""
    port: NotRequired[int]
    """Managed: the server's port. Default: 8080."""
    size: NotRequired[str]
    """Managed: size of the persistent volume. Default: "1Gi"."""
    storage_class_name: NotRequired[str]
    """Managed: StorageClass of the volume (unset: the cluster's default)."""
    address: NotRequired[MemoryAddressArgs]
    """External: the memory's MCP endpoint."""
    headers: NotRequired[list[HeaderArgs]]
    """External: headers sent to it (AGENT_MEMORY_HEADER_<HEADER>)."""


class PersonaArgs(TypedDict):
    """A LanguagePersona: how an agent speaks (AGENT_PERSONA, config.yaml ``personas``)."""

    name: str
    """The name agents use in persona."""
    tone: NotRequired[str]
    """How the agent speaks, on one line. Default: ""."""
    personality: NotRequired[str]
    """Who the agent is, on one line. Default: ""."""
    expertise: NotRequired[str]
    """What the agent knows, on one line. Default: ""."""


class ExternalServiceArgs(TypedDict):
    """An in-cluster Service already running, made outside this stack: addresses that name it (``http://<name>.<namespace>.svc.cluster.local:<port>``) pass validation."""

    name: str
    """The Service's name."""
    namespace: str
    """The Service's namespace."""


class LanguageToolArgs(TypedDict):
    """The inputs of a LanguageTool; the same fields as a stack file's ``tools:`` entry."""

    image_pull_secrets: NotRequired[pulumi.Input[list[LocalObjectRefArgs]]]
    """Secrets to pull the image with: names or {name}."""
    env_from: NotRequired[pulumi.Input[list[EnvFromSourceArgs]]]
    """Every key of Secrets or ConfigMaps as env vars."""
    probes: NotRequired[ProbesArgs]
    """Liveness, readiness and startup probes."""
    node_selector: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Node labels the pods must run on."""
    tolerations: NotRequired[pulumi.Input[list[TolerationArgs]]]
    """Taints the pods tolerate."""
    affinity: NotRequired[AffinityArgs]
    """Node and pod (anti-)affinity."""
    topology_spread_constraints: NotRequired[pulumi.Input[list[TopologySpreadArgs]]]
    """How the pods spread (unset selector: the workload's own pods)."""
    priority_class_name: NotRequired[pulumi.Input[str]]
    """PriorityClass of the pods."""
    pod_labels: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Extra labels on the pods only."""
    pod_annotations: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Extra annotations on the pods."""
    termination_grace_period_seconds: NotRequired[pulumi.Input[int]]
    """Seconds a pod gets to stop."""
    namespace: NotRequired[pulumi.Input[str]]
    """Unset: the cluster's namespace."""
    image: pulumi.Input[str]
    """Container image, e.g. ghcr.io/org/tool:1.2.3."""
    replicas: NotRequired[pulumi.Input[int]]
    """Number of pods. Default: 1."""
    command: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """Container command, replacing the image's entrypoint (a string: the executable alone)."""
    container_args: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """Container arguments."""
    env: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Plain environment variables."""
    secret_env: NotRequired[pulumi.Input[dict[str, SecretValue]]]
    """Secret environment variables: a value (kept in Secret <name>-env) or {secretKeyRef: {name, key}}."""
    resources: NotRequired[ResourcesArgs]
    """Unset: the cluster default."""
    labels: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Extra labels on every object."""
    annotations: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Extra annotations on the workload and its pods."""
    image_pull_policy: NotRequired[pulumi.Input[ImagePullPolicy]]
    """When the kubelet pulls the image (unset: the cluster default). One of: Always, IfNotPresent, Never."""
    service_account_name: NotRequired[pulumi.Input[str]]
    """ServiceAccount of the pods."""
    automount_service_account_token: NotRequired[pulumi.Input[bool]]
    """Mount the ServiceAccount token into the pods. Default: false."""
    security: NotRequired[SecurityArgs]
    """Unset: the cluster default."""
    egress: NotRequired[pulumi.Input[Egress]]
    """Unset: the cluster default (open). One of: open, restricted."""
    egress_to: NotRequired[pulumi.Input[list[EgressRuleArgs]]]
    """Where the pods may connect under egress restricted."""
    disruption_budget: NotRequired[DisruptionBudgetArgs]
    """Unset: maxUnavailable 1 when more than one pod runs."""
    autoscaling: NotRequired[AutoscalingArgs]
    """A HorizontalPodAutoscaler on CPU; the Deployment then sets no replicas."""
    volumes: NotRequired[pulumi.Input[list[VolumeArgs]]]
    """Extra pod volumes: configMap, secret, persistentVolumeClaim, emptyDir, projected (hostPath is refused)."""
    volume_mounts: NotRequired[pulumi.Input[list[VolumeMountArgs]]]
    """Mounts of those volumes into the main container."""
    init_containers: NotRequired[pulumi.Input[list[InitContainerArgs]]]
    """Run before the workload's containers, with its security context."""
    service_account: NotRequired[ServiceAccountArgs]
    """{create: true, annotations} for a ServiceAccount of its own, or {name} of an existing one; unset: the namespace's default (no token mounted either way, unless automountServiceAccountToken)."""
    transport: NotRequired[pulumi.Input[Transport]]
    """stdio: command, args and env start a stdio-only MCP server, run behind the mcp-proxy bridge in the same container, which serves /mcp on port (the image must hold mcp-proxy and the server's runtime). One of: http, stdio. Default: "http"."""
    deployment_mode: NotRequired[DeploymentMode]
    """service: Deployment + Service; sidecar: joins each referencing agent's pod. One of: service, sidecar. Default: "service"."""
    port: NotRequired[pulumi.Input[int]]
    """Port the server listens on. Default: 8080."""
    mcp_path: NotRequired[pulumi.Input[str]]
    """HTTP path of the MCP endpoint. Default: "/mcp"."""
    health_path: NotRequired[pulumi.Input[str]]
    """HTTP path of the readiness and liveness probes. Default: "/health"."""
    allow_from: NotRequired[pulumi.Input[list[PeerArgs]]]
    """Extra ingress sources (service mode)."""
    schema_sync: NotRequired[SchemaSyncArgs]
    """How pulumi up reads the tool's schema with tools/list."""
    persistence: NotRequired[PersistenceArgs]
    """A PersistentVolumeClaim <tool>-data mounted into a service tool."""
    service: NotRequired[ServiceSettingsArgs]
    """The Service's type (ClusterIP, NodePort, LoadBalancer), annotations and labels (service mode); unset: ClusterIP."""
    part_of: NotRequired[str]
    """app.kubernetes.io/part-of (default: the namespace)."""
    defaults: NotRequired[DefaultsArgs]
    """Cluster-wide defaults (resources, security, egress...)."""


class LanguageModelArgs(TypedDict):
    """The inputs of a LanguageModel; the same fields as a stack file's ``models:`` entry."""

    provider: Provider
    """The model's provider. One of: openai, anthropic, azure, bedrock, vertex, openai-compatible, ollama, custom."""
    model_name: str
    """The provider's model id; for 'custom', LiteLLM's '<provider>/<model>'."""
    endpoint: NotRequired[str]
    """Required for openai-compatible, azure, ollama and custom."""
    api_key: NotRequired[ApiKeySourceArgs]
    """{secretKeyRef: {name, key}}."""
    timeout: NotRequired[Duration]
    """Per-call timeout. Default: 300.0."""
    retry_policy: NotRequired[RetryPolicyArgs]
    """Retries after a failed call."""
    fallbacks: NotRequired[list[str]]
    """Models tried in order when this fails."""
    configuration: NotRequired[ModelConfigurationArgs]
    """Request defaults: maxTokens, temperature, topP, stopSequences."""
    rate_limits: NotRequired[ModelRateLimitsArgs]
    """Requests and tokens per minute (unset: none)."""
    egress_to: NotRequired[list[EgressRuleArgs]]
    """Where the gateway (or, in direct mode, the agent) may connect."""
    gateway: NotRequired[bool]
    """false: agents call the provider directly. Default: true."""
    namespace: NotRequired[pulumi.Input[str]]
    """Namespace of the agents that use it (default: default)."""


class LanguageMemoryArgs(TypedDict):
    """The inputs of a LanguageMemory; the same fields as a stack file's ``memories:`` entry."""

    namespace: NotRequired[pulumi.Input[str]]
    """Unset: the cluster's namespace."""
    type: NotRequired[MemoryType]
    """managed: deployed here as a LanguageTool preset; external: address and headers. One of: managed, external. Default: "managed"."""
    image: NotRequired[str]
    """Managed: the memory MCP server's image. Default: "ghcr.io/langop/memory-mcp:0.1.0@sha256:5be4c0a1b7e1a9f1f2c5d44d6e0b3f0d8c8a4f4c3e2d1b0a9f8e7d6c5b4a3f21"."""
    port: NotRequired[int]
    """Managed: the server's port. Default: 8080."""
    size: NotRequired[str]
    """Managed: size of the persistent volume. Default: "1Gi"."""
    storage_class_name: NotRequired[str]
    """Managed: StorageClass of the volume (unset: the cluster's default)."""
    address: NotRequired[MemoryAddressArgs]
    """External: the memory's MCP endpoint."""
    headers: NotRequired[list[HeaderArgs]]
    """External: headers sent to it (AGENT_MEMORY_HEADER_<HEADER>)."""


class HttpToolArgs(TypedDict):
    """The inputs of an HttpTool; the same fields as a stack file's ``httpTools:`` entry."""

    description: pulumi.Input[str]
    """What the tool does, for the LLM (1-1024 characters)."""
    method: NotRequired[pulumi.Input[WebhookToolMethod]]
    """GET and DELETE send the arguments as the query; others as JSON. One of: GET, POST, PUT, PATCH, DELETE. Default: "POST"."""
    input_schema: NotRequired[dict[str, Any]]
    """JSON Schema draft-07 the arguments are checked against."""
    timeout: NotRequired[pulumi.Input[Duration]]
    """Per call, rate-limit wait included (e.g. 30s, 1m). Default: 30.0."""
    authentication: NotRequired[HttpToolAuthArgs]
    """The credential, if any."""
    rate_limit: NotRequired[RateLimitArgs]
    """Unset: no limit."""
    enabled: NotRequired[pulumi.Input[bool]]
    """false: agents are not given the tool. Default: true."""
    namespace: NotRequired[pulumi.Input[str]]
    """Unset: the stack's namespace."""
    labels: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Extra labels on the tool's ConfigMap."""
    annotations: NotRequired[pulumi.Input[dict[str, pulumi.Input[str]]]]
    """Annotations on the tool's ConfigMap."""
    display_name: pulumi.Input[str]
    """Human-readable name (1-64 characters)."""
    endpoint: NotRequired[pulumi.Input[str]]
    """The http(s) URL agents call; unset: phase Pending, not callable."""
    tags: NotRequired[pulumi.Input[list[pulumi.Input[str]]]]
    """Categorisation tags."""
    version: NotRequired[pulumi.Input[str]]
    """The tool's version. Default: "1.0.0"."""
    api_ref: NotRequired[ApiRefArgs]
    """The source API: {name, version, operationId}."""
    probe: NotRequired[pulumi.Input[bool]]
    """At deploy, send one request to the endpoint (no arguments, no credential) and set phase Error when it cannot be reached. Default: false."""


class LanguageClusterArgs(TypedDict):
    """The inputs of a LanguageCluster: the same document as a stack file's config."""

    namespace: str
    """The namespace every tool and agent lives in (unless one names another)."""
    create_namespace: NotRequired[bool]
    """Create the namespace (restricted Pod Security Standard), or adopt an existing one. Default: true."""
    part_of: NotRequired[str]
    """app.kubernetes.io/part-of of every object (unset: the namespace)."""
    defaults: NotRequired[DefaultsArgs]
    """Defaults for every workload: resources, security, egress, defaultDeny..."""
    tools: NotRequired[list[ToolArgs]]
    """The tools."""
    agents: NotRequired[list[AgentArgs]]
    """The agents."""
    http_tools: NotRequired[list[HttpToolEntryArgs]]
    """HTTP tools (STOA's Tool) agents reference by name in httpTools."""
    models: NotRequired[list[ModelArgs]]
    """The models; those through the gateway share it."""
    memories: NotRequired[list[MemoryArgs]]
    """LanguageMemories agents name in memory: managed (a memory MCP server deployed here) or external."""
    personas: NotRequired[list[PersonaArgs]]
    """Personas agents name in persona."""
    secrets: NotRequired[dict[str, dict[str, SecretValue]]]
    """Secrets this program creates: {<name>: {<key>: <value>}}."""
    external_secrets: NotRequired[list[str]]
    """Secrets made outside this program that secretKeyRefs may name."""
    external_services: NotRequired[list[ExternalServiceArgs]]
    """In-cluster Services made outside this program ({name, namespace}) that model endpoints, MCP servers, remote peers and memory addresses may point at."""


__all__ = [
    "A2AArgs",
    "A2ACallerArgs",
    "A2ASecuritySchemeArgs",
    "A2ASkillArgs",
    "A2ATokenVerificationArgs",
    "AffinityArgs",
    "AgentArgs",
    "AgentKeysArgs",
    "AgentPeerRefArgs",
    "AgentPortArgs",
    "ApiKeyRefArgs",
    "ApiKeySourceArgs",
    "ApiRefArgs",
    "AutoscalingArgs",
    "ClaimVolumeArgs",
    "ConfigMapVolumeArgs",
    "DefaultsArgs",
    "DisruptionBudgetArgs",
    "EgressRuleArgs",
    "EmptyDirVolumeArgs",
    "EnvFromSourceArgs",
    "ExecProbeArgs",
    "ExternalServiceArgs",
    "FullLabelSelectorArgs",
    "HeaderArgs",
    "HttpGetProbeArgs",
    "HttpToolArgs",
    "HttpToolAuthArgs",
    "HttpToolEntryArgs",
    "HttpToolRefArgs",
    "HttpToolSecretRefArgs",
    "IPBlockArgs",
    "InitContainerArgs",
    "KeyToPathArgs",
    "LabelSelectorArgs",
    "LanguageClusterArgs",
    "LanguageMemoryArgs",
    "LanguageModelArgs",
    "LanguageToolArgs",
    "LocalObjectRefArgs",
    "McpServerArgs",
    "MemoryAddressArgs",
    "MemoryArgs",
    "MemoryRefArgs",
    "ModelArgs",
    "ModelConfigurationArgs",
    "ModelGatewayDefaultsArgs",
    "ModelRateLimitsArgs",
    "ModelRefArgs",
    "NetworkPeerArgs",
    "NodeAffinityArgs",
    "NodeSelectorArgs",
    "NodeSelectorTermArgs",
    "ObservabilityDefaultsArgs",
    "PeerArgs",
    "PersistenceArgs",
    "PersonaArgs",
    "PodAffinityArgs",
    "PodAffinityTermArgs",
    "PortArgs",
    "PreferredNodeTermArgs",
    "ProbeArgs",
    "ProbesArgs",
    "ProjectedConfigMapArgs",
    "ProjectedSourceArgs",
    "ProjectedVolumeArgs",
    "RateLimitArgs",
    "ResourceAmountsArgs",
    "ResourcesArgs",
    "RetryPolicyArgs",
    "ScheduleArgs",
    "SchemaSyncArgs",
    "SecretKeyRefArgs",
    "SecretSourceArgs",
    "SecretVolumeArgs",
    "SecurityArgs",
    "SelectorRequirementArgs",
    "ServiceAccountArgs",
    "ServiceAccountTokenProjectionArgs",
    "ServiceSettingsArgs",
    "SyncAuthArgs",
    "TcpSocketProbeArgs",
    "TolerationArgs",
    "ToolArgs",
    "ToolOverrideArgs",
    "ToolRefArgs",
    "TopologySpreadArgs",
    "VolumeArgs",
    "VolumeMountArgs",
    "WebhookAuthArgs",
    "WebhookToolArgs",
    "WeightedPodAffinityTermArgs",
    "WorkspaceArgs",
]
