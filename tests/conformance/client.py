"""The client the MCP conformance suite runs for each client scenario: our ``Session``.

    conformance client --command "python tests/conformance/client.py" --scenario auth/...

The suite appends the server URL, names the scenario in ``MCP_CONFORMANCE_SCENARIO`` and
passes credentials in ``MCP_CONFORMANCE_CONTEXT``. One behaviour serves every scenario:
initialize, list the tools, call each. OAuth answers any 401 or 403; authorization-code
scenarios use the suite's headless redirect (``FollowRedirect``).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from langop_infra.mcp import ClientOptions, MCPError, Session
from langop_infra.mcp.oauth import FollowRedirect, OAuth2Auth

# The suite's client ID metadata document URL (auth/basic-cimd); it need not resolve.
CIMD_URL = "https://conformance-test.local/client-metadata.json"
_SAMPLES = {"number": 1, "integer": 1, "string": "test", "boolean": True}


def sample_arguments(tool: dict[str, Any]) -> dict[str, Any]:
    """A value for each required argument, by its JSON Schema type."""
    schema = tool.get("inputSchema") or {}
    properties = schema.get("properties") or {}
    return {
        name: _SAMPLES.get((properties.get(name) or {}).get("type"), "test")
        for name in schema.get("required") or []
    }


async def run(url: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = OAuth2Auth(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        private_key=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm") or "ES256",
        redirect=FollowRedirect(),
        client_metadata_url=CIMD_URL,
        client_name="langop-infra conformance client",
    )
    async with Session(url, ClientOptions(auth=auth, timeout=10, deadline=25)) as session:
        for tool in await session.list_tools():
            await session.call_tool(tool["name"], sample_arguments(tool))


def main() -> int:
    try:
        asyncio.run(run(sys.argv[-1]))
    except MCPError as exc:
        print(f"error ({exc.kind}): {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
