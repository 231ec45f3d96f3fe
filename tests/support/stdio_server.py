"""A stdio-only MCP server built on the official SDK, for the stdio-bridge tests: run as
``python tests/support/stdio_server.py``. It reads ``STDIO_GREETING`` from its environment, so
a test can see that the bridge passes the container's env on to the server."""

import os
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from pydantic import Field

server = MCPServer(name="stdio-only", instructions="A stdio-only server behind a bridge.")


@server.tool(description="Add two integers")
def add(a: int, b: Annotated[int, Field(description="The second addend")] = 0) -> int:
    return a + b


@server.tool(description="Greet someone with the greeting from STDIO_GREETING")
def greet(name: Annotated[str, Field(min_length=1, max_length=100)]) -> str:
    return f"{os.environ.get('STDIO_GREETING', 'Hello')}, {name}!"


@server.tool(description="Tag a text with labels")
def tag(text: str, labels: list[str]) -> dict[str, list[str]]:
    return {text: sorted(set(labels))}


if __name__ == "__main__":
    server.run("stdio")
