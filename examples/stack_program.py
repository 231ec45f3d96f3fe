"""A stack program that imports the components directly (the Python API path).

Use it as a project's ``__main__.py``. It declares the same product as ``stacks/``: a memory
tool, a search tool, a sidecar file tool and two agents, with secrets from Pulumi config.
"""

import pulumi

from langop_infra import LanguageAgent, LanguageTool

config = pulumi.Config()
namespace = config.get("namespace") or "research-dev"

memory = LanguageTool(
    "memory",
    image="ghcr.io/acme/memory-mcp:1.4.0",
    namespace=namespace,
    persistence={"size": "5Gi"},
    env={"MEMORY_DB_PATH": "/data/memory.db"},
)
search = LanguageTool(
    "docs-search", image="ghcr.io/acme/docs-search-mcp:2.1.0", namespace=namespace, port=9090
)
files = LanguageTool(
    "workspace-files",
    image="ghcr.io/acme/files-mcp:0.3.1",
    namespace=namespace,
    deployment_mode="sidecar",
    port=8181,
)

researcher = LanguageAgent(
    "researcher",
    image="ghcr.io/acme/research-agent:3.0.0",
    namespace=namespace,
    tools=[memory, search, files],
    mcp_servers=[
        {
            "name": "web-search",
            "url": "https://search.mcp.example.com/mcp",
            "headers": [
                # A Pulumi secret becomes a key of Secret `researcher-env`, never a literal.
                {"name": "Authorization", "secret": config.get_secret("searchToken") or ""},
            ],
        }
    ],
)
triage = LanguageAgent(
    "triage", image="ghcr.io/acme/triage-agent:1.2.0", namespace=namespace, tools=[memory]
)

pulumi.export("memory_endpoint", memory.endpoint)
pulumi.export("researcher_mcp_servers", researcher.mcp_servers)
