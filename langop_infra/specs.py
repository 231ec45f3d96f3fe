"""Validated specs of tools, agents and clusters: pydantic models, no Pulumi.

Every model accepts the Python names (``deployment_mode``) and the CRD's camelCase names
(``deploymentMode``) and rejects unknown fields. ``parse_tool``, ``parse_agent`` and
``parse_cluster`` validate a whole document and raise one :class:`SpecError` listing every
problem with its path, e.g. ``agents[1].tools[0].name``.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainValidator,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from langop_infra.names import RESERVED_MOUNTS


def invalid(kind: str, message: str) -> PydanticCustomError:
    """A validation error with a type slug (``langop_<kind>``) and a message that says what to
    do; pydantic reports it as given, without a "Value error" preamble."""
    return PydanticCustomError(f"langop_{kind}", message)


if TYPE_CHECKING:
    from langop_infra.model_specs import (
        ModelGatewayDefaults,
        ModelRef,
        ModelSpec,
        ObservabilityDefaults,
        PersonaSpec,
    )

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
HTTP_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
LABEL_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
DURATION = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|h)?\s*$")
SECRET_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
RESERVED_LABEL_PREFIXES = ("langop.io", "access.langop.io")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
# AGENT_INSTRUCTIONS is one env var and one ConfigMap entry: both have size limits.
MAX_INSTRUCTIONS_BYTES = 64 * 1024


def dns_label(value: str) -> str:
    if len(value) > 63 or not DNS_LABEL.fullmatch(value):
        raise invalid(
            "dns_label",
            f"{value!r} is not a valid name: use at most 63 lower-case letters, digits and '-', "
            "starting and ending with a letter or digit (a DNS-1123 label)",
        )
    return value


def dns1035_label(value: str) -> str:
    """A tool's name is its Service's name, which Kubernetes wants to start with a letter."""
    dns_label(value)
    if not value[0].isalpha():
        raise invalid(
            "dns1035_label",
            f"{value!r} is not a valid tool name: start it with a letter, as a Service name "
            "must (a DNS-1035 label)",
        )
    return value


def dns_subdomain(value: str) -> str:
    if len(value) > 253 or not DNS_SUBDOMAIN.fullmatch(value):
        raise invalid(
            "dns_subdomain",
            f"{value!r} is not a valid name: use lower-case letters, digits, '-' and '.' "
            "(a DNS-1123 subdomain, at most 253 characters)",
        )
    return value


def http_path(value: str) -> str:
    if not value.startswith("/") or any(c.isspace() for c in value):
        raise invalid(
            "http_path", f"{value!r} is not an HTTP path: start it with '/' and use no spaces"
        )
    return value


ENCODED_DOT_OR_SLASH = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)
PERCENT_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def canonical_mcp_path(value: str) -> str:
    """The tool's MCP path, RFC 3986-normalised (unreserved escapes decoded, others upper-case).

    The path is appended to the API server's proxy prefix, so anything that could climb out
    of it (``..``, ``%2e``, ``//``, a query or fragment) is refused, not cleaned up.
    """
    http_path(value)
    fix = "write it as a plain path such as /mcp"
    if "?" in value or "#" in value:
        raise invalid("canonical_mcp_path", f"must not carry a query string or fragment; {fix}")
    if "//" in value or "\\" in value:
        raise invalid("canonical_mcp_path", f"must not contain '//' or '\\'; {fix}")
    if ENCODED_DOT_OR_SLASH.search(value):
        raise invalid(
            "canonical_mcp_path",
            f"must not contain encoded '.', '/' or '\\' (%2e, %2f, %5c); {fix}",
        )
    if any(segment in (".", "..") for segment in value.split("/")):
        raise invalid("canonical_mcp_path", f"must not contain '.' or '..' segments; {fix}")

    def escape(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in UNRESERVED else match.group(0).upper()

    return PERCENT_ESCAPE.sub(escape, value)


def http_url(value: str) -> str:
    if not re.fullmatch(r"https?://[^\s/?#]+[^\s]*", value):
        raise invalid(
            "http_url", f"{value!r} is not an http(s) URL: write it as https://host[:port]/path"
        )
    authority = value.split("://", 1)[1].split("/", 1)[0]
    if "@" in authority:
        # The URL lands in a ConfigMap and env literals; credentials there would leak.
        raise invalid(
            "http_url",
            "the URL carries a user or password; remove them and send credentials in a "
            "header from a Secret",
        )
    return value


def parse_duration(value: Any) -> float:
    """``"30s"``, ``"1m"``, ``"500ms"``, ``"1h"`` or a number of seconds, as seconds."""
    if isinstance(value, bool):
        raise invalid("parse_duration", "expected a duration such as '30s' or '1m'")
    try:
        if isinstance(value, (int, float)):
            return float(value)
        if isinstance(value, str) and (m := DURATION.fullmatch(value)):
            scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2) or "s"]
            return float(m.group(1)) * scale
    except OverflowError:
        raise invalid(
            "parse_duration", "far too long a duration: give at most a few minutes"
        ) from None
    raise invalid(
        "parse_duration",
        f"{value!r} is not a duration: write it as '30s', '1m', '500ms' or seconds",
    )


def duration_between(low: float, high: float) -> AfterValidator:
    def check(seconds: float) -> float:
        if not low <= seconds <= high:
            raise invalid(
                "duration_between", f"must be between {low:g}s and {high:g}s, got {seconds:g}s"
            )
        return seconds

    return AfterValidator(check)


def non_empty_image(value: str) -> str:
    if not value.strip() or any(c.isspace() for c in value):
        raise invalid(
            "non_empty_image", "set a container image reference such as 'ghcr.io/org/tool:1.2.3'"
        )
    return value


def env_name(name: str) -> str:
    if not ENV_NAME.fullmatch(name):
        raise invalid(
            "env_name",
            f"{name!r} is not a valid environment variable name: use letters, digits, '_', "
            "'-' and '.', not starting with a digit",
        )
    return name


def label_key(key: str) -> str:
    if len(key) > 316 or not LABEL_NAME.fullmatch(key):
        raise invalid("label_key", f"{key!r} is not a valid label or annotation key")
    if key.split("/", 1)[0] in RESERVED_LABEL_PREFIXES and "/" in key:
        # access.langop.io/<tool> opens a tool's ingress policy: only references may set it.
        raise invalid(
            "label_key",
            f"{key!r} is reserved for labels langop-infra sets (langop.io/, access.langop.io/); "
            "reference the tool instead, or pick another key",
        )
    return key


def label_value(value: str) -> str:
    if len(value) > 63 or not LABEL_VALUE.fullmatch(value):
        raise invalid(
            "label_value",
            f"{value!r} is not a valid label value: at most 63 letters, digits, '-', '_' and "
            "'.', starting and ending with a letter or digit",
        )
    return value


def header_value(value: str) -> str:
    if any((ord(c) < 32 and c != "\t") or ord(c) == 127 for c in value):
        raise invalid(
            "header_value",
            "a header value cannot hold a line break or other control character (CR, LF)",
        )
    return value


def not_reserved_mount(value: str) -> str:
    """A mount path, ``//`` collapsed and a trailing ``/`` dropped, so that no spelling of a
    path every pod mounts (or of ``/``) slips past the check; ``.`` and ``..`` are refused."""
    if any(segment in (".", "..") for segment in value.split("/")):
        raise invalid(
            "mount_path",
            f"{value!r} has '.' or '..' segments; write the path plainly, e.g. /data",
        )
    path = "/" + "/".join(segment for segment in value.split("/") if segment)
    if path == "/":
        raise invalid("mount_path", "cannot mount over the container's root '/'; pick a folder")
    if path in RESERVED_MOUNTS:
        raise invalid(
            "not_reserved_mount",
            f"{value!r} is already mounted in every pod ({', '.join(RESERVED_MOUNTS)}); "
            "pick another path",
        )
    return path


# Kubernetes refuses an object whose annotations, keys and values counted in bytes, exceed
# 256 KiB; langop-infra adds its own (config checksum, Secret versions) to pod templates.
ANNOTATIONS_LIMIT = 256 * 1024
OWN_ANNOTATIONS_RESERVE = 1024


def annotations_size(value: dict[str, str]) -> dict[str, str]:
    size = sum(len(k.encode()) + len(v.encode()) for k, v in value.items())
    room = ANNOTATIONS_LIMIT - OWN_ANNOTATIONS_RESERVE
    if size > room:
        raise invalid(
            "annotations_size",
            f"annotations take {size} bytes (keys and values); Kubernetes allows "
            f"{ANNOTATIONS_LIMIT} per object and langop-infra needs up to "
            f"{OWN_ANNOTATIONS_RESERVE} of them, so keep yours under {room}",
        )
    return value


def not_bool(value: Any) -> Any:
    """YAML's ``true`` is an int to pydantic (``port: true`` would be port 1): refuse it."""
    if isinstance(value, bool):
        raise invalid("int_not_bool", "expected an integer, got true/false; write a number")
    return value


def quantity(value: str) -> str:
    if not QUANTITY.fullmatch(str(value)):
        raise invalid(
            "quantity", f"{value!r} is not a Kubernetes quantity such as '250m' or '256Mi'"
        )
    return value


def cidr(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        raise invalid("cidr", f"{value!r} is not a CIDR such as '10.0.0.0/8'") from None
    if "/" not in value:
        raise invalid(
            "cidr", f"{value!r} is an address, not a CIDR: write it as {value}/32 or /128"
        )
    return value


def header_name(value: str) -> str:
    if not HTTP_TOKEN.fullmatch(value):
        raise invalid(
            "header_name", f"{value!r} is not a valid HTTP header name (an RFC 9110 token)"
        )
    return value


def secret_key(value: str) -> str:
    if not SECRET_KEY.fullmatch(value) or len(value) > 253:
        raise invalid(
            "secret_key", f"{value!r} is not a valid Secret key: use letters, digits, '-', '_', '.'"
        )
    return value


def secret_text(value: Any) -> Any:
    if not is_secret_value(value):
        raise invalid(
            "secret_text",
            f"a secret value must be a string, got {type(value).__name__}; quote it in YAML",
        )
    return value


def instructions_text(value: str) -> str:
    size = len(value.encode())
    if size > MAX_INSTRUCTIONS_BYTES:
        raise invalid(
            "instructions_text",
            f"instructions are {size} bytes, over the limit of {MAX_INSTRUCTIONS_BYTES} (64 KiB) "
            "that an env var and the ConfigMap can carry; shorten them",
        )
    return value


def is_secret_value(value: Any) -> bool:
    """A literal secret: a string, or an opaque object such as a ``pulumi.Output``."""
    return isinstance(value, str) or (hasattr(value, "apply") and hasattr(value, "future"))


DnsLabel = Annotated[str, AfterValidator(dns_label)]
HttpPath = Annotated[str, AfterValidator(http_path)]
HttpUrl = Annotated[str, AfterValidator(http_url)]
Image = Annotated[str, AfterValidator(non_empty_image)]
Seconds = Annotated[float, BeforeValidator(parse_duration)]
EnvName = Annotated[str, AfterValidator(env_name)]
EnvMap = dict[EnvName, str]
LabelMap = dict[
    Annotated[str, AfterValidator(label_key)], Annotated[str, AfterValidator(label_value)]
]
AnnotationMap = Annotated[
    dict[Annotated[str, AfterValidator(label_key)], str], AfterValidator(annotations_size)
]
Int = Annotated[int, BeforeValidator(not_bool)]
Port = Annotated[int, Field(ge=1, le=65535), BeforeValidator(not_bool)]
Quantity = Annotated[str, AfterValidator(quantity)]
Cidr = Annotated[str, AfterValidator(cidr)]
HeaderName = Annotated[str, AfterValidator(header_name)]
LabelValue = Annotated[str, Field(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")]
EgressMode = Literal["open", "restricted"]
# auto: the API server's service proxy for *.svc.cluster.local endpoints when a kubeconfig
# (or in-cluster config) loads, else direct.
SyncAccess = Literal["auto", "direct", "apiserver-proxy"]


SpecT = TypeVar("SpecT", bound="Spec")


class Spec(BaseModel):
    """Base of every spec: camelCase and snake_case names, unknown fields rejected."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        arbitrary_types_allowed=True,
    )


def overlay(base: SpecT, override: SpecT | None) -> SpecT:
    """``base`` with the fields ``override`` sets explicitly, nested models merged field by
    field: ``resources: {limits: {cpu: "1"}}`` keeps the default memory limit."""
    if override is None:
        return base
    update = {}
    for name in override.model_fields_set:
        value, current = getattr(override, name), getattr(base, name)
        if isinstance(value, Spec) and isinstance(current, Spec):
            value = overlay(current, value)
        update[name] = value
    return base.model_copy(update=update)


class SecretKeyRef(Spec):
    """A key of an existing Kubernetes Secret in the workload's namespace."""

    name: Annotated[str, AfterValidator(dns_subdomain)] = Field(description="Secret name.")
    key: Annotated[str, AfterValidator(secret_key)] = Field(description="Key within the Secret.")


class SecretSource(Spec):
    """Where a secret value comes from: an existing Secret's key."""

    secret_key_ref: SecretKeyRef


def secret_env_value(value: Any) -> Any:
    if isinstance(value, SecretSource) or is_secret_value(value):
        return value
    if isinstance(value, Mapping):
        return SecretSource.model_validate(value)
    raise invalid(
        "secret_env_value",
        "a secret env value is a string, a pulumi secret, or {secretKeyRef: {name, key}}",
    )


SecretEnvValue = Annotated[Any, BeforeValidator(secret_env_value)]


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


class LabelSelector(Spec):
    match_labels: LabelMap = {}


class IPBlock(Spec):
    cidr: Cidr
    except_: list[Cidr] = Field(default=[], alias="except")


class PeerSpec(Spec):
    """An extra ingress source: pods and/or namespaces by label, or an IP block."""

    pod_selector: LabelSelector | None = None
    namespace_selector: LabelSelector | None = None
    ip_block: IPBlock | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> PeerSpec:
        selectors = self.pod_selector is not None or self.namespace_selector is not None
        if selectors == (self.ip_block is not None):
            raise invalid("one_kind", "give podSelector and/or namespaceSelector, or ipBlock alone")
        return self


class PortSpec(Spec):
    port: Port
    protocol: Literal["TCP", "UDP", "SCTP"] = "TCP"


class NetworkPeer(Spec):
    """A peer given as ``{cidr, except}`` or as ``{namespace, podLabels}`` (not both)."""

    cidr: Cidr | None = None
    except_: list[Cidr] = Field(default=[], alias="except")
    namespace: DnsLabel | None = Field(None, description="Pods of this namespace.")
    pod_labels: LabelMap | None = Field(None, description="Pods with these labels.")
    host: str | None = Field(
        None, description="The host name this CIDR serves, for the render's egress check."
    )

    @model_validator(mode="after")
    def _one_form(self) -> Self:
        in_cluster = self.namespace is not None or self.pod_labels is not None
        if in_cluster == (self.cidr is not None):
            raise invalid(
                "peer_form",
                "give cidr (with optional except), or namespace and/or podLabels, not both",
            )
        if in_cluster and (self.except_ or self.host):
            raise invalid("peer_form", "except and host apply to a cidr peer only")
        return self


class EgressRule(NetworkPeer):
    """A destination a workload with ``egress: restricted`` may reach: a CIDR, or pods by
    namespace and labels; on ``ports`` (all ports when empty)."""

    ports: list[PortSpec] = []


class HeaderSpec(Spec):
    """An HTTP header: a literal ``value``, an existing Secret's key, or a Pulumi secret."""

    name: HeaderName = Field(description="HTTP header name.")
    value: Annotated[str, AfterValidator(header_value)] | None = None
    value_from: SecretSource | None = None
    secret: Any = Field(None, description="A pulumi secret (Python) or a secret string.")

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: Any) -> Any:
        if value is not None and not is_secret_value(value):
            raise invalid("secret", "secret must be a string or a pulumi secret Output")
        if isinstance(value, str):
            header_value(value)
        return value

    @model_validator(mode="after")
    def _one_source(self) -> HeaderSpec:
        sources = [s for s in ("value", "valueFrom", "secret") if self._source(s) is not None]
        if len(sources) != 1:
            found = " and ".join(sources) or "none"
            raise invalid(
                "one_source",
                f"header {self.name!r} needs exactly one of value, valueFrom, secret "
                f"(found {found})",
            )
        return self

    def _source(self, name: str) -> Any:
        return {"value": self.value, "valueFrom": self.value_from, "secret": self.secret}[name]


class SyncAuth(Spec):
    """OAuth 2.1 client credentials for schema sync (the MCP authorization spec): the client
    discovers the authorization server from the tool's 401 and asks for a token itself."""

    type: Literal["oauth2"] = "oauth2"
    client_id: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="The client ID registered with the authorization server."
    )
    client_secret: SecretSource = Field(
        description="{secretKeyRef: {name, key}} naming a secret under langop-infra:secrets."
    )
    scopes: list[Annotated[str, Field(pattern=r"^[\x21\x23-\x5b\x5d-\x7e]+$")]] = Field(
        [], description="Scopes to ask for; unset: those the tool's 401 names."
    )


class SchemaSyncSpec(Spec):
    """How ``pulumi up`` reads the tool's schema with MCP ``tools/list``."""

    enabled: bool = True
    access: SyncAccess | None = Field(
        None, description="auto, direct or apiserver-proxy; unset: the cluster default (auto)."
    )
    sync_url: HttpUrl | None = Field(None, description="Call this URL instead of the endpoint.")
    required: bool = Field(False, description="Fail the deployment when the sync fails.")
    timeout: Annotated[Seconds, duration_between(0.1, 600)] = 10.0
    headers: list[HeaderSpec] = []
    auth: SyncAuth | None = Field(
        None, description="OAuth 2.1 client credentials for a tool that demands a token."
    )
    protocol: Literal[
        "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"
    ] = Field("auto", description="MCP revision: auto negotiates, newest first.")
    max_bytes: Quantity | None = Field(
        None, description="Cap on the whole listing's size over all pages (default 32Mi)."
    )
    max_tools: Int = Field(10_000, ge=1, le=1_000_000, description="Cap on the tools listed.")
    max_pages: Int = Field(100, ge=1, le=100_000, description="Cap on tools/list pages.")


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


class ToolSpec(WorkloadSpec):
    """A LanguageTool: an MCP server run as a Deployment + Service, or as an agent sidecar."""

    name: Annotated[str, AfterValidator(dns1035_label)] = Field(
        description="Name of the tool's Deployment and Service."
    )
    type: Literal["mcp"] = "mcp"
    deployment_mode: Literal["service", "sidecar"] = "service"
    port: Port = 8080
    mcp_path: Annotated[str, AfterValidator(canonical_mcp_path)] = "/mcp"
    health_path: HttpPath = "/health"
    allow_from: list[PeerSpec] = Field([], description="Extra ingress sources (service mode).")
    schema_sync: SchemaSyncSpec = SchemaSyncSpec()
    persistence: Persistence | None = None

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


# Pod-level fields a sidecar tool cannot carry, as a stack file names them.
SIDECAR_POD_FIELDS = {
    "image_pull_secrets": "imagePullSecrets",
    "node_selector": "nodeSelector",
    "tolerations": "tolerations",
    "affinity": "affinity",
    "topology_spread_constraints": "topologySpreadConstraints",
    "priority_class_name": "priorityClassName",
    "pod_labels": "podLabels",
    "pod_annotations": "podAnnotations",
    "termination_grace_period_seconds": "terminationGracePeriodSeconds",
    "disruption_budget": "disruptionBudget",
    "autoscaling": "autoscaling",
    "replicas": "replicas",
    "egress": "egress",
    "egress_to": "egressTo",
}


class ToolRef(Spec):
    """A reference from an agent to a LanguageTool."""

    name: DnsLabel
    namespace: DnsLabel | None = None
    enabled: bool = True
    required: bool = Field(False, description="The agent waits for the tool to be ready.")


class McpServerSpec(Spec):
    """An external MCP server (ark style), reached at ``url`` with optional headers."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$")]
    url: HttpUrl
    headers: list[HeaderSpec] = []
    timeout: Annotated[Seconds, duration_between(0.1, 600)] | None = None


class WebhookAuth(Spec):
    type: Literal["none", "bearer", "basic", "apiKey", "oauth2"] = "none"
    secret_ref: SecretKeyRef | None = None
    header_name: HeaderName = "Authorization"

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
    requests_per_minute: Int = Field(ge=1, le=10000)
    burst: Int = Field(ge=1, le=1000)


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
    description: str = Field("", max_length=1024)
    url: HttpUrl
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    input_schema: Annotated[dict[str, Any], BeforeValidator(json_schema_input)] = {"type": "object"}
    timeout: Annotated[Seconds, duration_between(1, 600)] = 30.0
    authentication: WebhookAuth = WebhookAuth()
    rate_limit: RateLimit | None = None
    enabled: bool = True


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
    storage_class_name: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    access_modes: Annotated[
        list[Literal["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod", "ReadOnlyMany"]],
        Field(min_length=1),
    ] = ["ReadWriteOnce"]
    mount_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] | None = Field(
        None, description="Unset: the agent's workspacePath."
    )
    initial_files: dict[Annotated[str, AfterValidator(config_map_key)], str] = {}
    seed_config_map: Annotated[str, AfterValidator(dns_subdomain)] | None = None
    seed_image: Image = "docker.io/library/busybox:1.36.1"

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


def persona_ref(value: Any) -> Any:
    """A persona's name, or the persona itself; each form checked on its own, so a problem is
    reported at its field rather than once per form the value could have taken."""
    from langop_infra.model_specs import PersonaSpec

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
    mcp_servers: list[McpServerSpec] = []
    webhook_tools: list[WebhookToolSpec] = []
    workspace_path: Annotated[HttpPath, AfterValidator(not_reserved_mount)] = "/workspace"
    workspace: Workspace | None = Field(None, description="Unset: an emptyDir workspace.")
    ports: list[AgentPort] = []
    allow_from: list[PeerSpec] = Field(
        [], description="Who may reach the agent's ports (nobody when empty)."
    )
    model: DnsLabel | None = Field(None, description="ark's shorthand: one model, role primary.")
    models: list[ModelRef] = Field([], description="LanguageModels of the namespace, in order.")
    instructions: Annotated[str, AfterValidator(instructions_text)] | None = Field(
        None,
        validation_alias=AliasChoices("instructions", "systemPrompt"),
        description="System prompt (alias systemPrompt): AGENT_INSTRUCTIONS.",
    )
    persona: Annotated[DnsLabel | PersonaSpec | None, BeforeValidator(persona_ref)] = Field(
        None, description="A persona's name under personas, or the persona itself."
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


class Defaults(Spec):
    """Cluster-wide defaults applied to every tool and agent that does not set its own."""

    image_pull_policy: Literal["Always", "IfNotPresent", "Never"] | None = None
    resources: Resources = Resources()
    security: Security = Security()
    egress: EgressMode = "open"
    default_deny: bool = False
    schema_sync_access: SyncAccess = "auto"
    schema_sync_from: list[NetworkPeer] = Field(
        [],
        description="Where schema sync reaches tools from: {cidr, except} for the control "
        "plane under apiserver-proxy, or {namespace, podLabels} for an in-cluster runner.",
    )
    sidecar_style: Literal["native", "container"] = Field(
        "native",
        description="native: init containers with restartPolicy Always (Kubernetes >= 1.29); "
        "container: plain containers, for older clusters.",
    )
    endpoint_style: Literal["base", "path"] = Field(
        "base", description="base: endpoints without the MCP path; path: with it."
    )
    strict_egress: bool = Field(
        False, description="Fail when restricted egress does not admit an agent's servers."
    )
    model_gateway: ModelGatewayDefaults | None = Field(None, description="Unset: built-ins.")
    observability: ObservabilityDefaults | None = None

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
    namespace: DnsLabel
    port: Port
    mcp_path: Annotated[str, AfterValidator(canonical_mcp_path)] = "/mcp"
    deployment_mode: Literal["service"] = "service"


class ClusterSpec(Spec):
    """One namespace's tools, agents, defaults and secrets."""

    namespace: DnsLabel
    create_namespace: bool = True
    part_of: (
        Annotated[str, Field(pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")] | None
    ) = None
    defaults: Defaults = Field(default_factory=lambda: Defaults())
    tools: list[ToolSpec] = []
    agents: list[AgentSpec] = []
    models: list[ModelSpec] = []
    personas: list[PersonaSpec] = []
    secrets: dict[
        Annotated[str, AfterValidator(dns_subdomain)],
        dict[
            Annotated[str, AfterValidator(secret_key)], Annotated[Any, AfterValidator(secret_text)]
        ],
    ] = {}
    external_secrets: list[Annotated[str, AfterValidator(dns_subdomain)]] = Field(
        [], description="Secrets made outside this program that secretKeyRefs may name."
    )

    # Set by validation.parse_cluster on what it returns, so LanguageCluster does not check a
    # document the stack program checked already. A copy with changes is checked again.
    _validated: bool = PrivateAttr(False)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copied = super().model_copy(update=update, deep=deep)
        if update:
            copied._validated = False
        return copied


def rebuild_model_fields(**types: type) -> None:
    """Resolve the fields typed by :mod:`langop_infra.model_specs`, which calls this once
    loaded (it imports this module, so this module cannot import it at the top)."""
    for model in (AgentSpec, Defaults, ClusterSpec):
        model.model_rebuild(_types_namespace=types)


import langop_infra.model_specs  # noqa: E402,F401  (defines the model fields above)
