"""The LanguageTool spec and its schema-sync settings."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    model_validator,
)

from langop_infra.config._fields import (
    HeaderSpec,
    HttpPath,
    HttpUrl,
    Int,
    Port,
    Quantity,
    Seconds,
    SecretSource,
    Spec,
    SyncAccess,
    canonical_mcp_path,
    dns1035_label,
    duration_between,
    invalid,
    issuer_allowed,
)
from langop_infra.config._network import PeerSpec
from langop_infra.config._pod import Persistence, PodSettings
from langop_infra.config._volumes import PodExtensionsSpec, ServiceSettings


class SyncAuth(Spec):
    """OAuth 2.1 client credentials for schema sync (the MCP authorization spec): the client
    discovers the authorization server from the tool's 401 and asks for a token itself."""

    type: Literal["oauth2"] = "oauth2"
    """The scheme: OAuth 2.1 client credentials."""
    client_id: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="The client ID registered with the authorization server."
    )
    client_secret: SecretSource = Field(
        description="{secretKeyRef: {name, key}} naming a secret under langop-infra:secrets."
    )
    scopes: list[Annotated[str, Field(pattern=r"^[\x21\x23-\x5b\x5d-\x7e]+$")]] = Field(
        default=[], description="Scopes to ask for; unset: those the tool's 401 names."
    )
    issuer: HttpUrl | None = Field(
        default=None,
        description="The authorization server's issuer URL (the `issuer` of its metadata): "
        "the client secret goes only to that server's token endpoint. HTTPS, or http on "
        "loopback. Required.",
    )

    @model_validator(mode="after")
    def _issuer_pinned(self) -> SyncAuth:
        # A tool's 401 may name any authorization server; the long-lived deploy secret must
        # only ever go to the one the user chose.
        if self.issuer is None:
            raise invalid(
                "issuer_pin",
                "a client secret needs the authorization server it may be sent to: set "
                "schemaSync.auth.issuer to that server's issuer URL (the `issuer` in its "
                "/.well-known/oauth-authorization-server), e.g. issuer: https://auth.example.com",
            )
        if not issuer_allowed(self.issuer):
            raise invalid(
                "issuer_pin",
                f"issuer {self.issuer} must be an https URL (http only on loopback): the "
                "client secret would travel in clear text",
            )
        return self


class SchemaSyncSpec(Spec):
    """How ``pulumi up`` reads the tool's schema with MCP ``tools/list``."""

    enabled: bool = True
    """Read the tool's schema at deployment."""
    access: SyncAccess | None = Field(
        default=None,
        description="auto, direct or apiserver-proxy; unset: the cluster default (auto).",
    )
    sync_url: HttpUrl | None = Field(
        default=None, description="Call this URL instead of the endpoint."
    )
    required: bool = Field(default=False, description="Fail the deployment when the sync fails.")
    timeout: Annotated[Seconds, duration_between(0.1, 600)] = 10.0
    """Timeout of the whole sync."""
    headers: list[HeaderSpec] = []
    """HTTP headers sent with each request."""
    auth: SyncAuth | None = Field(
        default=None, description="OAuth 2.1 client credentials for a tool that demands a token."
    )
    # The client's PROTOCOLS, spelt out for type checkers (tests/test_typed_contract.py).
    protocol: Literal[
        "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
    ] = Field(default="auto", description="MCP revision: auto negotiates, newest first.")
    max_bytes: Quantity | None = Field(
        default=None, description="Cap on the whole listing's size over all pages (default 32Mi)."
    )
    max_response_bytes: Quantity | None = Field(
        default=None,
        description="Cap on one response or SSE event, counted decoded (default 8Mi).",
    )
    max_tools: Int = Field(
        default=10_000, ge=1, le=1_000_000, description="Cap on the tools listed."
    )
    max_pages: Int = Field(default=100, ge=1, le=100_000, description="Cap on tools/list pages.")


class ToolSpec(PodExtensionsSpec):
    """A LanguageTool: an MCP server run as a Deployment + Service, or as an agent sidecar."""

    name: Annotated[str, AfterValidator(dns1035_label)] = Field(
        description="Name of the tool's Deployment and Service."
    )
    type: Literal["mcp"] = "mcp"
    """The kind of tool server."""
    transport: Literal["http", "stdio"] = Field(
        default="http",
        description="stdio: command, args and env start a stdio-only MCP server, run behind the "
        "mcp-proxy bridge in the same container, which serves /mcp on port (the image must "
        "hold mcp-proxy and the server's runtime).",
    )
    deployment_mode: Literal["service", "sidecar"] = "service"
    """service: Deployment + Service; sidecar: joins each referencing agent's pod."""
    port: Port = 8080
    """Port the server listens on."""
    mcp_path: Annotated[str, AfterValidator(canonical_mcp_path)] = "/mcp"
    """HTTP path of the MCP endpoint."""
    health_path: HttpPath = "/health"
    """HTTP path of the readiness and liveness probes."""
    allow_from: list[PeerSpec] = Field(
        default=[], description="Extra ingress sources (service mode)."
    )
    schema_sync: SchemaSyncSpec = SchemaSyncSpec()
    """How pulumi up reads the tool's schema with tools/list."""
    persistence: Persistence | None = None
    """A PersistentVolumeClaim <tool>-data mounted into a service tool."""
    service: ServiceSettings | None = Field(
        default=None,
        description="The Service's type (ClusterIP, NodePort, LoadBalancer), annotations "
        "and labels (service mode); unset: ClusterIP.",
    )

    @model_validator(mode="after")
    def _stdio_fields(self) -> ToolSpec:
        if self.transport != "stdio":
            return self
        if not self.command:
            raise invalid(
                "stdio_command",
                "a stdio tool needs command: the server's command line, e.g. [npx, -y, "
                "'@modelcontextprotocol/server-everything', stdio]",
            )
        fixed = [
            f"{alias} (the bridge serves {value})"
            for field, alias, value in STDIO_FIXED_PATHS
            if field in self.model_fields_set and getattr(self, field) != value
        ]
        if fixed:
            raise invalid("stdio_paths", f"a stdio tool cannot set {', '.join(fixed)}; remove them")
        return self

    @model_validator(mode="after")
    def _sidecar_fields(self) -> ToolSpec:
        if self.deployment_mode == "sidecar":
            if self.persistence is not None:
                raise invalid(
                    "sidecar_fields",
                    "persistence applies to service tools; a sidecar uses the agent's workspace",
                )
            if self.allow_from:
                raise invalid(
                    "sidecar_fields",
                    "allowFrom applies to service tools; a sidecar is reached on localhost only",
                )
            pod_level = [
                alias
                for field, alias in SIDECAR_POD_FIELDS.items()
                if field in self.model_fields_set
            ]
            if pod_level:
                raise invalid(
                    "sidecar_fields",
                    f"{', '.join(pod_level)} set the pod, and a sidecar joins the agent's pod; "
                    "set them on the agent",
                )
        if self.autoscaling is not None and self.persistence is not None:
            raise invalid(
                "autoscaling",
                "autoscaling needs pods that can run side by side; a tool with persistence "
                "has one ReadWriteOnce volume, so remove autoscaling",
            )
        return self


# What the stdio bridge (mcp-proxy) serves, fixed: field, stack-file name, value.
STDIO_FIXED_PATHS = (("mcp_path", "mcpPath", "/mcp"), ("health_path", "healthPath", "/status"))

# Pod-level fields a sidecar tool cannot carry, as a stack file names them: every pod
# setting but those of its own container, and the workload's scaling and egress.
SIDECAR_POD_FIELDS = {
    name: ToolSpec.model_fields[name].alias or name
    for name in [
        *(n for n in PodSettings.model_fields if n not in ("env_from", "probes")),
        "disruption_budget",
        "autoscaling",
        "replicas",
        "egress",
        "egress_to",
        "volumes",
        "volume_mounts",
        "init_containers",
        "service_account",
        "service",
    ]
}
