"""An example tool for tool authors (AgentLab's pattern on the official MCP SDK):
``get_current_datetime``, with pydantic models for its input and output, and every failure
returned as a tool *result* (``isError``) the LLM can read, never a crash.

Serves MCP (streamable HTTP, stateless, JSON responses: language-operator's plain ``tools/list``
works, sent as Go's ``client.Post`` sends it, without an ``Accept`` header) at ``POST /mcp`` and
readiness at ``GET /health``. Copy this folder, rename the tool, keep the
shape; ``test_server.py`` is the test template that goes with it.

Environment: ``PORT`` (default 8080), ``HOST`` (default 0.0.0.0).
"""

# No `from __future__ import annotations`: the SDK reads these annotations at runtime.
import os
from datetime import datetime
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__version__ = "0.1.0"


class DateTimeInput(BaseModel):
    """The tool's input: the SDK validates the arguments against this model (its JSON Schema
    is the tool's ``inputSchema``) before the tool runs."""

    format: Literal["iso", "unix", "human"] = Field(
        "iso", description="iso: 2026-01-31T09:30:00+01:00; unix: seconds; human: prose"
    )
    timezone: str = Field(
        "UTC", min_length=1, max_length=64, description="IANA time zone, e.g. Europe/Paris"
    )


class DateTimeOutput(BaseModel):
    """The tool's output: its JSON Schema is the tool's ``outputSchema``, and every answer is
    checked against it (as ``structuredContent``)."""

    datetime: str = Field(description="The current date and time in the requested format")
    timezone: str = Field(description="The time zone it is expressed in")
    utc_offset: str = Field(description="Offset from UTC, e.g. +01:00")


def current_datetime(request: DateTimeInput, now: datetime | None = None) -> DateTimeOutput:
    """The tool's logic, apart from MCP so it can be tested on its own. A bad input the
    schema cannot catch raises :class:`ToolError`, which the SDK returns as an error result."""
    try:
        zone = ZoneInfo(request.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ToolError(
            f"unknown time zone {request.timezone!r}: use an IANA name such as Europe/Paris"
        ) from None
    moment = (now or datetime.now(tz=zone)).astimezone(zone)
    text = {
        "iso": moment.isoformat(timespec="seconds"),
        "unix": str(int(moment.timestamp())),
        "human": moment.strftime("%A %d %B %Y, %H:%M"),
    }[request.format]
    offset = moment.strftime("%z")
    return DateTimeOutput(
        datetime=text, timezone=request.timezone, utc_offset=f"{offset[:3]}:{offset[3:]}"
    )


def build_server() -> MCPServer:
    """The MCP server with ``get_current_datetime`` and ``GET /health``."""
    server = MCPServer(name="datetime", version=__version__, log_level="WARNING")

    @server.tool(description="The current date and time in a time zone and format")
    def get_current_datetime(
        format: Annotated[
            Literal["iso", "unix", "human"],
            Field(description=DateTimeInput.model_fields["format"].description),
        ] = "iso",
        timezone: Annotated[
            str,
            Field(
                min_length=1,
                max_length=64,
                description=DateTimeInput.model_fields["timezone"].description,
            ),
        ] = "UTC",
    ) -> DateTimeOutput:
        # The parameters mirror DateTimeInput so the LLM sees flat arguments
        # (language-operator's contract).
        return current_datetime(DateTimeInput(format=format, timezone=timezone))

    @server.custom_route("/health", methods=["GET"])
    async def health(_request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    return server


class JsonWhenUnasked:
    """A POST without ``Accept`` is handed on with ``Accept: application/json``.

    language-operator's controller discovers tools with Go's ``client.Post``, which sends no
    ``Accept``; the SDK would answer 406. No ``Accept`` means any type is acceptable (RFC 9110).
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope.get("headers", [])
        asked = any(k.lower() == b"accept" and v.strip() for k, v in headers)
        if scope["type"] == "http" and scope["method"] == "POST" and not asked:
            kept = [(k, v) for k, v in headers if k.lower() != b"accept"]
            scope = {**scope, "headers": [*kept, (b"accept", b"application/json")]}
        await self.app(scope, receive, send)


def build_app() -> Starlette:
    """The ASGI app: MCP at ``POST /mcp`` (stateless, JSON bodies), ``GET /health``."""
    server = build_server()
    app = server.streamable_http_app(
        stateless_http=True,
        # One JSON body per request: what a client that sends no Accept, or */*, can parse.
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.add_middleware(JsonWhenUnasked)
    return app


def main() -> None:
    uvicorn.run(
        build_app(),
        host=os.environ.get("HOST", "0.0.0.0"),
        port=int(os.environ.get("PORT", "8080")),
    )


if __name__ == "__main__":
    main()
