"""An official-SDK stdio server whose ``crash`` tool kills the process mid-call."""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("crashy", version="1.0.0", log_level="WARNING")


@server.tool()
def pid() -> str:
    """This server's process id, and the GREETING from its environment."""
    return f"{os.getpid()} {os.environ.get('GREETING', '')}"


@server.tool()
def crash() -> str:
    """Exits at once, without answering."""
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
