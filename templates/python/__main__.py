"""A memory tool and an agent that uses it, in one namespace.

`langop-infra render --stack dev` shows what `pulumi up -s dev` would create, offline.
"""

import pulumi

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config("langop-infra")
namespace = config.get("namespace") or "apps"

memory = LanguageTool(
    "memory",
    image="ghcr.io/acme/memory-mcp:1.4.0",  # your MCP server's image
    namespace=namespace,
)
agent = LanguageAgent(
    "helper",
    image="ghcr.io/acme/helper-agent:2.0.0",  # your agent's image
    namespace=namespace,
    instructions="You help the team with their questions.",
    tools=[memory],
)
pulumi.export("memory_endpoint", memory.endpoint)
