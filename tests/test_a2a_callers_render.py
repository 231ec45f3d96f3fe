"""``a2a.access`` and ``a2a.callers`` in the stack (issue 49 §1): the callee's pod gets
``A2A_ACCESS`` and one ``A2A_CALLER_<CALLER>_TOKEN`` per caller from its Secret, a caller of
the stack in its namespace gets the same Secret key as ``A2A_PEER_<PEER>_TOKEN``, and the
card of a built-in agent says what the runtime enforces. Rendered, then run: the tokens the
render names let the caller in and no one else."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import httpx
import pytest

from langop_infra.agent._a2a_client import PeerClient
from langop_infra.agent._a2a_server import CARD_PATH, a2a_routes, build_app
from langop_infra.agent._inbound_auth import load_callers
from langop_infra.agent._loop import AgentLoop
from langop_infra.agent._metrics import RuntimeMetrics
from langop_infra.agent._model_client import ModelReply
from langop_infra.agent._settings import load_peers
from langop_infra.components.cluster import LanguageCluster
from langop_infra.offline._mock_engine import run_program
from tests.support.a2a_stack import SKILL, a2a_stack, builtin_agent, token
from tests.support.loopback import serve

TOKENS = {"planner": "planner-token-0123456789abcdef", "ci": "ci-token-0123456789abcdef01"}


def document() -> dict[str, Any]:
    return a2a_stack(
        builtin_agent(
            "reviewer",
            a2a={
                "skills": [SKILL],
                "callers": [
                    {"name": "planner", "tokenFrom": token("planner")},
                    {"name": "ci", "tokenFrom": token("ci")},
                ],
            },
        ),
        builtin_agent("planner", agents=[{"name": "reviewer"}]),
        builtin_agent("kiosk", a2a={"skills": [SKILL], "access": "open"}),
    )


@pytest.fixture(scope="module")
def rendered() -> list[dict[str, Any]]:
    return run_program(lambda: LanguageCluster("c", cast("Any", document()))).manifests()


def env_of(manifests: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    (deployment,) = [
        m for m in manifests if m["kind"] == "Deployment" and m["metadata"]["name"] == agent
    ]
    (container,) = [
        c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == agent
    ]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def card_of(manifests: list[dict[str, Any]], agent: str) -> dict[str, Any]:
    (config,) = [
        m
        for m in manifests
        if m["kind"] == "ConfigMap" and m["metadata"]["name"] == f"{agent}-a2a-card"
    ]
    return json.loads(config["data"]["agent-card.json"])


def test_callers_tokens_reach_callee_and_caller_from_the_secret(
    rendered: list[dict[str, Any]],
) -> None:
    reviewer, planner, kiosk = (env_of(rendered, a) for a in ("reviewer", "planner", "kiosk"))
    assert reviewer["A2A_ACCESS"] == "authenticated"
    assert reviewer["A2A_CALLER_PLANNER_TOKEN"] == {
        "secretKeyRef": token("planner")["secretKeyRef"]
    }
    assert reviewer["A2A_CALLER_CI_TOKEN"] == {"secretKeyRef": token("ci")["secretKeyRef"]}
    assert planner["A2A_PEER_REVIEWER_TOKEN"] == {"secretKeyRef": token("planner")["secretKeyRef"]}
    assert kiosk["A2A_ACCESS"] == "open"
    assert not [name for name in kiosk if name.startswith("A2A_CALLER_")]


def test_the_card_says_what_the_runtime_enforces(rendered: list[dict[str, Any]]) -> None:
    card = card_of(rendered, "reviewer")
    assert card["securitySchemes"] == {
        "callerToken": {
            "httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "A bearer token per caller (a2a.callers), from a Secret",
            }
        }
    }
    assert card["securityRequirements"] == [{"schemes": {"callerToken": {"list": []}}}]
    assert "securitySchemes" not in card_of(rendered, "kiosk")


class Model:
    async def complete(self, messages: Any, tools: Any, deadline: Any = None) -> ModelReply:
        return ModelReply("reviewed", (), {"role": "assistant", "content": "reviewed"})


class NoTools:
    def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
        return [], {}

    async def call_tool(self, name: str, arguments: Any = None) -> Any:
        raise AssertionError("no tool is called")


def resolved(env: dict[str, Any]) -> dict[str, str]:
    """The env as the kubelet would give it: each Secret key's value filled in."""
    return {
        name: TOKENS[value["secretKeyRef"]["key"]] if isinstance(value, dict) else str(value)
        for name, value in env.items()
        if isinstance(value, str) or "secretKeyRef" in value
    }


def test_the_rendered_tokens_let_the_caller_in_and_no_one_else(
    rendered: list[dict[str, Any]],
) -> None:
    callee = resolved(env_of(rendered, "reviewer"))
    caller = resolved(env_of(rendered, "planner"))
    loop = AgentLoop(Model(), NoTools(), RuntimeMetrics())
    routes = a2a_routes(None, "/", lambda: loop, "reviewer")
    public = frozenset({("GET", CARD_PATH)})
    with serve(build_app(routes, callers=load_callers(callee), public=public)) as url:
        peers = load_peers({**caller, "A2A_PEERS": json.dumps([{"name": "reviewer", "url": url}])})
        reply = asyncio.run(PeerClient(peers, timeout=30).send("reviewer", "check"))
        stranger = httpx.post(f"{url}/", json={"jsonrpc": "2.0", "id": 1}, timeout=30)
    assert reply.text == "reviewed"
    assert stranger.status_code == 401


def test_a_caller_the_callee_does_not_admit_is_warned_of_and_tokens_need_their_secret() -> None:
    from langop_infra.config.checks._advice import cluster_warnings
    from langop_infra.config.checks._validation import parse_cluster
    from langop_infra.core.problems import SpecError

    doc = document()
    doc["agents"].append(builtin_agent("intruder", agents=[{"name": "reviewer"}]))
    doc["agents"].append(builtin_agent("walkin", agents=[{"name": "kiosk"}]))
    warned = [w for w in cluster_warnings(parse_cluster(doc)) if w.kind == "langop_a2a_unadmitted"]
    assert [w.path for w in warned] == ["agents[3].agents[0].name"]  # kiosk is open
    assert warned[0].message.startswith(
        "agent 'reviewer' (runtime: builtin) answers authenticated callers only and does not "
        "admit 'intruder': its messages would get 401."
    )
    doc.pop("externalSecrets")
    with pytest.raises(SpecError) as caught:
        parse_cluster(doc)
    paths = [p.path for p in caught.value.problems]
    assert paths == [
        "agents[0].a2a.callers[0].tokenFrom.secretKeyRef.name",
        "agents[0].a2a.callers[1].tokenFrom.secretKeyRef.name",
    ]


def test_builtin_agents_are_probed_on_the_health_port(rendered: list[dict[str, Any]]) -> None:
    """Issue 49 §6: built-in agents rendered no probes; now readiness and liveness on the
    runtime's health port, never the callers' A2A port (a scheduled run has none)."""
    (deployment,) = [
        m for m in rendered if m["kind"] == "Deployment" and m["metadata"]["name"] == "reviewer"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"] == {
        "httpGet": {"path": "/readyz", "port": 9090},
        "periodSeconds": 10,
    }
    assert container["livenessProbe"] == {
        "httpGet": {"path": "/healthz", "port": 9090},
        "periodSeconds": 20,
        "failureThreshold": 3,
    }
    from langop_infra.agent._settings import DEFAULT_HEALTH_PORT

    assert DEFAULT_HEALTH_PORT == 9090  # what the runtime serves them on
