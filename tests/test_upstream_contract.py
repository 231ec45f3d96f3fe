"""The upstream language-operator's contract: its discovery request, verbatim, against
the example memory tool; and every row of docs/agent-contract.md's language-operator column
checked against :func:`upstream_agent_env`, a loader written from upstream's source at
commit 5aef8d685e660cc74517cc7f40570c086cc21824 (``src/controllers/languageagent_config.go``:
``buildAgentEnv``, ``formatPersona``; ``src/controllers/languageagent_deployment.go``:
``reconcileDeployment``, ``resolveModels``, ``resolveTools``)."""

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
        return [
            m
            for k, v in expected.items()
            for m in (
                contains(actual[k], v, f"{path}.{k}") if k in actual else [f"{path}.{k}: missing"]
            )
        ]
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {actual!r}"]
        return [
            m
            for i, (a, e) in enumerate(zip(actual, expected, strict=True))
            for m in contains(a, e, f"{path}[{i}]")
        ]
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
    response = httpx.post(
        f"{memory_tool_url}/mcp", headers=headers, content=SEED_REQUEST, timeout=5
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == "application/json"
    assert contains(response.json(), json.loads(SEED_RESPONSE)) == []


def test_the_seed_comparison_fails_on_a_different_document() -> None:
    seed = json.loads(SEED_RESPONSE)
    changed = json.loads(SEED_RESPONSE)
    changed["result"]["tools"][1]["inputSchema"]["required"] = []
    assert contains(changed, seed) == [
        "$.result.tools[1].inputSchema.required: expected 1 items, got []"
    ]


# --- agent env, as upstream's buildAgentEnv gives it ------------------------------------------

TWO_GATEWAY_MODELS = {
    "namespace": "apps",
    "partOf": "shop",
    "externalServices": [
        {"name": "litellm-upstream", "namespace": "apps"},
        {"name": "vllm", "namespace": "apps"},
    ],
    "models": [
        {
            "name": "claude",
            "provider": "openai-compatible",
            "modelName": "claude-sonnet-4-5",
            "endpoint": "http://litellm-upstream.apps.svc.cluster.local:4000/v1",
        },
        {
            "name": "local",
            "provider": "openai-compatible",
            "modelName": "llama-3.1-8b",
            "endpoint": "http://vllm.apps.svc.cluster.local:8000/v1",
        },
    ],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/helper:1",
            "models": [{"name": "claude"}, {"name": "local", "role": "fallback"}],
        }
    ],
}


def helper_env(render: Any, document: dict[str, Any]) -> dict[str, Any]:
    rendered = render(lambda: LanguageCluster("c", document))
    container = rendered.find("Deployment", "helper", "apps")["spec"]["template"]["spec"][
        "containers"
    ][0]
    return {e["name"]: e.get("value") for e in container["env"]}


def test_two_gateway_models_name_the_gateway_once(render) -> None:
    env = helper_env(render, TWO_GATEWAY_MODELS)
    # upstream resolveModels: "Deduplicate: only add the gateway URL once."
    assert env["MODEL_ENDPOINT"] == "http://gateway.apps.svc.cluster.local:8000"
    assert env["LLM_MODEL"] == "claude,local"
    assert "MODEL_ENDPOINTS" not in env  # the old name; upstream dropped it


# --- upstream's buildAgentEnv, line by line ---------------------------------------------------

UPSTREAM_COMMIT = "5aef8d685e660cc74517cc7f40570c086cc21824"


def upstream_agent_env(
    agent: dict[str, Any],
    namespace: str,
    models: dict[str, dict[str, Any]],
    tools: dict[str, dict[str, Any]],
    personas: dict[str, dict[str, Any]],
    operator_env: dict[str, str],
    status_uuid: str,
    cluster_uid: str,
) -> list[tuple[str, str]]:
    """The env ``buildAgentEnv`` gives an agent container, from the agent's spec and the
    objects it references, as Go code at ``UPSTREAM_COMMIT`` computes it:

    - the cluster is the LanguageCluster named after the agent's namespace
      (``reconcileDeployment``: ``r.Get(..., NamespacedName{Name: agent.Namespace}, cluster)``);
    - ``resolveModels``: the namespace gateway's URL once, and each model's ``spec.modelName``;
    - ``resolveTools``: each enabled tool's full streamable-HTTP URL, ``/mcp`` included,
      ``localhost`` for a sidecar (``mcpToolEndpoint``; written from its doc comment there);
    - the OTEL variables pass through from the operator's own env when it has an endpoint.
    ``status_uuid`` and ``cluster_uid`` stand for what upstream generates at run time
    (``uuid.New()`` once, and the API server's UID).
    """
    env = [
        ("AGENT_NAME", agent["name"]),
        ("AGENT_NAMESPACE", namespace),
        ("AGENT_UUID", status_uuid),
        ("AGENT_CLUSTER_NAME", namespace),
        ("AGENT_CLUSTER_UUID", cluster_uid),
    ]
    if endpoint := operator_env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        env += [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint),
            ("OTEL_SERVICE_NAME", f"agent-{agent['name']}"),
        ]
        for name in ("OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"):
            if operator_env.get(name):
                env.append((name, operator_env[name]))
    if agent.get("instructions"):
        env.append(("AGENT_INSTRUCTIONS", agent["instructions"]))
    persona = personas.get(agent.get("persona", ""))
    if persona is not None:
        lines = [
            f"{label}: {persona[key].strip()}."
            for key, label in (
                ("tone", "Tone"),
                ("personality", "Personality"),
                ("expertise", "Expertise"),
            )
            if persona.get(key, "").strip()
        ]
        if lines:
            env.append(("AGENT_PERSONA", "\n".join(lines)))
    gateway = f"http://gateway.{namespace}.svc.cluster.local:8000"
    urls = [gateway] if agent.get("models") else []
    names = [
        models[m["name"]]["modelName"]
        for m in agent.get("models", [])
        if models[m["name"]].get("modelName")
    ]
    if urls:
        env.append(("MODEL_ENDPOINT", ",".join(urls)))
    if names:
        env.append(("LLM_MODEL", ",".join(names)))
    tool_urls = []
    for ref in agent.get("tools", []):
        if ref.get("enabled") is False:
            continue
        tool = tools[ref["name"]]
        port = tool.get("port") or 8080
        host = (
            "localhost"
            if tool.get("deploymentMode") == "sidecar"
            else f"{ref['name']}.{namespace}.svc.cluster.local"
        )
        tool_urls.append(f"http://{host}:{port}/mcp")
    if tool_urls:
        env.append(("MCP_SERVERS", ",".join(tool_urls)))
    env += [(k, v) for k, v in agent.get("env", {}).items()]
    return env


OPERATOR_ENV = {
    "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability:4318",
    "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
    "OTEL_TRACES_SAMPLER_ARG": "0.25",
}
UPSTREAM_SPEC = {
    "namespace": "shop",
    "partOf": "storefront",
    "externalServices": [{"name": "litellm-upstream", "namespace": "shop"}],
    "defaults": {
        "observability": {
            "otlpEndpoint": OPERATOR_ENV["OTEL_EXPORTER_OTLP_ENDPOINT"],
            "tracesSampler": OPERATOR_ENV["OTEL_TRACES_SAMPLER"],
            "tracesSamplerArg": OPERATOR_ENV["OTEL_TRACES_SAMPLER_ARG"],
        }
    },
    "tools": [
        {"name": "memory", "image": "ghcr.io/acme/memory:1"},
        {
            "name": "files",
            "image": "ghcr.io/acme/files:1",
            "deploymentMode": "sidecar",
            "port": 8181,
        },
    ],
    "models": [
        {
            "name": "claude",
            "provider": "openai-compatible",
            "modelName": "claude-sonnet-4-5",
            "endpoint": "http://litellm-upstream.shop.svc.cluster.local:4000/v1",
        }
    ],
    "personas": [{"name": "careful", "tone": "calm", "expertise": "orders"}],
    "agents": [
        {
            "name": "helper",
            "image": "ghcr.io/acme/helper:1",
            "instructions": "Help the shop's customers.",
            "persona": "careful",
            "models": [{"name": "claude"}],
            "tools": [{"name": "memory"}, {"name": "files"}],
            "initContainers": [
                {"name": "adapter", "image": "ghcr.io/acme/adapter:1", "env": {"MODE": "init"}}
            ],
        }
    ],
}
# What docs/agent-contract.md says we do differently, on purpose, row by row.
DIFFERENT_ON_PURPOSE = {
    "AGENT_UUID",
    "AGENT_CLUSTER_UUID",
    "LLM_MODEL",
    "MCP_SERVERS",
    "OTEL_RESOURCE_ATTRIBUTES",
}


@pytest.fixture(scope="module")
def helper_pod() -> dict[str, Any]:
    from langop_infra.offline._mock_engine import run_program
    from tests.support.manifests import Rendered

    rendered = Rendered(run_program(lambda: LanguageCluster("c", UPSTREAM_SPEC)))
    return rendered.find("Deployment", "helper", "shop")["spec"]["template"]["spec"]


def ours(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container["env"] if "value" in e}


def theirs() -> dict[str, str]:
    spec = UPSTREAM_SPEC
    return dict(
        upstream_agent_env(
            spec["agents"][0],
            spec["namespace"],
            {m["name"]: m for m in spec["models"]},
            {t["name"]: t for t in spec["tools"]},
            {p["name"]: p for p in spec["personas"]},
            OPERATOR_ENV,
            status_uuid="3f1c0a52-0000-4000-8000-000000000001",
            cluster_uid="uid-of-the-cluster",
        )
    )


def test_every_row_we_follow_matches_upstream(helper_pod) -> None:
    upstream, env = theirs(), ours(helper_pod["containers"][0])
    followed = {k: v for k, v in upstream.items() if k not in DIFFERENT_ON_PURPOSE}
    assert {k: env.get(k) for k in followed} == followed
    assert "AGENT_MODE" not in env and "AGENT_MODE" not in upstream


def test_the_rows_we_differ_on_differ_as_the_contract_says(helper_pod) -> None:
    upstream, env = theirs(), ours(helper_pod["containers"][0])
    # AGENT_UUID: upstream's is random once; ours is stable across renders.
    assert uuid.UUID(env["AGENT_UUID"]).version == 5
    assert env["AGENT_UUID"] == str(
        uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_DNS, "agents.langop.io"), "shop/helper")
    )
    # AGENT_CLUSTER_UUID: no LanguageCluster object here; a uuid5 of its name (the namespace).
    assert env["AGENT_CLUSTER_UUID"] == str(
        uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_DNS, "agents.langop.io"), "cluster/shop")
    )
    # LLM_MODEL: our gateway's alias (the model's name), upstream's gateway's modelName.
    assert (env["LLM_MODEL"], upstream["LLM_MODEL"]) == ("claude", "claude-sonnet-4-5")
    # MCP_SERVERS: language-operator's base endpoints by default; endpointStyle: path gives
    # upstream's.
    assert [f"{u}/mcp" for u in env["MCP_SERVERS"].split(",")] == upstream["MCP_SERVERS"].split(",")
    assert env["OTEL_RESOURCE_ATTRIBUTES"] == ("k8s.namespace.name=shop,k8s.deployment.name=helper")


def test_endpoint_style_path_gives_upstreams_mcp_servers() -> None:
    from langop_infra.offline._mock_engine import run_program
    from tests.support.manifests import Rendered

    spec = {**UPSTREAM_SPEC, "defaults": {**UPSTREAM_SPEC["defaults"], "endpointStyle": "path"}}
    pod = Rendered(run_program(lambda: LanguageCluster("c", spec))).find(
        "Deployment", "helper", "shop"
    )["spec"]["template"]["spec"]
    assert ours(pod["containers"][0])["MCP_SERVERS"] == theirs()["MCP_SERVERS"]


def test_init_containers_get_the_agents_env_as_upstream(helper_pod) -> None:
    [adapter] = [c for c in helper_pod["initContainers"] if c["name"] == "adapter"]
    main_env = helper_pod["containers"][0]["env"]
    # reconcileDeployment: Env = append(agentEnv, init.Env...)
    assert adapter["env"] == [*main_env, {"name": "MODE", "value": "init"}]
    # ... and the agent's config.yaml mount, which a runtime adapter reads.
    assert "/etc/agent" in [m["mountPath"] for m in adapter["volumeMounts"]]


def test_the_loader_tells_a_wrong_env_apart() -> None:
    upstream = theirs()
    assert upstream["AGENT_CLUSTER_NAME"] == "shop"
    assert upstream["OTEL_TRACES_SAMPLER_ARG"] == "0.25"
    assert upstream["AGENT_PERSONA"] == "Tone: calm.\nExpertise: orders."
