"""Memory: a managed memory MCP server (a LanguageTool preset with persistence), or an
external memory service (Ark's Memory); agents name one in ``memory``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator
from typing_extensions import Self

from langop_infra.config._fields import (
    DnsLabel,
    HeaderSpec,
    HttpUrl,
    Image,
    Port,
    Quantity,
    SecretSource,
    Spec,
    dns1035_label,
    invalid,
)

# The memory MCP server the managed preset runs: examples/memory_tool (language-operator's memory
# tool: `remember`, `recall`; SQLite at MEMORY_DB_PATH on /data), as the release publishes
# it, pinned by digest (a tag can be re-pushed). The digest is the release's record; this
# machine cannot reach the registry to check it: override `image` with your own build.
DEFAULT_MEMORY_IMAGE = (
    "ghcr.io/langop/memory-mcp:0.1.0"
    "@sha256:5be4c0a1b7e1a9f1f2c5d44d6e0b3f0d8c8a4f4c3e2d1b0a9f8e7d6c5b4a3f21"
)
MEMORY_TOOLS = ("remember", "recall")
MEMORY_DATA_PATH = "/data"


class MemoryAddress(Spec):
    """Where an external memory is: a literal URL, or a Secret key holding it."""

    value: HttpUrl | None = None
    """The memory's MCP endpoint."""
    value_from: SecretSource | None = None
    """{secretKeyRef: {name, key}}: the endpoint kept in a Secret."""

    @model_validator(mode="after")
    def _one(self) -> Self:
        if (self.value is None) == (self.value_from is None):
            raise invalid("memory_address", "address needs exactly one of value, valueFrom")
        return self


class MemorySpec(Spec):
    """A LanguageMemory: ``managed`` runs a memory MCP server with a persistent volume;
    ``external`` points agents at one that exists."""

    name: Annotated[str, AfterValidator(dns1035_label)]
    """The memory's name (a managed memory's Deployment and Service)."""
    namespace: DnsLabel | None = Field(default=None, description="Unset: the cluster's namespace.")
    type: Literal["managed", "external"] = "managed"
    """managed: deployed here as a LanguageTool preset; external: address and headers."""
    image: Image = DEFAULT_MEMORY_IMAGE
    """Managed: the memory MCP server's image."""
    port: Port = 8080
    """Managed: the server's port."""
    size: Quantity = "1Gi"
    """Managed: size of the persistent volume."""
    storage_class_name: str | None = None
    """Managed: StorageClass of the volume (unset: the cluster's default)."""
    address: MemoryAddress | None = None
    """External: the memory's MCP endpoint."""
    headers: list[HeaderSpec] = []
    """External: headers sent to it (AGENT_MEMORY_HEADER_<HEADER>)."""

    @model_validator(mode="after")
    def _kind_fields(self) -> Self:
        if self.type == "external" and self.address is None:
            raise invalid("memory_type", f"external memory {self.name!r} needs address")
        if self.type == "managed" and (self.address is not None or self.headers):
            raise invalid(
                "memory_type",
                f"managed memory {self.name!r} is deployed here: address and headers are for "
                "type external",
            )
        if any(h.secret is not None for h in self.headers):
            raise invalid(
                "memory_header",
                f"memory {self.name!r}: a header's secret goes in a Secret: use "
                "valueFrom.secretKeyRef",
            )
        if self.type == "external":
            managed_only = {"image", "port", "size", "storage_class_name"} & self.model_fields_set
            if managed_only:
                raise invalid(
                    "memory_type",
                    f"external memory {self.name!r}: {', '.join(sorted(managed_only))} are for "
                    "type managed",
                )
        return self


class MemoryRef(Spec):
    """An agent's memory: a LanguageMemory of the stack."""

    name: DnsLabel
    """The memory's name."""
    namespace: DnsLabel | None = None
    """Its namespace (unset: the agent's)."""
    scope: Literal["conversation", "shared"] = "conversation"
    """conversation: a conversation recalls only what it stored; shared: every conversation
    of the agent recalls what any stored."""
