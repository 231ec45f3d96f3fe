"""Parts for the built-in agent runtime's tests: tool kit tools served on the official MCP
SDK (tests/support/loopback.serve), and a scripted model's turns.

The model is tests/fake_openai.py with a ``script`` (a fake: no real model runs here); the
script reads the tool results the agent sent back, so a right answer needs working tools."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from pydantic import Field
from starlette.types import ASGIApp, Receive, Scope, Send

from langop_infra.toolkit import MCPToolBase, MCPToolInput, MCPToolOutput, MCPToolRegistry
from langop_infra.toolkit._server import build_app

POPULATIONS = {"Lyon": 522_250, "Paris": 2_102_650}


class PopulationInput(MCPToolInput):
    city: str = Field(description="City name, e.g. Lyon")


class PopulationTool(MCPToolBase):
    name = "population"  # pyright: ignore[reportAssignmentType]
    description = "The population of a French city"  # pyright: ignore[reportAssignmentType]
    input_model = PopulationInput  # pyright: ignore[reportAssignmentType]

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        city = kwargs["city"]
        if city not in POPULATIONS:
            return {"success": False, "error": f"unknown city {city!r}"}
        return {"success": True, "city": city, "population": POPULATIONS[city]}


class MultiplyInput(MCPToolInput):
    a: float = Field(description="First factor")
    b: float = Field(description="Second factor")


class MultiplyOutput(MCPToolOutput):
    success: bool
    product: float | None = None


class MultiplyTool(MCPToolBase):
    name = "multiply"  # pyright: ignore[reportAssignmentType]
    description = "Multiply two numbers"  # pyright: ignore[reportAssignmentType]
    input_model = MultiplyInput  # pyright: ignore[reportAssignmentType]
    output_model = MultiplyOutput  # pyright: ignore[reportAssignmentType]

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        return {"success": True, "product": kwargs["a"] * kwargs["b"]}


class HangTool(MCPToolBase):
    name = "hang"  # pyright: ignore[reportAssignmentType]
    description = "Never answers"  # pyright: ignore[reportAssignmentType]
    input_model = MCPToolInput  # pyright: ignore[reportAssignmentType]

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"success": True}


def tool_app(*tools: MCPToolBase) -> ASGIApp:
    registry = MCPToolRegistry(builtins=False)
    for tool in tools:
        registry.register(tool)
    return build_app(registry)


class Recorder:
    """Wraps a real ASGI app; keeps every HTTP request's headers and its JSON-RPC method."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[dict[str, str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.requests.append({k.decode(): v.decode() for k, v in scope["headers"]})
        await self.app(scope, receive, send)


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """An assistant message asking for one tool call."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{uuid.uuid4().hex[:8]}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def named(body: dict[str, Any], suffix: str) -> str:
    """The API name of the offered tool ending in ``suffix``."""
    return next(n for n in tool_names(body) if n.endswith(suffix))


def tool_results(body: dict[str, Any]) -> list[Any]:
    """The tool results in the request's messages, parsed when JSON."""
    out: list[Any] = []
    for message in body["messages"]:
        if message["role"] == "tool":
            try:
                out.append(json.loads(message["content"]))
            except json.JSONDecodeError:
                out.append(message["content"])
    return out


def twice_the_population(body: dict[str, Any]) -> dict[str, Any]:
    """The scripted model for "What is twice the population of Lyon?": population tool,
    then multiply, then the answer taken from the multiply tool's result."""
    results = tool_results(body)
    if not results:
        return call(named(body, "population"), city="Lyon")
    if len(results) == 1:
        return call(named(body, "multiply"), a=results[0]["population"], b=2)
    product = results[1]["product"]
    return {"role": "assistant", "content": f"Twice the population of Lyon is {product:.0f}."}
