"""Agents that delegate to each other, as real processes: agent A (``runtime: builtin``)
offers its peer B to its model as a tool; B answers with an MCP tool (the official ``mcp``
SDK on loopback); A's answer carries B's result. Two agents that call each other (A → B → A
...) are stopped by the hop limit carried in the request metadata. Each agent's model is a
scripted OpenAI-compatible fake (tests/fake_openai.py): no real model runs here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import PopulationTool, call, named, tool_app, tool_results
from tests.support.agent_process import agent_process
from tests.support.loopback import free_port, serve

pytestmark = pytest.mark.slow
QUESTION = "How many people live in Lyon?"
A = "a-caller-token-0123456789abcdef"  # the token A calls B with


def env_of(name: str, model_url: str, port: int, **extra: str) -> dict[str, str]:
    """An agent on loopback that admits any caller (A2A is authenticated-only unless asked),
    its probes on a port of its own (the default 9090 is one for all the agents here)."""
    return {
        "MODEL_ENDPOINT": model_url,
        "LLM_MODEL": f"{name}-model",
        "AGENT_NAME": name,
        "A2A_HOST": "127.0.0.1",
        "A2A_PORT": str(port),
        "A2A_ACCESS": "open",
        "A2A_HEALTH_PORT": str(free_port()),
        **extra,
    }


def peers(**urls: int) -> str:
    return json.dumps([{"name": n, "url": f"http://127.0.0.1:{p}/"} for n, p in urls.items()])


def ask(port: int, text: str) -> str:
    """``message/send`` (A2A 0.3) to the agent on ``port``; the answer: the text of the
    completed Task's artifact."""
    sent = httpx.post(
        f"http://127.0.0.1:{port}/",
        timeout=120,
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "message/send",
            "params": {
                "message": {
                    "role": "user",
                    "messageId": "m-1",
                    "parts": [{"kind": "text", "text": text}],
                }
            },
        },
    )
    task = sent.json()["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "completed"), task
    return task["artifacts"][0]["parts"][0]["text"]


def delegating(peer: str) -> Any:
    """A's script: ask ``peer`` the user's question, then answer with what it said."""

    def script(body: dict[str, Any]) -> dict[str, Any]:
        results = tool_results(body)
        if not results:
            question = body["messages"][-1]["content"]
            return call(named(body, f"peer__{peer}"), message=question)
        said = results[0]["answer"] if isinstance(results[0], dict) else results[0]
        return {"role": "assistant", "content": f"{peer} says: {said}"}

    return script


def using_the_population_tool(body: dict[str, Any]) -> dict[str, Any]:
    results = tool_results(body)
    if not results:
        return call(named(body, "population"), city="Lyon")
    return {"role": "assistant", "content": f"Lyon has {results[0]['population']} people."}


def test_a_delegates_to_b_which_uses_an_mcp_tool(tmp_path: Path) -> None:
    a_port, b_port = free_port(), free_port()
    model_a, model_b = (
        FakeOpenAI(script=delegating("b")),
        FakeOpenAI(script=using_the_population_tool),
    )
    with (
        serve(tool_app(PopulationTool())) as geo,
        serve(model_a.app()) as a_model_url,
        serve(model_b.app()) as b_model_url,
        agent_process(  # B admits A alone, by its caller token
            tmp_path / "b",
            env_of("b", b_model_url, b_port, A2A_ACCESS="authenticated", A2A_CALLER_A_TOKEN=A),
            {"tools": {"geo": {"endpoint": geo, "protocol": "mcp"}}},
            waits_for=["tool server geo connected: 1 tools"],
        ),
        agent_process(
            tmp_path / "a",
            env_of("a", a_model_url, a_port, A2A_PEERS=peers(b=b_port), A2A_PEER_B_TOKEN=A),
            {},
        ),
    ):
        answer = ask(a_port, QUESTION)
        stranger = httpx.post(f"http://127.0.0.1:{b_port}/", json={"jsonrpc": "2.0"}, timeout=30)
    assert answer == "b says: Lyon has 522250 people."
    assert stranger.status_code == 401
    first_a = model_a.requests[0]["body"]
    offered = {t["function"]["name"]: t["function"] for t in first_a["tools"]}
    assert offered["peer__b"]["description"].startswith("Ask the agent b (over A2A)")
    asked_b = model_b.requests[0]["body"]["messages"][-1]
    assert asked_b == {"role": "user", "content": QUESTION}
    assert tool_results(model_b.requests[1]["body"])[0]["population"] == 522250


def test_agents_that_call_each_other_stop_at_the_hop_limit(tmp_path: Path) -> None:
    a_port, b_port = free_port(), free_port()
    model_a, model_b = FakeOpenAI(script=delegating("b")), FakeOpenAI(script=delegating("a"))
    hops = {"A2A_MAX_HOPS": "2"}
    with (
        serve(model_a.app()) as a_model_url,
        serve(model_b.app()) as b_model_url,
        agent_process(
            tmp_path / "b", env_of("b", b_model_url, b_port, A2A_PEERS=peers(a=a_port), **hops), {}
        ),
        agent_process(
            tmp_path / "a", env_of("a", a_model_url, a_port, A2A_PEERS=peers(b=b_port), **hops), {}
        ),
    ):
        answer = ask(a_port, QUESTION)
    refused = (
        "peer b was not called: this request has passed through 2 agents, the hop limit "
        "(A2A_MAX_HOPS=2); answer with what you have"
    )
    # the innermost A is refused, and each agent on the way back says who answered it
    assert answer == f"b says: a says: b says: {refused}"
    # A answered twice (the user, then B), B once: three turns of two model calls each
    assert (len(model_a.requests), len(model_b.requests)) == (4, 2)
