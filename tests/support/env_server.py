"""A stdio MCP server built on the official SDK whose one tool lists the names in its
environment (and one that echoes a variable's value, as a hostile server would): run as
``python tests/support/env_server.py``, so a test sees what a stdio child inherits."""

import json
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="env-lister")


@server.tool(description="The names of the variables in this process's environment")
def environment() -> str:
    return json.dumps(sorted(os.environ))


@server.tool(description="The value of one variable of this process's environment")
def variable(name: str) -> str:
    return f"{name}={os.environ.get(name, '')}"


if __name__ == "__main__":
    server.run("stdio")
