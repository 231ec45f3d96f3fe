"""LanguageAgentArgs: GENERATED from the specs by ``python
tools/generate_args.py``; do not edit (tests/test_typed_contract.py checks it is current).

It lives apart from ``args.py`` because its tools and models may be components: the
component-typed aliases live with their components, and ``args.py`` imports nothing of them.
"""

import pulumi
from typing_extensions import NotRequired, TypedDict

from langop_infra.components._http_tool import (
    HttpToolEntry,
)
from langop_infra.components._memory import (
    MemoryEntry,
)
from langop_infra.components._peers import (
    PeerEntry,
)
from langop_infra.components.args import (
    A2AArgs,
    AffinityArgs,
    AgentPortArgs,
    AutoscalingArgs,
    DefaultsArgs,
    DisruptionBudgetArgs,
    Egress,
    EgressRuleArgs,
    EnvFromSourceArgs,
    ImagePullPolicy,
    InitContainerArgs,
    LocalObjectRefArgs,
    McpServerArgs,
    PeerArgs,
    PersonaEntry,
    ProbesArgs,
    ResourcesArgs,
    Runtime,
    ScheduleArgs,
    SecretValue,
    SecurityArgs,
    ServiceAccountArgs,
    TolerationArgs,
    TopologySpreadArgs,
    VolumeArgs,
    VolumeMountArgs,
    WebhookToolArgs,
    WorkspaceArgs,
)
from langop_infra.components.model import (
    ModelEntry,
    ModelName,
)
from langop_infra.components.tool import (
    ToolEntry,
)


class LanguageAgentArgs(TypedDict):
    """The inputs of a LanguageAgent; the same fields as a stack file's ``agents:`` entry."""

    a2a: NotRequired[A2AArgs]
    """Serve A2A: a Service port named a2a and an agent card."""
    agents: NotRequired[list[PeerEntry]]
    """A2A peers it calls: {name, namespace} (an agent of the stack) or {name, url, headers}."""
    memory: NotRequired[MemoryEntry]
    """A LanguageMemory of the stack the agent uses: {name}."""
    schedule: NotRequired[ScheduleArgs]
    """Run as a CronJob on this schedule (AGENT_MODE=scheduled) instead of a Deployment."""
    metrics_from: NotRequired[pulumi.Input[list[PeerArgs]]]
    """runtime: builtin: who may reach the health port (9090: /metrics, /healthz, /readyz), and that port only, e.g. Prometheus (nobody when empty; the kubelet's probes come from the node)."""
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
    image: NotRequired[pulumi.Input[str]]
    """Container image, e.g. ghcr.io/org/agent:1.2.3 (required unless runtime is builtin). Default: ""."""
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
    runtime: NotRequired[pulumi.Input[Runtime]]
    """image: run the agent image given; builtin: the package's own agent (image ghcr.io/langop/langop-agent:0.1.0 unless image is given; command python -m langop_infra.agent serve unless command is given). One of: image, builtin. Default: "image"."""
    max_iterations: NotRequired[pulumi.Input[int]]
    """The built-in runtime's bound on model calls per turn (config.yaml agent.maxIterations; unset: 10)."""
    tools: NotRequired[list[ToolEntry]]
    """LanguageTool references; ark's inline webhook tools may sit here too."""
    mcp_servers: NotRequired[pulumi.Input[list[McpServerArgs]]]
    """External MCP servers (ark style)."""
    webhook_tools: NotRequired[pulumi.Input[list[WebhookToolArgs]]]
    """Inline HTTP tools the agent calls directly."""
    http_tools: NotRequired[list[HttpToolEntry]]
    """HttpTools of the stack the agent may call: {name, namespace}."""
    workspace_path: NotRequired[pulumi.Input[str]]
    """Where the workspace shared with sidecar tools is mounted. Default: "/workspace"."""
    workspace: NotRequired[WorkspaceArgs]
    """Unset: an emptyDir workspace."""
    ports: NotRequired[pulumi.Input[list[AgentPortArgs]]]
    """Ports the agent listens on, published by Service <agent>."""
    allow_from: NotRequired[pulumi.Input[list[PeerArgs]]]
    """Who may reach the agent's ports (nobody when empty)."""
    model: NotRequired[ModelName]
    """ark's shorthand, one model (role primary): a declared model's name or modelName, or any model id, passed on as AGENT_MODEL with a warning."""
    models: NotRequired[list[ModelEntry]]
    """LanguageModels of the namespace, in order."""
    instructions: NotRequired[pulumi.Input[str]]
    """System prompt (alias systemPrompt): AGENT_INSTRUCTIONS."""
    system_prompt: NotRequired[pulumi.Input[str]]
    """Alias of instructions."""
    persona: NotRequired[PersonaEntry]
    """A persona's name under personas, or the persona itself."""
    part_of: NotRequired[str]
    """app.kubernetes.io/part-of (default: the namespace)."""
    defaults: NotRequired[DefaultsArgs]
    """Cluster-wide defaults (resources, security, egress...)."""


__all__ = ["LanguageAgentArgs"]
