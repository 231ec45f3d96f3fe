"""The LanguageAgent spec: tool references, external MCP servers, webhook tools, the
workspace, ports, models and persona."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AliasChoices,
    BeforeValidator,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from langop_infra.spec.fields import (
    SECRET_KEY,
    TOOL_NAME,
    DnsLabel,
    HeaderName,
    HeaderSpec,
    HttpPath,
    HttpUrl,
    Image,
    Int,
    Port,
    Quantity,
    Seconds,
    SecretKeyRef,
    Spec,
    dns_label,
    dns_subdomain,
    duration_between,
    instructions_text,
    invalid,
    not_reserved_mount,
)
from langop_infra.spec.model import ModelRef, PersonaSpec
from langop_infra.spec.network import PeerSpec
from langop_infra.spec.pod import WorkloadSpec


class ToolRef(Spec):
    """A reference from an agent to a LanguageTool."""

    name: DnsLabel
    """Name of the LanguageTool."""
    namespace: DnsLabel | None = None
    """Namespace of the tool (unset: the agent's)."""
    enabled: bool = True
    """false: keep the reference but do not wire the tool."""
    required: bool = Field(default=False, description="The agent waits for the tool to be ready.")


class McpServerSpec(Spec):
    """An external MCP server (ark style), reached at ``url`` with optional headers."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")]
    """Name the agent knows the server by."""
    url: HttpUrl
    """The server's MCP endpoint."""
    headers: list[HeaderSpec] = []
    """HTTP headers sent with each request."""
    timeout: Annotated[Seconds, duration_between(0.1, 600)] | None = None
    """Per-request timeout (unset: the agent's default)."""


class WebhookAuth(Spec):
    """How a webhook tool authenticates."""

    type: Literal["none", "bearer", "basic", "apiKey", "oauth2"] = "none"
    """The scheme; every scheme but none needs secretRef."""
    secret_ref: SecretKeyRef | None = None
    """The Secret key holding the credential."""
    header_name: HeaderName = "Authorization"
    """Header that carries the credential."""

    @model_validator(mode="after")
    def _secret_needed(self) -> WebhookAuth:
        if self.type != "none" and self.secret_ref is None:
            raise invalid(
                "secret_needed", f"authentication type {self.type!r} needs secretRef {{name, key}}"
            )
        if self.type == "none" and self.secret_ref is not None:
            raise invalid(
                "secret_needed", "secretRef is set but type is 'none'; set type (e.g. bearer)"
            )
        return self


class RateLimit(Spec):
    """A token bucket on calls of a webhook tool."""

    requests_per_minute: Int = Field(ge=1, le=10000)
    """Calls allowed per minute."""
    burst: Int = Field(ge=1, le=1000)
    """Calls allowed at once."""


def json_schema_input(value: Any) -> Any:
    """A JSON Schema as a mapping, a JSON string, or a pydantic model class."""
    if isinstance(value, type) and hasattr(value, "model_json_schema"):
        return value.model_json_schema()
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise invalid(
                "json_schema_input",
                f"inputSchema is not valid JSON: {exc.msg} at line {exc.lineno}",
            ) from None
        except RecursionError:
            raise invalid("json_schema_input", "inputSchema is nested too deeply to read") from None
    if not isinstance(value, Mapping):
        raise invalid("json_schema_input", "inputSchema must be a JSON Schema object")
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft7Validator.check_schema(value)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise invalid(
            "json_schema_input",
            f"inputSchema is not valid JSON Schema draft-07 at {where}: {exc.message}",
        ) from None
    except RecursionError:
        raise invalid("json_schema_input", "inputSchema is nested too deeply to check") from None
    return dict(value)


class WebhookToolSpec(Spec):
    """An inline HTTP tool (STOA Tool / ark inline tool): the agent calls ``url`` directly."""

    name: Annotated[str, Field(pattern=TOOL_NAME.pattern)]
    """The tool's name, as the model sees it."""
    description: str = Field(default="", max_length=1024)
    """What the tool does, as the model sees it."""
    url: HttpUrl
    """The URL the agent calls."""
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    """HTTP method of the call."""
    input_schema: Annotated[dict[str, Any], BeforeValidator(json_schema_input)] = {"type": "object"}
    """JSON Schema (draft-07) of the tool's arguments."""
    timeout: Annotated[Seconds, duration_between(1, 600)] = 30.0
    """Timeout of a call."""
    authentication: WebhookAuth = WebhookAuth()
    """How the call authenticates."""
    rate_limit: RateLimit | None = None
    """A limit on calls (unset: none)."""
    enabled: bool = True
    """false: keep the tool but do not offer it."""


def config_map_key(value: str) -> str:
    if not SECRET_KEY.fullmatch(value) or len(value) > 253 or value.startswith(".."):
        raise invalid(
            "file_name",
            f"{value!r} is not a valid file name here: use letters, digits, '-', '_' and '.', "
            "no '/' and not starting with '..' (a ConfigMap key)",
        )
    return value


class Workspace(Spec):
    """A persistent workspace: PVC ``<agent>-workspace``, seeded once with files that do not
    exist yet (an agent's edits survive restarts)."""

    size: Quantity = "1Gi"
    """Size of the claim."""
    storage_class_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    """StorageClass of the claim (unset: the cluster's default)."""
    access_modes: Annotated[
        list[Literal["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod", "ReadOnlyMany"]],
        Field(min_length=1),
    ] = ["ReadWriteOnce"]
    """Access modes of the claim; several pods need ReadWriteMany."""
    mount_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] | None = Field(
        default=None, description="Unset: the agent's workspacePath."
    )
    initial_files: dict[Annotated[str, AfterValidator(config_map_key)], str] = {}
    """Files written once into an empty workspace: {name: content}."""
    seed_config_map: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    """A ConfigMap whose keys are copied once into the workspace."""
    seed_image: Image = "docker.io/library/busybox:1.36.1"
    """Image of the seeding init container."""

    @model_validator(mode="after")
    def _one_seed(self) -> Self:
        if self.initial_files and self.seed_config_map:
            raise invalid(
                "workspace_seed",
                "give initialFiles or seedConfigMap, not both; put every file in one of them",
            )
        if "ReadOnlyMany" in self.access_modes:
            raise invalid(
                "workspace_access",
                "ReadOnlyMany cannot hold an agent's edits; use ReadWriteOnce or ReadWriteMany",
            )
        return self

    @property
    def seeded(self) -> bool:
        return bool(self.initial_files) or self.seed_config_map is not None


class AgentPort(Spec):
    """A port the agent listens on, published by ClusterIP Service ``<agent>``."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$")] = Field(
        description="An IANA service name: at most 15 lower-case letters, digits and '-'."
    )
    port: Port
    """Port number, 1-65535."""


def persona_ref(value: Any) -> Any:
    """A persona's name, or the persona itself; each form checked on its own, so a problem is
    reported at its field rather than once per form the value could have taken."""
    if value is None or isinstance(value, PersonaSpec):
        return value
    if isinstance(value, str):
        return dns_label(value)
    if isinstance(value, Mapping):
        return PersonaSpec.model_validate(value)
    raise invalid(
        "persona",
        f"expected a persona's name or {{name, tone, personality, expertise}}, got "
        f"{type(value).__name__}",
    )


class AgentSpec(WorkloadSpec):
    """A LanguageAgent: a Deployment wired to its tools, MCP servers and webhook tools."""

    tools: list[ToolRef] = []
    """LanguageTools the agent uses, by reference."""
    mcp_servers: list[McpServerSpec] = []
    """External MCP servers (ark style)."""
    webhook_tools: list[WebhookToolSpec] = []
    """Inline HTTP tools the agent calls directly."""
    workspace_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = "/workspace"
    """Where the workspace shared with sidecar tools is mounted."""
    workspace: Workspace | None = Field(default=None, description="Unset: an emptyDir workspace.")
    ports: list[AgentPort] = []
    """Ports the agent listens on, published by Service <agent>."""
    allow_from: list[PeerSpec] = Field(
        default=[], description="Who may reach the agent's ports (nobody when empty)."
    )
    model: DnsLabel | None = Field(
        default=None, description="ark's shorthand: one model, role primary."
    )
    models: list[ModelRef] = Field(
        default=[], description="LanguageModels of the namespace, in order."
    )
    instructions: Annotated[str, AfterValidator(instructions_text)] | None = Field(
        default=None,
        validation_alias=AliasChoices("instructions", "systemPrompt"),
        description="System prompt (alias systemPrompt): AGENT_INSTRUCTIONS.",
    )
    persona: Annotated[DnsLabel | PersonaSpec | None, BeforeValidator(persona_ref)] = Field(
        default=None, description="A persona's name under personas, or the persona itself."
    )

    @model_validator(mode="after")
    def _ports(self) -> Self:
        several = self.replicas > 1 or self.autoscaling is not None
        if several and self.workspace and "ReadWriteMany" not in self.workspace.access_modes:
            raise invalid(
                "workspace_access",
                "several pods share one workspace: set workspace.accessModes to "
                "[ReadWriteMany] (on storage that offers it), or run one replica",
            )
        if self.allow_from and not self.ports:
            raise invalid("agent_ports", "allowFrom admits peers to the agent's ports; add ports")
        for field in ("liveness", "readiness", "startup"):
            probe = getattr(self.probes, field) if self.probes else None
            if probe is not None and not probe.has_handler:
                # A tool's probe falls back to its healthPath; an agent has no such path.
                raise invalid(
                    "probe_handler",
                    f"the agent's {field} probe needs a handler: httpGet {{path, port}}, "
                    "tcpSocket {port} or exec {command}",
                )
        for field, seen in (("name", set()), ("port", set())):
            for port in self.ports:
                key = getattr(port, field)
                if key in seen:
                    raise invalid("agent_ports", f"port {field} {key!r} is given twice")
                seen.add(key)
        return self

    @field_validator("models")
    @classmethod
    def _model_or_models(cls, value: list[ModelRef], info: ValidationInfo) -> list[ModelRef]:
        if value and info.data.get("model") is not None:
            raise invalid("model_or_models", "set model (one name) or models (a list), not both")
        return value


def model_refs(agent: AgentSpec) -> list[ModelRef]:
    """The agent's model references, ark's ``model: <name>`` shorthand expanded."""
    if agent.model is not None:
        return [ModelRef(name=agent.model)]
    return list(agent.models)
