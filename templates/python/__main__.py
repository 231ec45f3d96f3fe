"""A Namespace, a memory tool and an agent that uses it.

`langop-infra render --stack dev` shows what `pulumi up -s dev` would create, offline.
"""

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config("langop-infra")
namespace = config.get("namespace") or "apps"

# The namespace this stack deploys into. The components take its name as an Output, so
# their objects are created after it (Pulumi follows the Output) and land where it is.
ns = k8s.core.v1.Namespace("namespace", metadata={"name": namespace})

memory = LanguageTool(
    "memory",
    image="ghcr.io/acme/memory-mcp:1.4.0",  # your MCP server's image
    namespace=ns.metadata.name,
)
agent = LanguageAgent(
    "helper",
    image="ghcr.io/acme/helper-agent:2.0.0",  # your agent's image
    namespace=ns.metadata.name,  # the tool's namespace: the agent reaches it there
    instructions="You help the team with their questions.",
    tools=[memory],
)
pulumi.export("namespace", ns.metadata.name)
pulumi.export("memory_endpoint", memory.endpoint)
