"""The base of every spec and the field types and validators the specs share: names, paths,
URLs, quantities, durations, labels, headers and where a secret value comes from."""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from langop_infra.config._docstrings import describe_fields
from langop_infra.config._invalid import invalid as invalid
from langop_infra.config._names import RESERVED_MOUNTS
from langop_infra.config._urls import concrete_http_url, http_url

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


def parse_duration(value: object) -> float:
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


def not_bool(value: object) -> Any:
    """YAML's ``true`` is an int to pydantic (``port: true`` would be port 1): refuse it."""
    if isinstance(value, bool):
        raise invalid("int_not_bool", "expected an integer, got true/false; write a number")
    return value


def number_quantity(value: object) -> Any:
    """A number as Kubernetes reads it for a quantity (``cpu: 1``, ``cpu: 0.5``): its decimal
    text, ``"1"``, ``"0.5"``; true/false and other types are left to fail as they are."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid("quantity", f"{value!r} is not a Kubernetes quantity such as '250m'")
        return format(Decimal(repr(value)).normalize(), "f")
    return str(value)


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


def secret_text(value: object) -> Any:
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


def is_secret_value(value: object) -> bool:
    """A literal secret: a string, or an opaque object such as a ``pulumi.Output``."""
    return isinstance(value, str) or (hasattr(value, "apply") and hasattr(value, "future"))


DnsLabel = Annotated[str, AfterValidator(dns_label)]
HttpPath = Annotated[str, AfterValidator(http_path)]
HttpUrl = Annotated[str, AfterValidator(http_url)]
ConcreteHttpUrl = Annotated[str, AfterValidator(http_url), AfterValidator(concrete_http_url)]


def issuer_allowed(url: str) -> bool:
    """Whether an OAuth issuer URL may receive a client secret: https, or http on loopback."""
    parts = urlsplit(url)
    if parts.scheme == "https":
        return True
    host = (parts.hostname or "").lower()
    try:
        return parts.scheme == "http" and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return parts.scheme == "http" and host == "localhost"


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
Quantity = Annotated[
    str,
    AfterValidator(quantity),
    BeforeValidator(number_quantity, json_schema_input_type=str | int | float),
]
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
        # Schemas are built on first use, not as each class is defined: by then every field
        # has its description (a model's schema holds them).
        defer_build=True,
    )

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: object) -> None:
        """A docstring under a field is its description (the schemas and Args show it), as
        with pydantic's ``use_attribute_docstrings``, at a fraction of its import cost."""
        super().__pydantic_init_subclass__(**kwargs)
        describe_fields(cls, cls.__pydantic_fields__)


def overlay(base: SpecT, override: SpecT | None) -> SpecT:
    """``base`` with the fields ``override`` sets explicitly, nested models merged field by
    field: ``resources: {limits: {cpu: "1"}}`` keeps the default memory limit."""
    if override is None:
        return base
    update: dict[str, object] = {}
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
    """The Secret's name and key."""


def secret_env_value(value: object) -> Any:
    if isinstance(value, SecretSource) or is_secret_value(value):
        return value
    if isinstance(value, Mapping):
        return SecretSource.model_validate(value)
    raise invalid(
        "secret_env_value",
        "a secret env value is a string, a pulumi secret, or {secretKeyRef: {name, key}}",
    )


SecretEnvValue = Annotated[Any, BeforeValidator(secret_env_value)]


class HeaderSpec(Spec):
    """An HTTP header: a literal ``value``, an existing Secret's key, or a Pulumi secret."""

    name: HeaderName = Field(description="HTTP header name.")
    value: Annotated[str, AfterValidator(header_value)] | None = None
    """The header's literal value (not for credentials: use valueFrom or secret)."""
    value_from: SecretSource | None = None
    """{secretKeyRef: {name, key}}: the value of an existing Secret's key."""
    secret: Any = Field(default=None, description="A pulumi secret (Python) or a secret string.")

    @field_validator("secret")
    @classmethod
    def _secret(cls, value: object) -> object:
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

    def _source(self, name: str) -> object:
        return {"value": self.value, "valueFrom": self.value_from, "secret": self.secret}[name]
