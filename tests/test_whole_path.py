"""The whole path, as Kubernetes would start it (#39 §4): the dev stack's researcher with
``runtime: builtin``, rendered, then started by tests/support/kubelet.py (env, Secret refs,
fieldRefs, ConfigMap volumes, cluster names on loopback) among real parts:

- the real LiteLLM proxy (``.venv-litellm``), started from the rendered gateway Deployment
  and its ConfigMap, in front of a scripted OpenAI-compatible model (tests/fake_openai.py: a
  fake, since no model runs here; it stands at the vLLM Service the stack names);
- official-SDK MCP servers as tools: the web-search server (ark's ``mcpServers``, headers from
  a Secret and a literal) and examples/memory_tool (the required ``memory`` tool); the
  tickets API behind the ``fetch_ticket`` webhook tool is a plain HTTP endpoint (a stand-in:
  no real one exists here);
- an ``a2a-sdk`` client (langop_infra.agent._a2a_client) sending ``message/send``.

The question needs two tool calls on two tools; the answer, the two AgentSteps, the headers
and credentials each tool saw, ``/metrics``, and the same agent scheduled are checked.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langop_infra.agent._a2a_client import PeerClient
from langop_infra.agent._settings import Peer
from langop_infra.manifests import _gateway as gateway
from langop_infra.offline._render import render_stack
from langop_infra.toolkit import MCPToolBase, MCPToolInput
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import Recorder, call, named, tool_app, tool_results
from tests.support.kubelet import Cluster, Pod, revealed_manifests, wait_http
from tests.support.loopback import serve

REPO = Path(__file__).resolve().parents[1]
CALLER_TOKEN = "tester-token-0123456789abcdef"  # the A2A caller this test is
RESEARCHER_GATEWAY_KEY = "researcher-gateway-key-4f2a9c"  # the agent's own, for the gateway
LITELLM = REPO / ".venv-litellm" / "bin" / "litellm"
NAMESPACE = "research-dev"
QUESTION = "What happened to the printer outage ticket?"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LITELLM.exists(), reason="LiteLLM's proxy is not in .venv-litellm"),
]


class SearchInput(MCPToolInput):
    query: str


class SearchTool(MCPToolBase):
    name = "search"  # pyright: ignore[reportAssignmentType]
    description = "Search the web"  # pyright: ignore[reportAssignmentType]
    input_model = SearchInput  # pyright: ignore[reportAssignmentType]

    async def execute(self, **kwargs: Any) -> dict[str, Any]:
        return {
            "success": True,
            "results": [
                {"title": f"Printer outage on floor 3 ({kwargs['query']})", "ticket": "SUP-1234"}
            ],
        }


def tickets_api(seen: list[dict[str, Any]]) -> Starlette:
    """STAND-IN for the tickets API the stack's ``fetch_ticket`` calls."""

    async def lookup(request: Request) -> JSONResponse:
        body = await request.json()
        seen.append({"headers": dict(request.headers), "body": body})
        return JSONResponse({"ticketId": body["ticketId"], "status": "resolved"})

    return Starlette(routes=[Route("/api/v1/lookup", lookup, methods=["POST"])])


def scripted_model(body: dict[str, Any]) -> dict[str, Any]:
    """Search, then fetch the ticket the search found, then answer from the ticket."""
    results = tool_results(body)
    if not results:
        return call(named(body, "search"), query="printer outage")
    if len(results) == 1:
        return call(named(body, "fetch_ticket"), ticketId=results[0]["results"][0]["ticket"])
    ticket = results[1]
    return {"role": "assistant", "content": f"Ticket {ticket['ticketId']} is {ticket['status']}."}


def builtin_stack(tmp: Path) -> Path:
    document = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    agent = document["config"]["langop-infra:agents"][0]
    assert agent["name"] == "researcher"
    del agent["image"]
    agent["runtime"] = "builtin"
    # The LiteLLM proxy refuses to start without a master key (the dev stack sets none; a
    # finding reported with #39): the gateway gets one from a Secret, and the agent a key of
    # its own (agentKeys), which the gateway's custom_auth module admits.
    config = document["config"]
    config["langop-infra:secrets"]["gateway-master"] = {"key": "sk-dev-gateway-master-key"}
    config["langop-infra:secrets"]["gateway-agents"] = {
        "researcher": RESEARCHER_GATEWAY_KEY,
        "morning-digest": "morning-digest-gateway-key-81d0",
    }
    config["langop-infra:defaults"]["modelGateway"]["masterKey"] = {
        "secretKeyRef": {"name": "gateway-master", "key": "key"}
    }
    config["langop-infra:defaults"]["modelGateway"]["agentKeys"] = {"secretName": "gateway-agents"}
    path = tmp / "Pulumi.dev-builtin.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def with_a2a_card(manifests: list[dict[str, Any]]) -> None:
    """The A2A card as CONTRACTS.md has issue 38 render it, when the render has none yet."""
    deployment = next(
        m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == "researcher"
    )
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    # This test is a caller the agent admits (A2A answers authenticated callers only).
    container["env"].append({"name": "A2A_CALLER_TESTER_TOKEN", "value": CALLER_TOKEN})
    if any(e["name"] == "A2A_AGENT_CARD" for e in container["env"]):
        return
    card = {
        "name": "researcher",
        "description": "Researches questions",
        "url": f"http://researcher.{NAMESPACE}.svc.cluster.local:8080/",
        "protocolVersion": "0.3.0",
        "preferredTransport": "JSONRPC",
        "version": "1",
        "capabilities": {},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    manifests.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "researcher-a2a-card", "namespace": NAMESPACE},
            "data": {"agent-card.json": json.dumps(card)},
        }
    )
    pod["volumes"].append({"name": "a2a-card", "configMap": {"name": "researcher-a2a-card"}})
    container["volumeMounts"].append(
        {"name": "a2a-card", "mountPath": "/etc/agent/a2a", "readOnly": True}
    )
    container["env"] += [
        {"name": "A2A_PORT", "value": "8080"},
        {"name": "A2A_AGENT_CARD", "value": "/etc/agent/a2a/agent-card.json"},
    ]


def memory_app(db: Path) -> Any:
    spec = importlib.util.spec_from_file_location(
        "memory_tool_whole_path", REPO / "examples" / "memory_tool" / "server.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.build_app(db)


class World:
    def __init__(
        self,
        cluster: Cluster,
        model: FakeOpenAI,
        search: Recorder,
        tickets: list[dict[str, Any]],
        gateway: Pod,
    ) -> None:
        self.cluster, self.model, self.search, self.tickets = cluster, model, search, tickets
        self.gateway = gateway

    def agent(self) -> Pod:
        return self.cluster.pod("Deployment", "researcher")

    def start_agent(self, pod: Pod, **env: str) -> Any:
        python = Path(sys.executable).parent
        return pod.start(
            path=f"{python}:/usr/bin:/bin",
            bind_env="A2A_HOST",
            path_root_env="LANGOP_PATH_ROOT",
            extra_env=env,
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("whole-path")
    manifests = revealed_manifests(render_stack(REPO, config_file=builtin_stack(tmp)))
    with_a2a_card(manifests)
    cluster = Cluster(manifests, tmp / "nodes")
    model, search, tickets = FakeOpenAI(script=scripted_model), Recorder(tool_app(SearchTool())), []
    vllm = cluster.add_service("vllm", NAMESPACE)
    memory = cluster.add_service("memory", NAMESPACE)
    gateway_pod = cluster.pod("Deployment", "gateway", ip=cluster.add_service("gateway", NAMESPACE))
    with (
        serve(model.app(), host=vllm, port=8000),
        serve(memory_app(tmp / "memory.db"), host=memory, port=8080),
        serve(search) as search_url,
        serve(tickets_api(tickets)) as tickets_url,
    ):
        cluster.external = {
            "https://search.mcp.example.com": search_url,
            "https://tickets.example.com": tickets_url,
        }
        try:
            process = gateway_pod.start(entrypoint=[str(LITELLM)], host_flag="--host")
            wait_http(f"http://{gateway_pod.ip}:8000{gateway.READINESS_PATH}", process, gateway_pod)
            yield World(cluster, model, search, tickets, gateway_pod)
        finally:
            gateway_pod.stop()


def test_a_question_over_a2a_uses_two_tools_with_their_credentials(world: World) -> None:
    pod = world.agent()
    world.cluster.add_service("researcher", NAMESPACE, pod.ip)
    env = {e["name"]: e.get("value", "") for e in pod.container()["env"]}
    port, path = env.get("A2A_PORT", "8080"), env.get("A2A_PATH", "/")
    health = env.get("A2A_HEALTH_PORT", "9090")  # probes and metrics: not the callers' port
    try:
        process = world.start_agent(pod)
        wait_http(f"http://{pod.ip}:{health}/readyz", process, pod)
        # The pod's card names the address the kubelet stand-in resolved the Service to, and
        # the client sends the peer's token to the configured origin only: configure that one.
        reached = f"http://{pod.ip}:{port}"
        card = f"{reached}/.well-known/agent-card.json"
        token = {"Authorization": f"Bearer {CALLER_TOKEN}"}
        peer = Peer("researcher", reached + path, card, token)
        client = PeerClient([peer], timeout=60, transport=world.cluster.transport())
        reply = asyncio.run(client.send("researcher", QUESTION))
        metrics = httpx.get(f"http://{pod.ip}:{health}/metrics", timeout=5).text
    finally:
        pod.stop()
    assert reply.text == "Ticket SUP-1234 is resolved.", pod.log()[-3000:]
    (turn,) = reply.data
    assert [(s["step_number"], s["tool_name"]) for s in turn["steps"]] == [
        (1, "web-search__search"),
        (2, "fetch_ticket"),
    ]
    assert turn["steps"][1]["tool_args"] == {"ticketId": "SUP-1234"}
    assert turn["steps"][1]["result"] == {"ticketId": "SUP-1234", "status": "resolved"}
    searched = [h for h in world.search.requests if h.get("x-api-version")]
    assert searched and all(
        h["authorization"] == "dev-search-token-not-for-prod" and h["x-api-version"] == "2"
        for h in searched
    )
    (ticket,) = world.tickets
    assert ticket["headers"]["authorization"] == "Bearer dev-ticketing-token-not-for-prod"
    assert ticket["body"] == {"ticketId": "SUP-1234"}
    assert {r["authorization"] for r in world.model.requests} == {"Bearer no-key"}
    assert "sk-dev-gateway-master-key" not in pod.log() + world.gateway.log()
    [key] = [e["valueFrom"] for e in pod.container()["env"] if e["name"] == "MODEL_API_KEY"]
    assert key == {"secretKeyRef": {"name": "gateway-agents", "key": "researcher"}}
    asked = {r["model"] for r in world.model.requests}
    assert asked == {"meta-llama/Llama-3.1-8B-Instruct"}
    for tool in ("web-search__search", "fetch_ticket"):
        assert f'langop_agent_tool_invocations_total{{tool="{tool}"}} 1.0' in metrics
    assert 'langop_agent_model_requests_total{outcome="ok"} 3.0' in metrics


def test_the_same_agent_scheduled_runs_once_and_exits_0(world: World) -> None:
    pod = world.agent()
    process = world.start_agent(pod, AGENT_MODE="scheduled", AGENT_INPUT=QUESTION)
    try:
        code = process.wait(timeout=120)
    finally:
        pod.stop()
    assert code == 0, pod.log()[-3000:]
    lines = [json.loads(line) for line in pod.output().splitlines()]
    assert [line["type"] for line in lines] == ["step", "step", "answer"]
    assert [line["tool_name"] for line in lines[:2]] == ["web-search__search", "fetch_ticket"]
    assert lines[2]["answer"] == "Ticket SUP-1234 is resolved."
    assert lines[2]["error"] is None
