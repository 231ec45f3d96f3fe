"""The document of one namespace: tools, agents, models, personas, defaults and secrets."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
)

from langop_infra.config._fields import (
    Cidr,
    DnsLabel,
    EgressMode,
    Port,
    Spec,
    SyncAccess,
    canonical_mcp_path,
    dns1035_label,
    dns_subdomain,
    overlay,
    secret_key,
    secret_text,
)
from langop_infra.config._http_tool import HttpToolSpec
from langop_infra.config._memory import MemorySpec
from langop_infra.config._model import (
    ModelGatewayDefaults,
    ModelSpec,
    ObservabilityDefaults,
    PersonaSpec,
)
from langop_infra.config._network import NetworkPeer
from langop_infra.config._pod import Resources, Security
from langop_infra.config.agent import AgentSpec
from langop_infra.config.tool import ToolSpec


class Defaults(Spec):
    """Cluster-wide defaults applied to every tool and agent that does not set its own."""

    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    """When the kubelet pulls images (unset: Kubernetes' default)."""
    resources: Resources = Resources()
    """Requests and limits of every workload that sets none."""
    security: Security = Security()
    """Security settings of every workload that sets none."""
    egress: EgressMode = "open"
    """open, or restricted (only DNS, the workload's tools and egressTo)."""
    default_deny: bool = False
    """Add a NetworkPolicy denying every ingress the others do not admit."""
    schema_sync_access: SyncAccess = "auto"
    """How schema sync reaches tools: auto, direct or apiserver-proxy."""
    schema_sync_from: list[NetworkPeer] = Field(
        default=[],
        description="Where schema sync reaches tools from: {cidr, except} for the control "
        "plane under apiserver-proxy, or {namespace, podLabels} for an in-cluster runner.",
    )
    service_cidr: Cidr | None = Field(
        default=None,
        description="The cluster's Service range (kube-apiserver --service-cluster-ip-range): "
        "its first address is the API server's ClusterIP, which endpoint advice then warns "
        "of (unset: the common distributions' defaults).",
    )
    sidecar_style: Literal["native", "container"] = Field(
        default="native",
        description="native: init containers with restartPolicy Always (Kubernetes >= 1.29); "
        "container: plain containers, for older clusters.",
    )
    endpoint_style: Literal["base", "path"] = Field(
        default="base", description="base: endpoints without the MCP path; path: with it."
    )
    strict_egress: bool = Field(
        default=False, description="Fail when restricted egress does not admit an agent's servers."
    )
    model_gateway: ModelGatewayDefaults | None = Field(
        default=None, description="Unset: built-ins."
    )
    require_image_digests: bool = Field(
        default=False,
        description="Refuse an image given by tag without a digest (name@sha256:...), the "
        "built-in gateway image included; off: validate and render warn.",
    )
    observability: ObservabilityDefaults | None = None
    """Telemetry settings (unset: none)."""

    @field_validator("resources")
    @classmethod
    def _complete_resources(cls, value: Resources) -> Resources:
        # A default that names one amount keeps the built-in value of the others.
        return overlay(Resources(), value)


class ToolsFrom(Spec):
    """Another stack whose exported ``toolTargets`` this stack's agents may reference."""

    stack: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")] = (
        Field(description="<organization>/<project>/<stack>, as `pulumi stack ls` shows it.")
    )


class ExportedToolTarget(Spec):
    """One entry of a stack's ``toolTargets`` output: a service tool other stacks may use."""

    name: Annotated[str, AfterValidator(dns1035_label)]
    """The tool's name (its Service's)."""
    namespace: DnsLabel
    """The tool's namespace."""
    port: Port
    """The port the tool listens on."""
    mcp_path: Annotated[str, AfterValidator(canonical_mcp_path)] = "/mcp"
    """HTTP path of its MCP endpoint."""
    deployment_mode: Literal["service"] = "service"
    """Only service tools are exported."""


class ExternalService(Spec):
    """An in-cluster Service already running, made outside this stack: addresses that name
    it (``http://<name>.<namespace>.svc.cluster.local:<port>``) pass validation."""

    name: Annotated[str, AfterValidator(dns1035_label)]
    """The Service's name."""
    namespace: DnsLabel
    """The Service's namespace."""


class ClusterSpec(Spec):
    """One namespace's tools, agents, defaults and secrets."""

    namespace: DnsLabel
    """The namespace every tool and agent lives in (unless one names another)."""
    create_namespace: bool = True
    """Create the namespace (restricted Pod Security Standard), or adopt an existing one."""
    part_of: (
        Annotated[str, Field(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")] | None
    ) = None
    """app.kubernetes.io/part-of of every object (unset: the namespace)."""
    defaults: Defaults = Field(default_factory=lambda: Defaults())
    """Defaults for every workload: resources, security, egress, defaultDeny..."""
    tools: list[ToolSpec] = []
    """The tools."""
    agents: list[AgentSpec] = []
    """The agents."""
    http_tools: list[HttpToolSpec] = Field(
        default=[],
        description="HTTP tools (STOA's Tool) agents reference by name in httpTools.",
    )
    models: list[ModelSpec] = []
    """The models; those through the gateway share it."""
    memories: list[MemorySpec] = Field(
        default=[],
        description="LanguageMemories agents name in memory: managed (a memory MCP server "
        "deployed here) or external.",
    )
    personas: list[PersonaSpec] = []
    """Personas agents name in persona."""
    secrets: dict[
        Annotated[str, AfterValidator(dns_subdomain)],
        dict[
            Annotated[str, AfterValidator(secret_key)], Annotated[Any, AfterValidator(secret_text)]
        ],
    ] = {}
    """Secrets this program creates: {<name>: {<key>: <value>}}."""
    external_secrets: list[Annotated[str, AfterValidator(dns_subdomain)]] = Field(
        default=[], description="Secrets made outside this program that secretKeyRefs may name."
    )
    external_services: list[ExternalService] = Field(
        default=[],
        description="In-cluster Services made outside this program ({name, namespace}) that "
        "model endpoints, MCP servers, remote peers and memory addresses may point at.",
    )


def gateway_defaults(defaults: Defaults) -> ModelGatewayDefaults:
    """``defaults.modelGateway`` with its built-in values when unset."""
    return defaults.model_gateway or ModelGatewayDefaults()
