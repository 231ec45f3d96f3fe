"""What a schema sync records in the state: its phase, the tools and their hash, and when."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from langop_infra.sync._compare import schema_hash


@dataclass(frozen=True)
class SyncOutputs:
    """What a sync records besides its inputs: the one list of schema-sync output names."""

    phase: str = "Pending"
    last_error: str = ""
    tool_schemas: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    tool_names: list[str] = field(default_factory=list[str])
    schema_hash: str = ""
    server_info: dict[str, Any] = field(default_factory=dict[str, Any])
    protocol_version: str = ""
    registered_at: str = ""
    last_synced_at: str = ""
    #: ``<agent>: <tool>`` for each name an agent's allowedTools gives that the tool lacks.
    unknown_allowed_tools: list[str] = field(default_factory=list[str])

    #: Kept from the last good sync when a sync fails.
    LISTING: ClassVar[tuple[str, ...]] = (
        "tool_schemas",
        "tool_names",
        "schema_hash",
        "server_info",
        "protocol_version",
        "registered_at",
        "last_synced_at",
        "unknown_allowed_tools",
    )
    #: What a LanguageTool re-exports from its sync.
    EXPORTED: ClassVar[tuple[str, ...]] = ("tool_schemas", "schema_hash", "tool_names", "phase")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def disabled(cls) -> SyncOutputs:
        """A tool with schema sync off."""
        return cls(phase="Disabled")

    @classmethod
    def failed(cls, message: str, previous: Mapping[str, Any]) -> SyncOutputs:
        kept = {k: previous[k] for k in cls.LISTING if previous.get(k)}
        return cls(phase="Error", last_error=message, **kept)

    @classmethod
    def registered(
        cls, listing: Any, previous: Mapping[str, Any], allowed: Any = None
    ) -> SyncOutputs:
        now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
        digest = schema_hash(listing.tools)
        # A sync that finds what is recorded changes nothing, its time included: `pulumi
        # refresh` of an unchanged tool reports no change (the real engine showed one).
        same = previous.get("phase") == "Registered" and previous.get("schema_hash") == digest
        return cls(
            unknown_allowed_tools=unknown_allowed_tools(allowed, listing.tools),
            phase="Registered",
            tool_schemas=list(listing.tools),
            tool_names=[t.get("name") for t in listing.tools],
            schema_hash=digest,
            server_info=dict(listing.server_info or {}),
            protocol_version=listing.protocol_version or "",
            registered_at=previous.get("registered_at") or now,
            last_synced_at=(previous.get("last_synced_at") if same else None) or now,
        )

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def unknown_allowed_tools(allowed: Any, tools: list[dict[str, Any]]) -> list[str]:
    """``<agent>: <name>`` for each name in an agent's allowedTools (``{agent: [names]}``)
    that the listed ``tools`` do not have: drift between what agents may call and what the
    tool serves."""
    names = {t.get("name") for t in tools}
    given: Mapping[str, Iterable[object]] = allowed or {}
    return [
        f"{agent}: {name}"
        for agent, wanted in sorted(given.items())
        for name in wanted
        if name not in names
    ]
