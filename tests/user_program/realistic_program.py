"""A platform engineer's own program (issue 51, "Done when"), written as the template starts
it: every component in ``ns.metadata.name``; an A2A pair; a memory; an HttpTool whose
credential is a secret Output; a model behind its own gateway; a sidecar tool; a scheduled
agent; and a label from a value known only at ``pulumi up`` (``run_id``, standing in for a
``random`` provider's result). tests/test_realistic_user_program.py runs it as written."""

import pulumi
import pulumi_kubernetes as k8s

from langop_infra import HttpTool, LanguageAgent, LanguageMemory, LanguageModel, LanguageTool

PIN = "@sha256:" + "5" * 64
AGENT_IMAGE = "ghcr.io/acme/agent:1.0.0" + PIN
config = pulumi.Config()

ns = k8s.core.v1.Namespace("apps", metadata={"name": "apps"})
# Known only once the cluster made it, as a random suffix is: a label made from it.
run_id = k8s.core.v1.ConfigMap("run", metadata={"namespace": ns.metadata.name}).metadata.uid

model = LanguageModel(
    "gpt",
    namespace=ns.metadata.name,
    provider="openai",
    model_name="gpt-4o-mini",
    gateway=True,
    api_key={"secret_key_ref": {"name": "openai", "key": "api-key"}},
)
notes = LanguageMemory("notes", namespace=ns.metadata.name, type="managed")
weather = HttpTool(
    "weather",
    namespace=ns.metadata.name,
    display_name="Weather",
    description="The weather of a city",
    endpoint="https://weather.example.com/v1",
    authentication={"type": "bearer", "value": config.require_secret("weatherToken")},
)
files = LanguageTool(
    "files",
    namespace=ns.metadata.name,
    image="ghcr.io/acme/files-mcp:1.0.0" + PIN,
    deployment_mode="sidecar",
)
researcher = LanguageAgent(
    "researcher",
    namespace=ns.metadata.name,
    image=AGENT_IMAGE,
    model=model,
    system_prompt="Research what you are asked.",
    labels={"run": run_id},
    a2a={
        "description": "Researches a question",
        "skills": [
            {"id": "research", "name": "Research", "description": "Finds out", "tags": ["web"]}
        ],
    },
)
planner = LanguageAgent(
    "planner",
    namespace=ns.metadata.name,
    image=AGENT_IMAGE,
    model=model,
    system_prompt="Plan the work; ask the researcher.",
    agents=[researcher],
    memory=notes,
    http_tools=[weather],
    tools=[files],
)
LanguageAgent(
    "nightly",
    namespace=ns.metadata.name,
    image=AGENT_IMAGE,
    model=model,
    system_prompt="Summarise the day.",
    schedule={"cron": "0 3 * * *", "input": "Summarise yesterday."},
)
pulumi.export("gateway", model.endpoint)
pulumi.export("memory", notes.endpoint)
pulumi.export("plannerServers", planner.mcp_servers)
