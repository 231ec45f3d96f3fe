"""What a user's Pulumi program writes, checked by pyright (tests/test_typed_contract.py).

Lines ending in ``# type: ignore`` must be errors: the check runs with
``reportUnnecessaryTypeIgnoreComment``, so a line the types accept fails it.
"""

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import (
    AgentSpec,
    HttpTool,
    LanguageAgent,
    LanguageAgentArgs,
    LanguageCluster,
    LanguageMemory,
    LanguageModel,
    LanguageTool,
    LanguageToolArgs,
    ToolSpec,
)

image = pulumi.Output.from_input("ghcr.io/acme/search:1")
search = LanguageTool("search", image=image, port=8080, egress="restricted")
memory = LanguageTool("memory", {"image": "ghcr.io/acme/memory:1", "deployment_mode": "sidecar"})
files = LanguageTool("files", ToolSpec(name="files", image="ghcr.io/acme/files:1"))
args: LanguageToolArgs = {
    "image": "ghcr.io/acme/x:1",
    "resources": {"limits": {"cpu": "1"}},
    "egress_to": [{"cidr": "10.0.0.0/8", "except_": ["10.1.0.0/16"], "ports": [{"port": 443}]}],
    "secret_env": {"TOKEN": {"secret_key_ref": {"name": "t", "key": "k"}}},
    "disruption_budget": {"max_unavailable": "50%"},
    "schema_sync": {"timeout": "30s", "headers": [{"name": "X-Key", "secret": image}]},
}
model = LanguageModel("fast", provider="openai", model_name="gpt-4o-mini", gateway=False)
agent_args: LanguageAgentArgs = {
    "image": "ghcr.io/acme/agent:1",
    "tools": [search, {"name": "memory", "required": True}],
    "models": [model],
    "persona": "helper",
}
LanguageAgent("helper", agent_args)
LanguageAgent("other", AgentSpec(name="other", image="ghcr.io/acme/agent:1"))
LanguageCluster("apps", namespace="apps", tools=[{"name": "a", "image": "ghcr.io/acme/a:1"}])
# A namespace's name as an Output (k8s.core.v1.Namespace(...).metadata.name).
ns_name = pulumi.Output.from_input("apps")
in_ns = LanguageTool("in-ns", image="ghcr.io/acme/a:1", namespace=ns_name)
LanguageAgent("in-ns", image="ghcr.io/acme/agent:1", namespace=ns_name, tools=[in_ns])
LanguageModel("in-ns", provider="openai", model_name="gpt-4o-mini", namespace=ns_name)
HttpTool(
    "in-ns",
    description="d",
    display_name="D",
    version="1",
    endpoint="https://x.example.com",
    namespace=ns_name,
)
# Peers, a memory and HttpTools handed over as objects (issue 51), in that namespace.
peer = LanguageAgent("peer", image="ghcr.io/acme/agent:1", namespace=ns_name)
notes = LanguageMemory("notes", namespace=ns_name, type="managed")
lookup = HttpTool("lookup", description="d", display_name="D", endpoint=image, namespace=ns_name)
# An HttpTool's credential as a secret Output: the tool keeps it in a Secret of its own.
token = pulumi.Output.secret("t0k")
keyed = HttpTool(
    "keyed",
    description="d",
    display_name="D",
    endpoint=image,
    authentication={"type": "bearer", "value": token},
)
# Or the user's own Secret, as the object: its data rolls the agents that read it.
shared = k8s.core.v1.Secret("shared", metadata={"name": "shared"}, string_data={"t": "t0k"})
owned = HttpTool(
    "owned",
    description="d",
    display_name="D",
    endpoint=image,
    authentication={"type": "bearer", "secret_ref": {"name": shared, "key": "t"}},
)
LanguageAgent(
    "caller",
    image="ghcr.io/acme/agent:1",
    namespace=ns_name,
    agents=[peer, {"name": "far", "url": "https://far.example.com/"}],
    memory=notes,
    http_tools=[lookup, keyed, owned],
)

LanguageTool("no-image", port=8080)  # type: ignore
LanguageTool("bad-mode", image="x:1", deployment_mode="daemon")  # type: ignore
LanguageTool("typo", image="x:1", imagePullPolicy="Always")  # type: ignore
LanguageModel("no-provider", model_name="gpt-4o")  # type: ignore
LanguageTool("bad-port", image="x:1", port="8080")  # type: ignore
LanguageTool("structural", image="x:1", deployment_mode=pulumi.Output.from_input("sidecar"))  # type: ignore
bad: LanguageToolArgs = {"image": "x:1", "resources": {"limits": {"gpu": "1"}}}  # type: ignore
# Only an HttpTool takes a credential's value: an agent's inline webhook tool names a Secret.
LanguageAgent(
    "inline",
    image="x:1",
    webhook_tools=[{"name": "t", "url": "u", "authentication": {"value": token}}],  # type: ignore
)
