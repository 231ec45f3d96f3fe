"""What a LanguageTool's schema sync is given besides its endpoint: its protocol limits,
and the warning for allowedTools the tool does not serve."""

from collections.abc import Sequence

import pulumi

from langop_infra.config.checks._admission import parse_quantity
from langop_infra.config.tool import ToolSpec


def warn_unknown_allowed(tool: str, found: Sequence[str] | None) -> None:
    """Report allowedTools names the synced tool does not serve: schema drift."""
    if found:
        pulumi.log.warn(
            f"tool {tool!r} drifted from its agents' allowedTools: it serves no "
            f"{', '.join(map(str, found))}; fix allowedTools or the tool"
        )


def sync_limits(tool: ToolSpec) -> dict[str, object]:
    """The MCP client's protocol choice and caps for this tool's sync."""
    sync = tool.schema_sync
    limits: dict[str, object] = {
        "protocol": sync.protocol,
        "max_tools": sync.max_tools,
        "max_pages": sync.max_pages,
    }
    if sync.max_bytes is not None:
        limits["max_total_bytes"] = int(parse_quantity(sync.max_bytes))
    if sync.max_response_bytes is not None:
        limits["max_response_bytes"] = int(parse_quantity(sync.max_response_bytes))
    return limits
