"""ark's agent contract: the ArkAgent examples of its MCP documentation (ark's ArkAgent), verbatim,
read by a loader written from ark's own runtime.

``ark_config_load`` follows ``internal/agent/config/config.go`` of arkonis-dev/ark-operator
at commit 2cd623ab0f3c395bd62b4213aa84210c53212508 line by line: the three required env
vars, the integer ones, and ``AGENT_MCP_SERVERS``/``AGENT_WEBHOOK_TOOLS`` decoded the way
Go's ``encoding/json`` decodes into its structs (a string field refuses an object, unknown
keys are ignored). ark's runtime reads no file: every setting comes from env.
No Go toolchain is at hand here, so this loader stands in for the Go one; it is as strict.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.components.cluster import LanguageCluster
from langop_infra.config.agent import AgentSpec
from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program

# The three spec examples of ark's ArkAgent (ark's "MCP Tools" page), byte for byte.
SEED_MCP_SERVERS = """\
spec:
  model: llama3.2
  systemPrompt: "You are a research agent with web search capabilities."
  mcpServers:
    - name: web-search
      url: https://search.mcp.internal/sse
    - name: memory
      url: https://memory.mcp.internal/sse
"""
SEED_HEADERS = """\
spec:
  mcpServers:
    - name: private-search
      url: https://search.internal/sse
      headers:
        - name: Authorization
          valueFrom:
            secretKeyRef:
              name: mcp-credentials
              key: search-token
        - name: X-API-Version
          value: "2"
"""
SEED_WEBHOOKS = """\
spec:
  model: llama3.2
  systemPrompt: "You are a news assistant."
  tools:
    - name: fetch_news
      description: "Fetch the latest news headlines for a given topic."
      url: "http://news-api.internal/headlines"
      method: POST
      inputSchema: |
        {
          "type": "object",
          "properties": {
            "topic": {"type": "string", "description": "The news topic to search for"}
          },
          "required": ["topic"]
        }
    - name: get_weather
      description: "Get current weather for a city."
      url: "http://weather-api.internal/current"
      method: GET
      inputSchema: |
        {
          "type": "object",
          "properties": {
            "city": {"type": "string"}
          },
          "required": ["city"]
        }
"""

# What the ArkAgent gets from ark's operator and not from its spec: the Redis queue, from
# ark's shared Secret (envFrom). Here the user supplies it the same way, from a Secret.
QUEUE_SECRET = {"secretKeyRef": {"name": "ark-queue", "key": "url"}}
SECRETS = {
    ("ark-queue", "url"): "redis.ark-system.svc.cluster.local:6379",
    ("mcp-credentials", "search-token"): "your-token-here",
}


class ArkConfigError(Exception):
    """What ark's ``config.Load`` returns as an error: the agent exits at startup."""


def _go_decode(raw: str, fields: Mapping[str, type], what: str) -> list[dict[str, Any]]:
    """``json.Unmarshal`` of a JSON array into ``[]struct{...}`` of string fields."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ArkConfigError(f"invalid {what} JSON: {exc}") from None
    if value is None:
        return []
    if not isinstance(value, list):
        raise ArkConfigError(f"invalid {what} JSON: cannot unmarshal {type(value).__name__}")
    out = []
    for item in value:
        if not isinstance(item, dict):
            raise ArkConfigError(f"invalid {what} JSON: element is not an object")
        decoded = {}
        for key, kind in fields.items():
            # Go matches keys case-insensitively; ark's tags are the camelCase names used here.
            found = [v for k, v in item.items() if k.lower() == key.lower()]
            field_value = found[0] if found else None
            if field_value is not None and not isinstance(field_value, kind):
                raise ArkConfigError(
                    f"invalid {what} JSON: cannot unmarshal {type(field_value).__name__} "
                    f"into Go struct field .{key} of type string"
                )
            decoded[key] = field_value if field_value is not None else ""
        out.append(decoded)
    return out


def ark_config_load(env: Mapping[str, str]) -> dict[str, Any]:
    """ark's ``config.Load()``: every env var its runtime reads, with its checks."""

    def require(key: str) -> str:
        if not env.get(key):
            raise ArkConfigError(f"required env var {key} is not set")
        return env[key]

    def integer(key: str, default: int) -> int:
        if not env.get(key):
            return default
        try:
            return int(env[key])
        except ValueError:
            raise ArkConfigError(f"invalid {key} {env[key]!r}") from None

    config = {
        "Model": require("AGENT_MODEL"),
        "SystemPrompt": require("AGENT_SYSTEM_PROMPT"),
        "TaskQueueURL": require("TASK_QUEUE_URL"),
        "Provider": env.get("AGENT_PROVIDER", ""),
        "ValidatorPrompt": env.get("AGENT_VALIDATOR_PROMPT", ""),
        "MaxTokensPerCall": integer("AGENT_MAX_TOKENS", 8000),
        "TimeoutSeconds": integer("AGENT_TIMEOUT_SECONDS", 120),
        "MaxRetries": integer("AGENT_MAX_RETRIES", 3),
        "MCPServers": [],
        "WebhookTools": [],
    }
    if env.get("AGENT_MCP_SERVERS"):
        config["MCPServers"] = _go_decode(
            env["AGENT_MCP_SERVERS"], {"name": str, "url": str}, "AGENT_MCP_SERVERS"
        )
    if env.get("AGENT_WEBHOOK_TOOLS"):
        config["WebhookTools"] = _go_decode(
            env["AGENT_WEBHOOK_TOOLS"],
            {"name": str, "description": str, "url": str, "method": str, "inputSchema": str},
            "AGENT_WEBHOOK_TOOLS",
        )
    return config


def ark_agent(seed: str, name: str = "ark") -> dict[str, Any]:
    """The seed's ``spec`` as one of our agents: plus the name and image ark's CRD keeps in
    metadata and its operator settings, and the queue ark's operator injects."""
    spec = yaml.safe_load(seed)["spec"]
    return {
        "name": name,
        "image": "ghcr.io/arkonis-dev/ark-agent:0.1",
        **spec,
        "secretEnv": {"TASK_QUEUE_URL": QUEUE_SECRET},
    }


def pod_env(rendered: Any, agent: str) -> dict[str, str]:
    """The agent container's env as the kubelet resolves it (secretKeyRef included)."""
    deployment = rendered.find("Deployment", agent, "ark")
    [container] = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == agent
    ]
    env = {}
    for item in container["env"]:
        if "fieldRef" in item.get("valueFrom", {}):  # POD_NAME: the pod's name
            assert item["valueFrom"]["fieldRef"] == {"fieldPath": "metadata.name"}
            env[item["name"]] = f"{agent}-7d4b9c-x2k8p"
        elif "valueFrom" in item:
            ref = item["valueFrom"]["secretKeyRef"]
            env[item["name"]] = SECRETS[(ref["name"], ref["key"])]
        else:
            env[item["name"]] = item["value"]
    return env


def cluster(*agents: dict[str, Any], models: list[dict[str, Any]] | None = None) -> dict:
    return {
        "namespace": "ark",
        "partOf": "ark",
        "models": models or [],
        "agents": list(agents),
        "externalSecrets": ["ark-queue", "mcp-credentials"],
        "externalServices": [{"name": "ollama", "namespace": "ark"}],
    }


def test_the_seeds_mcp_servers_agent_starts_in_arks_runtime(render) -> None:
    rendered = render(lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS))))
    config = ark_config_load(pod_env(rendered, "ark"))
    assert config["Model"] == "llama3.2"
    assert config["SystemPrompt"] == "You are a research agent with web search capabilities."
    assert config["TaskQueueURL"] == "redis.ark-system.svc.cluster.local:6379"
    assert config["MCPServers"] == [
        {"name": "web-search", "url": "https://search.mcp.internal/sse"},
        {"name": "memory", "url": "https://memory.mcp.internal/sse"},
    ]
    assert config["WebhookTools"] == []
    # ark's defaults stand: we set none of its limits.
    assert (config["MaxTokensPerCall"], config["TimeoutSeconds"], config["MaxRetries"]) == (
        8000,
        120,
        3,
    )


def test_the_seeds_webhook_tools_reach_arks_runtime_as_written(render) -> None:
    rendered = render(lambda: LanguageCluster("c", cluster(ark_agent(SEED_WEBHOOKS))))
    config = ark_config_load(pod_env(rendered, "ark"))
    assert config["Model"] == "llama3.2"
    assert config["SystemPrompt"] == "You are a news assistant."
    seed_tools = yaml.safe_load(SEED_WEBHOOKS)["spec"]["tools"]
    assert config["WebhookTools"] == [
        {k: t[k] for k in ("name", "description", "url", "method", "inputSchema")}
        for t in seed_tools
    ]
    # The schema text is the seed's own, newlines and indentation included.
    assert config["WebhookTools"][0]["inputSchema"].startswith('{\n  "type": "object",\n')
    assert config["MCPServers"] == []


def test_the_seeds_secret_header_reaches_the_pod_only_through_secret_key_ref(render) -> None:
    agent = {**ark_agent(SEED_HEADERS), "model": "llama3.2", "systemPrompt": "Search."}
    rendered = render(lambda: LanguageCluster("c", cluster(agent)))
    deployment = rendered.find("Deployment", "ark", "ark")
    env = {e["name"]: e for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["ARK_MCP_PRIVATE_SEARCH_HEADER_AUTHORIZATION"]["valueFrom"] == {
        "secretKeyRef": {"name": "mcp-credentials", "key": "search-token"}
    }
    assert env["ARK_MCP_PRIVATE_SEARCH_HEADER_X_API_VERSION"]["value"] == "2"
    assert "your-token-here" not in json.dumps(rendered.manifests)
    config = ark_config_load(pod_env(rendered, "ark"))
    assert config["MCPServers"] == [
        {"name": "private-search", "url": "https://search.internal/sse"}
    ]


def test_an_inputschema_object_would_stop_arks_runtime() -> None:
    # Why the string matters: ark's Go struct has a string field, and an object fails Load.
    env = {
        "AGENT_MODEL": "m",
        "AGENT_SYSTEM_PROMPT": "p",
        "TASK_QUEUE_URL": "q",
        "AGENT_WEBHOOK_TOOLS": json.dumps(
            [{"name": "t", "url": "http://x", "inputSchema": {"type": "object"}}]
        ),
    }
    with pytest.raises(ArkConfigError, match="cannot unmarshal dict into Go struct field"):
        ark_config_load(env)


def test_a_model_id_maps_to_the_declared_model_serving_it(render) -> None:
    models = [
        {
            "name": "llama",
            "provider": "openai-compatible",
            "modelName": "llama3.2",
            "endpoint": "http://ollama.ark.svc.cluster.local:11434/v1",
        }
    ]
    run = run_program(
        lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS), models=models))
    )
    rendered = render(
        lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS), models=models))
    )
    env = pod_env(rendered, "ark")
    # Through the gateway the agent asks for the declared model's name (the gateway's alias).
    assert env["AGENT_MODEL"] == env["LLM_MODEL"] == "llama"
    assert env["MODEL_ENDPOINT"] == "http://gateway.ark.svc.cluster.local:8000"
    assert not [w for w in run.warnings if "no gateway serves it" in w]


def test_a_model_id_no_declared_model_serves_is_passed_on_with_a_warning(render) -> None:
    run = run_program(lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS))))
    assert [w for w in run.warnings if "'llama3.2'" in w and "no gateway serves it" in w]
    env = pod_env(render(lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS)))), "ark")
    assert env["AGENT_MODEL"] == "llama3.2"
    assert "MODEL_ENDPOINT" not in env and "LLM_MODEL" not in env


def test_a_model_id_two_declared_models_serve_is_ambiguous() -> None:
    models = [
        {
            "name": n,
            "provider": "openai-compatible",
            "modelName": "llama3.2",
            "endpoint": f"http://ollama.ark.svc.cluster.local:8000/{n}/v1",
        }
        for n in ("a", "b")
    ]
    with pytest.raises(SpecError) as caught:
        run_program(
            lambda: LanguageCluster("c", cluster(ark_agent(SEED_MCP_SERVERS), models=models))
        )
    [problem] = caught.value.problems
    assert problem.path == "agents[0].model"
    assert "a, b" in problem.message and "'llama3.2'" in problem.message


def test_arks_tools_key_holds_webhook_tools_next_to_language_tool_references() -> None:
    agent = AgentSpec.model_validate(
        {
            "name": "a",
            "image": "x/y:1",
            "tools": [{"name": "memory"}, {"name": "hook", "url": "http://h.internal/x"}],
            "webhookTools": [{"name": "first", "url": "http://f.internal/x"}],
        }
    )
    assert [t.name for t in agent.tools] == ["memory"]
    assert [t.name for t in agent.webhook_tools] == ["first", "hook"]


def test_an_ark_tool_without_url_is_reported_as_a_webhook_tool() -> None:
    with pytest.raises(ValueError) as caught:
        AgentSpec.model_validate(
            {"name": "a", "image": "x/y:1", "tools": [{"name": "hook", "method": "GET"}]}
        )
    assert "webhookTools.0.url" in str(caught.value)
    assert "Field required" in str(caught.value)


def test_the_stack_file_schema_takes_the_seeds_agent_as_written() -> None:
    import jsonschema

    schema = json.loads(
        (Path(__file__).resolve().parents[1] / "schemas" / "stack-config.schema.json").read_text()
    )
    validator = jsonschema.Draft7Validator(schema)

    def errors(agent: dict[str, Any]) -> list[str]:
        config = {"langop-infra:namespace": "ark", "langop-infra:agents": [agent]}
        return [e.message for e in validator.iter_errors({"config": config})]

    agent = {k: v for k, v in ark_agent(SEED_WEBHOOKS).items() if k != "secretEnv"}
    assert errors(agent) == []
    agent["tools"][0]["method"] = "FETCH"  # neither a reference nor a valid webhook tool
    assert errors(agent) != []
