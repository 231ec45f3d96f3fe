"""The upstream language-operator's contract: its discovery request, verbatim, against
the example memory tool; and the agent env matched against upstream's ``buildAgentEnv``
(``src/controllers/languageagent_config.go`` at commit
6705e7df2c17356f769830ff767e5188fa42d88e) and ``resolveModels``."""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from langop_infra.components.cluster import LanguageCluster
from tests.support.loopback import serve

SERVER_FILE = Path(__file__).resolve().parents[1] / "examples" / "memory_tool" / "server.py"

# language-operator's LanguageTool contract, "Tool Listing": the request and the response,
# byte for byte.
SEED_REQUEST = '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}'
SEED_RESPONSE = """
{
  "jsonrpc": "2.0",
  "id": 1,
  "result": {
    "tools": [
      {
        "name": "remember",
        "description": "Store information in long-term memory",
        "inputSchema": {
          "type": "object",
          "properties": {
            "content": { "type": "string", "description": "Information to remember" },
            "tags": { "type": "array", "items": { "type": "string" } }
          },
          "required": ["content"]
        }
      },
      {
        "name": "recall",
        "description": "Retrieve information from long-term memory",
        "inputSchema": {
          "type": "object",
          "properties": {
            "query": { "type": "string", "description": "What to search for" }
          },
          "required": ["query"]
        }
      }
    ]
  }
}
"""


def contains(actual: Any, expected: Any, path: str = "$") -> list[str]:
    """Where ``actual`` lacks what ``expected`` has: every key and value of the seed's
    document must be there; the tool may add keys (titles, annotations, more properties)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        return [m for k, v in expected.items()
                for m in (contains(actual[k], v, f"{path}.{k}") if k in actual
                          else [f"{path}.{k}: missing"])]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {actual!r}"]
        return [m for i, (a, e) in enumerate(zip(actual, expected, strict=True))
                for m in contains(a, e, f"{path}[{i}]")]
    return [] if actual == expected else [f"{path}: expected {expected!r}, got {actual!r}"]


@pytest.fixture(scope="module")
def memory_tool_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    spec = importlib.util.spec_from_file_location("memory_tool_seed", SERVER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    with serve(module.build_app(tmp_path_factory.mktemp("memory") / "memory.db")) as url:
        yield url


@pytest.mark.parametrize("accept", [None, "application/json"])
def test_the_seeds_discovery_request_gets_the_seeds_plain_json(memory_tool_url, accept) -> None:
    # The seed's request names only Content-Type; upstream's sync may also send Accept JSON.
    headers = {"Content-Type": "application/json"}
    if accept is not None:
        headers["Accept"] = accept
    response = httpx.post(f"{memory_tool_url}/mcp", headers=headers, content=SEED_REQUEST,
                          timeout=5)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == "application/json"
    assert contains(response.json(), json.loads(SEED_RESPONSE)) == []


def test_the_seed_comparison_fails_on_a_different_document() -> None:
    seed = json.loads(SEED_RESPONSE)
    changed = json.loads(SEED_RESPONSE)
    changed["result"]["tools"][1]["inputSchema"]["required"] = []
    assert contains(changed, seed) == [
        "$.result.tools[1].inputSchema.required: expected 1 items, got []"]


# --- agent env, as upstream's buildAgentEnv gives it ------------------------------------------

TWO_GATEWAY_MODELS = {
    "namespace": "apps",
    "partOf": "shop",
    "models": [
        {"name": "claude", "provider": "openai-compatible", "modelName": "claude-sonnet-4-5",
         "endpoint": "http://litellm-upstream.apps.svc.cluster.local:4000/v1"},
        {"name": "local", "provider": "openai-compatible", "modelName": "llama-3.1-8b",
         "endpoint": "http://vllm.apps.svc.cluster.local:8000/v1"},
    ],
    "agents": [{"name": "helper", "image": "ghcr.io/acme/helper:1",
                "models": [{"name": "claude"}, {"name": "local", "role": "fallback"}]}],
}


def helper_env(render: Any, document: dict[str, Any]) -> dict[str, Any]:
    rendered = render(lambda: LanguageCluster("c", document))
    container = rendered.find("Deployment", "helper", "apps")["spec"]["template"]["spec"][
        "containers"][0]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_two_gateway_models_name_the_gateway_once(render) -> None:
    env = helper_env(render, TWO_GATEWAY_MODELS)
    # upstream resolveModels: "Deduplicate: only add the gateway URL once."
    assert env["MODEL_ENDPOINT"] == "http://gateway.apps.svc.cluster.local:8000"
    assert env["LLM_MODEL"] == "claude,local"
    assert "MODEL_ENDPOINTS" not in env  # the old name; upstream dropped it


def test_identity_env_matches_upstream(render) -> None:
    env = helper_env(render, TWO_GATEWAY_MODELS)
    assert env["AGENT_CLUSTER_NAME"] == "shop"
    assert uuid.UUID(env["AGENT_CLUSTER_UUID"]).version == 5
    assert env["AGENT_CLUSTER_UUID"] != env["AGENT_UUID"]
    # Stable across renders; another cluster name, another UUID.
    assert helper_env(render, TWO_GATEWAY_MODELS)["AGENT_CLUSTER_UUID"] == env[
        "AGENT_CLUSTER_UUID"]
    other = helper_env(render, {**TWO_GATEWAY_MODELS, "partOf": "billing"})
    assert other["AGENT_CLUSTER_UUID"] != env["AGENT_CLUSTER_UUID"]
    # Upstream's buildAgentEnv at the matched commit sets no AGENT_MODE.
    assert "AGENT_MODE" not in env
