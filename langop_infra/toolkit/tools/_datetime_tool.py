"""AgentLab's built-in ``get_current_datetime`` (``agentlab/mcp/tools/datetime_tool.py``),
ported to this kit: only the import path changed. Errors are returned in the result."""

from __future__ import annotations

from datetime import datetime, timezone as dt_timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field

from langop_infra.toolkit._base import MCPToolBase, MCPToolInput, MCPToolOutput

__all__ = ["DateTimeInput", "DateTimeOutput", "DateTimeTool"]


class DateTimeInput(MCPToolInput):
    """Input schema for the datetime tool."""

    format: Literal["iso", "unix", "human", "date", "time"] = Field(
        default="iso",
        description="Output format: iso (2025-12-21T10:30:00-05:00), unix (seconds), "
        "human (Sunday, December 21, 2025 10:30 AM), date (2025-12-21) or time (10:30:00)",
    )
    timezone: str | None = Field(
        default=None, description="Optional IANA timezone, e.g. America/New_York (default UTC)"
    )


class DateTimeOutput(MCPToolOutput):
    """Output schema for the datetime tool."""

    success: bool = Field(description="Whether the date and time could be given")
    datetime: str | None = Field(default=None, description="The current date and time")
    format: str | None = Field(default=None, description="The format used")
    timezone: str | None = Field(default=None, description="The timezone used")
    error: str | None = Field(default=None, description="Error message if failed")


class DateTimeTool(MCPToolBase):
    """Tool returning the current date and time."""

    @property
    def name(self) -> str:
        return "get_current_datetime"

    @property
    def description(self) -> str:
        return (
            "Get the current date and time, in a format (iso, unix, human, date, time) and "
            "an optional IANA timezone. Use this tool whenever you need today's date or the time."
        )

    @property
    def input_schema(self) -> type[DateTimeInput]:
        return DateTimeInput

    @property
    def output_schema(self) -> type[DateTimeOutput]:
        return DateTimeOutput

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        """Return the current date and time."""
        inputs = DateTimeInput(**kwargs)
        name = inputs.timezone or "UTC"
        try:
            zone = ZoneInfo(name) if inputs.timezone else dt_timezone.utc
        except (ZoneInfoNotFoundError, ValueError):
            return {
                "success": False,
                "datetime": None,
                "format": inputs.format,
                "timezone": name,
                "error": f"Invalid timezone: {name!r} (use an IANA name such as Europe/Paris)",
            }
        now = datetime.now(tz=zone)
        text = {
            "iso": now.isoformat(timespec="seconds"),
            "unix": str(int(now.timestamp())),
            "human": now.strftime("%A, %B %d, %Y %I:%M %p"),
            "date": now.date().isoformat(),
            "time": now.strftime("%H:%M:%S"),
        }[inputs.format]
        return {
            "success": True,
            "datetime": text,
            "format": inputs.format,
            "timezone": name,
            "error": None,
        }
