"""The LanguageAgent spec: tools, MCP servers, webhook tools, workspace, ports, models, persona."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal, cast

from pydantic import (
    AfterValidator,
    AliasChoices,
    BeforeValidator,
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from langop_infra.config import _builtin as builtin
from langop_infra.config._agent_features import AgentFeatureFields, peer_headers
from langop_infra.config._fields import (
    SECRET_KEY,
    TOOL_NAME,
    ConcreteHttpUrl,
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
from langop_infra.config._input_schema import json_schema_input
from langop_infra.config._model import ModelRef, PersonaSpec
from langop_infra.config._names import header_env_name, tool_header_env_name
from langop_infra.config._network import PeerSpec
from langop_infra.config._tool_overrides import ToolOverride, override_clashes
from langop_infra.config._volumes import PodExtensionsSpec

# Keys of ark's inline tools that a LanguageTool reference never has.
WEBHOOK_ONLY_KEYS = frozenset({"url", "method", "inputSchema", "input_schema", "description"})

ModelId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=253,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$",
        description="A model id such as 'llama3.2', 'gpt-4o-mini' or 'ollama/llama3.2:8b'.",
    ),
]


class ToolRef(Spec):
    """A reference from an agent to a LanguageTool."""

    name: DnsLabel
    """Name of the LanguageTool."""
    namespace: DnsLabel | None = None
    """Namespace of the tool (unset: the agent's)."""
    enabled: bool = True
    """false: keep the reference but do not wire the tool."""
    required: bool = Field(default=False, description="The agent waits for the tool to be ready.")
    allowed_tools: list[Annotated[str, Field(min_length=1, max_length=128)]] | None = Field(
        default=None,
        description="Only these of the tool's tools are offered to the agent (config.yaml "
        "allowedTools; the agent's registry enforces it, schema sync reports unknown names). "
        "Unset: all of them.",
    )
    headers: list[HeaderSpec] = Field(
        default=[],
        description="Headers the agent sends to the tool: a value, or valueFrom.secretKeyRef, "
        "reaching the agent only as env LANGOP_TOOL_<TOOL>_HEADER_<HEADER>.",
    )

    overrides: dict[Annotated[str, Field(min_length=1, max_length=128)], ToolOverride] = Field(
        default={},
        description="{<tool>: {name, description}}: the agent's registry offers the tool under "
        "this name and description and maps calls back; schema sync sees the original.",
    )

    @field_validator("allowed_tools")
    @classmethod
    def _no_repeats(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise invalid("allowed_tools", "allowedTools names a tool twice; list each once")
        return value

    @model_validator(mode="after")
    def _overrides_apart(self) -> ToolRef:
        clash = override_clashes(self.allowed_tools, self.overrides)
        if clash:
            raise invalid("tool_override", f"overrides: {clash}")
        return self


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
    transport: Literal["http", "url"] = Field(
        default="http",
        description="http: url is the MCP endpoint; url: url is a well-known document the "
        "agent discovers the endpoint from (language-operator's MCP client).",
    )
    auto_connect: bool = Field(
        default=True, description="false: the agent connects only when asked (registry.connect)."
    )
    allowed_tools: list[Annotated[str, Field(min_length=1, max_length=128)]] | None = Field(
        default=None,
        description="Only these of the server's tools are offered to the agent (config.yaml "
        "mcpServers[].allowedTools, which the agent's registry enforces). Unset: all of them.",
    )

    @field_validator("allowed_tools")
    @classmethod
    def _no_repeats(cls, value: list[str] | None) -> list[str] | None:
        if value is not None and len(set(value)) != len(value):
            raise invalid("allowed_tools", "allowedTools names a tool twice; list each once")
        return value


class WebhookAuth(Spec):
    """How an HTTP tool authenticates; the credential reaches the agent only as a
    ``secretKeyRef`` env var (``AGENT_WEBHOOK_<TOOL>_AUTH``)."""

    type: Literal["none", "bearer", "basic", "apiKey", "oauth2"] = Field(
        default="none",
        description="bearer: '<headerName>: Bearer <value>'; basic: the value is "
        "user:password, sent base64-encoded; apiKey: the raw value in headerName; oauth2: "
        'the value is JSON {"tokenUrl", "clientId", "clientSecret", "scope"} for a '
        "client-credentials token, or a ready access token.",
    )
    secret_ref: SecretKeyRef | None = Field(
        default=None,
        description="The Secret key holding the credential (same namespace as the agent).",
    )
    header_name: HeaderName = Field(
        default="Authorization", description="The header that carries the credential."
    )

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
    """A token bucket per agent pod: a call waits up to the timeout for a token."""

    requests_per_minute: Int = Field(ge=1, le=10000, description="Refill rate (1-10000).")
    burst: Int = Field(ge=1, le=1000, description="Bucket size: calls allowed at once (1-1000).")


def _is_webhook_entry(item: object) -> bool:
    """An entry under an agent's ``tools`` with a key only a webhook tool has."""
    return isinstance(item, Mapping) and not WEBHOOK_ONLY_KEYS.isdisjoint(
        cast("Mapping[str, object]", item)
    )


class HttpToolFields(Spec):
    """What an agent needs to call an HTTP tool: shared by inline ``webhookTools`` and the
    namespace's ``httpTools`` (one document, one executor: langop_infra.agent.http_tools)."""

    description: str = Field(
        default="", max_length=1024, description="What the tool does, for the LLM."
    )
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = Field(
        default="POST",
        description="GET and DELETE send the arguments as the query; others as JSON.",
    )
    input_schema: Annotated[dict[str, Any], BeforeValidator(json_schema_input)] = Field(
        default={"type": "object"},
        description="JSON Schema draft-07 the arguments are checked against: an object, or a "
        "JSON string (ark's form, passed on as written).",
    )
    timeout: Annotated[Seconds, duration_between(1, 600)] = Field(
        default=30.0, description="Per call, rate-limit wait included (e.g. 30s, 1m)."
    )
    authentication: WebhookAuth = Field(
        default=WebhookAuth(), description="The credential, if any."
    )
    rate_limit: RateLimit | None = Field(default=None, description="Unset: no limit.")
    enabled: bool = Field(default=True, description="false: agents are not given the tool.")
    # ark's runtime reads inputSchema as a string; a string given is passed on byte for byte.
    _input_schema_text: str | None = PrivateAttr(None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_schema_text(cls, data: Any, handler: Any) -> Self:
        model = handler(data)
        if isinstance(data, Mapping):
            fields = cast("Mapping[str, object]", data)
            raw = fields.get("inputSchema", fields.get("input_schema"))
            if isinstance(raw, str):
                model._input_schema_text = raw
        return model

    @property
    def input_schema_text(self) -> str:
        """``inputSchema`` as the JSON string ark's runtime reads: as written, or compact."""
        if self._input_schema_text is not None:
            return self._input_schema_text
        return json.dumps(self.input_schema, separators=(",", ":"), ensure_ascii=False)


class WebhookToolSpec(HttpToolFields):
    """An inline HTTP tool (ark inline tool): the agent calls ``url`` directly."""

    name: Annotated[str, Field(pattern=TOOL_NAME.pattern)] = Field(
        description="The tool's name as the LLM sees it."
    )
    url: ConcreteHttpUrl = Field(
        validation_alias=AliasChoices("url", "endpoint"),
        description="The endpoint (alias endpoint, as in an HttpTool).",
    )


class HttpToolRef(Spec):
    """A reference from an agent to an HttpTool (``httpTools:``) of the stack."""

    name: DnsLabel = Field(description="The HttpTool's name.")
    namespace: DnsLabel | None = Field(default=None, description="Unset: the agent's namespace.")


def config_map_key(value: str) -> str:
    if not SECRET_KEY.fullmatch(value) or len(value) > 253 or value.startswith(".."):
        raise invalid(
            "file_name",
            f"{value!r} is not a valid file name here: use letters, digits, '-', '_' and '.', "
            "no '/' and not starting with '..' (a ConfigMap key)",
        )
    return value


# busybox 1.36.1's multi-platform index, by digest: a tag can be re-pushed, a digest cannot.
# Not read from the registry here: the digest that several public repositories pin for
# docker.io/library/busybox:1.36.1 (checked 2026-11-25); bump tag and digest together.
DEFAULT_INIT_IMAGE = (
    "docker.io/library/busybox:1.36.1"
    "@sha256:73aaf090f3d85aa34ee199857f03fa3a95c8ede2ffd4cc2cdb5b94e566b11662"
)


class Workspace(Spec):
    """A persistent workspace: PVC ``<agent>-workspace``, given initial files once where none
    of that name exists yet (an agent's edits survive restarts)."""

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
    initial_files_config_map: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    """A ConfigMap whose keys are copied once into the workspace."""
    init_image: Image = Field(
        default=DEFAULT_INIT_IMAGE,
        description="The image of the init container that copies the initial files (needs sh, cp).",
    )

    @model_validator(mode="after")
    def _one_source_of_files(self) -> Self:
        if self.initial_files and self.initial_files_config_map:
            raise invalid(
                "workspace_files",
                "give initialFiles or initialFilesConfigMap, not both; "
                "put every file in one of them",
            )
        if "ReadOnlyMany" in self.access_modes:
            raise invalid(
                "workspace_access",
                "ReadOnlyMany cannot hold an agent's edits; use ReadWriteOnce or ReadWriteMany",
            )
        return self

    @property
    def has_initial_files(self) -> bool:
        return bool(self.initial_files) or self.initial_files_config_map is not None


class AgentPort(Spec):
    """A port the agent listens on, published by ClusterIP Service ``<agent>``."""

    name: Annotated[str, Field(pattern=r"^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$")] = Field(
        description="An IANA service name: at most 15 lower-case letters, digits and '-'."
    )
    port: Port
    """Port number, 1-65535."""


def persona_ref(value: object) -> Any:
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


class AgentSpec(builtin.BuiltinRuntime, PodExtensionsSpec, AgentFeatureFields):
    """A LanguageAgent: a Deployment wired to its tools, MCP servers and webhook tools."""

    tools: list[ToolRef] = Field(
        default=[],
        description="LanguageTool references; ark's inline webhook tools may sit here too.",
    )
    mcp_servers: list[McpServerSpec] = []
    """External MCP servers (ark style)."""
    webhook_tools: list[WebhookToolSpec] = []
    """Inline HTTP tools the agent calls directly."""
    http_tools: list[HttpToolRef] = Field(
        default=[], description="HttpTools of the stack the agent may call: {name, namespace}."
    )
    workspace_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = "/workspace"
    """Where the workspace shared with sidecar tools is mounted."""
    workspace: Workspace | None = Field(default=None, description="Unset: an emptyDir workspace.")
    ports: list[AgentPort] = []
    """Ports the agent listens on, published by Service <agent>."""
    allow_from: list[PeerSpec] = Field(
        default=[], description="Who may reach the agent's ports (nobody when empty)."
    )
    model: ModelId | None = Field(
        default=None,
        description="ark's shorthand, one model (role primary): a declared model's name or "
        "modelName, or any model id, passed on as AGENT_MODEL with a warning.",
    )
    models: list[ModelRef] = Field(
        default=[], description="LanguageModels of the namespace, in order."
    )
    instructions: Annotated[str, AfterValidator(instructions_text)] | None = Field(
        default=None,
        validation_alias=AliasChoices("instructions", "systemPrompt", "system_prompt"),
        description="System prompt (alias systemPrompt): AGENT_INSTRUCTIONS.",
    )
    persona: Annotated[DnsLabel | PersonaSpec | None, BeforeValidator(persona_ref)] = Field(
        default=None, description="A persona's name under personas, or the persona itself."
    )

    @model_validator(mode="before")
    @classmethod
    def _ark_tools(cls, data: object) -> Any:
        """ark's inline webhook tools under ``tools``: an entry with a webhook-only key
        (``url``, ``method``, ``inputSchema``, ``description``) cannot be a LanguageTool
        reference, so it joins ``webhookTools``."""
        if not isinstance(data, Mapping):
            return data
        fields = cast("Mapping[str, Any]", data)
        tools = fields.get("tools")
        if not isinstance(tools, list):
            return fields
        refs: list[object] = []
        webhooks: list[object] = []
        for item in cast("list[object]", tools):
            (webhooks if _is_webhook_entry(item) else refs).append(item)
        if not webhooks:
            return fields
        key = "webhook_tools" if "webhook_tools" in fields else "webhookTools"
        given: object = fields.get(key) or []
        if not isinstance(given, list):
            return fields
        return {**fields, "tools": refs, key: [*cast("list[object]", given), *webhooks]}

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
        for field in ("name", "port"):
            seen: set[object] = set()
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


def agent_headers(agent: AgentSpec) -> Iterator[tuple[str, str, HeaderSpec]]:
    """Every header sent, its path and env var: MCP servers', tool references', A2A peers'."""
    for i, server in enumerate(agent.mcp_servers):
        for j, header in enumerate(server.headers):
            yield f"mcpServers[{i}].headers[{j}]", header_env_name(server.name, header.name), header
    for i, ref in enumerate(agent.tools):
        if ref.enabled:
            for j, header in enumerate(ref.headers):
                env = tool_header_env_name(ref.name, header.name)
                yield f"tools[{i}].headers[{j}]", env, header
    yield from peer_headers(agent)


def shorthand_model(value: str, models: Mapping[str, object] | None) -> str | None:
    """The declared model ark's ``model: <value>`` means: the one named ``value``, else the
    one model whose ``modelName`` is ``value``; None when no (or more than one) declared
    model serves it. ``models`` None: the caller has no list, so ``value`` is a name."""
    if models is None or value in models:
        return value
    serving = [name for name, m in models.items() if getattr(m, "model_name", None) == value]
    return serving[0] if len(serving) == 1 else None


def passthrough_model(agent: AgentSpec, models: Mapping[str, object]) -> str | None:
    """ark's ``model:`` when no declared model serves it: passed on as ``AGENT_MODEL`` only."""
    if agent.model is None or shorthand_model(agent.model, models) is not None:
        return None
    return agent.model


def model_refs(agent: AgentSpec, models: Mapping[str, object] | None = None) -> list[ModelRef]:
    """The agent's model references, ark's ``model: <name>`` shorthand expanded against the
    declared ``models`` (by name); a model no declared one serves is no reference."""
    if agent.model is not None:
        name = shorthand_model(agent.model, models)
        return [ModelRef(name=name)] if name is not None else []
    return list(agent.models)
