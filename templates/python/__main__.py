"""A Namespace, a memory tool and an agent that uses it.

`langop-infra render --stack dev` shows what `pulumi up -s dev` would create, offline.
"""

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config("langop-infra")
namespace = config.get("namespace") or "apps"

# The namespace this stack deploys into, created first (depends_on) and named explicitly:
# the components need its name when the program runs.
ns = k8s.core.v1.Namespace("namespace", metadata={"name": namespace})
in_namespace = pulumi.ResourceOptions(depends_on=[ns])

memory = LanguageTool(
    "memory",
    image="ghcr.io/acme/memory-mcp:1.4.0",  # your MCP server's image
    namespace=namespace,
    opts=in_namespace,
)
agent = LanguageAgent(
    "helper",
    image="ghcr.io/acme/helper-agent:2.0.0",  # your agent's image
    namespace=namespace,
    instructions="You help the team with their questions.",
    tools=[memory],
    opts=in_namespace,
)
pulumi.export("namespace", ns.metadata.name)
pulumi.export("memory_endpoint", memory.endpoint)
