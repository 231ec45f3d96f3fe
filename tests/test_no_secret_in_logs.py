"""Canaries through the built-in runtime's and the CLI's channels (issue 49 §3): its logs at
DEBUG and INFO (httpx's request lines and uvicorn's included), the A2A reply to a model that
echoes the key, and the requests a peer's card may redirect. Every count of leaks is 0.

Before the fix the runtime logged httpx at INFO with full URLs (userinfo, query credentials of
a memory address held in a Secret), a model error reached the A2A caller as the model wrote
it, and ``PeerClient`` sent the peer's headers to whatever URL the peer's card named.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from langop_infra.agent._serve import main
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import Recorder, tool_app
from tests.support.loopback import serve
from tests.test_toolkit import CalculatorTool

MODEL_KEY = "sk-canary-model-key-0001"
MODEL_PASSWORD = "canary-model-pw"
MEMORY_PASSWORD = "canary-mem-pw"
MEMORY_QUERY = "canary-mem-query"


def leaks(text: str) -> int:
    """Occurrences of any canary (each holds ``canary``), whole or cut off."""
    return text.count("canary")


def runtime_env(root: Path, model_url: str, memory_url: str, level: str) -> dict[str, str]:
    host = model_url.removeprefix("http://")
    return {
        "PATH": "/usr/bin:/bin",
        "LANGOP_PATH_ROOT": str(root),
        "MODEL_ENDPOINT": f"http://model:{MODEL_PASSWORD}@{host}",
        "MODEL_API_KEY": MODEL_KEY,
        "LLM_MODEL": "m1",
        "AGENT_NAME": "helper",
        "AGENT_MODE": "scheduled",
        "AGENT_INPUT": "what is 2 + 2?",
        "AGENT_MEMORY_ENDPOINT": memory_url.replace("http://", f"http://mem:{MEMORY_PASSWORD}@")
        + f"/mcp?token={MEMORY_QUERY}",
        "LANGOP_LOG_LEVEL": level,
    }


@pytest.mark.parametrize("level", ["DEBUG", "INFO"])
def test_runtime_logs_carry_no_credential(level: str, tmp_path: Path) -> None:
    """A scheduled turn (the process, as a pod runs it) whose model URL has userinfo and
    whose memory address (as a Secret would hold it) has userinfo and a query token: the log
    shows the requests, masked. Before: 7 leaks a turn (httpx's INFO request lines)."""
    with serve(FakeOpenAI().app()) as model_url, serve(tool_app(CalculatorTool())) as memory:
        run = subprocess.run(
            [sys.executable, "-m", "langop_infra.agent", "serve"],
            env=runtime_env(tmp_path, model_url, memory, level),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    assert (leaks(run.stderr), leaks(run.stdout)) == (0, 0), run.stderr[-3000:]
    assert "memory tool memory__recall failed" in run.stderr  # the INFO channel carried lines
    if level == "DEBUG":
        requests = [line for line in run.stderr.splitlines() if "HTTP Request: POST" in line]
        assert len(requests) >= 3  # the memory server's and the model's, masked
        assert "http://[secret]@127.0.0.1" in requests[0]
        assert any("?token=[secret]" in line for line in requests)
    else:
        assert "HTTP Request" not in run.stderr


def test_a_bad_log_level_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"], {"LANGOP_LOG_LEVEL": "chatty"}) == 2
    assert capsys.readouterr().err == (
        "langop-agent: error: LANGOP_LOG_LEVEL='chatty': use one of DEBUG, INFO, WARNING, "
        "ERROR (default INFO)\n"
    )


def test_library_tracebacks_are_scrubbed_too(capsys: pytest.CaptureFixture[str]) -> None:
    """A record with a traceback (as uvicorn's "Exception in ASGI application", which the
    runtime lets propagate to the root) from any logger goes through the same formatter: the
    exception's URL is masked in the traceback."""
    from langop_infra.core._log_scrub import scrubbed_logging

    with scrubbed_logging("INFO"):
        try:
            raise RuntimeError(f"cannot reach http://u:{MEMORY_PASSWORD}@h/x?apikey={MEMORY_QUERY}")
        except RuntimeError:
            logging.getLogger("a2a.server").exception("Exception in ASGI application")
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert "RuntimeError: cannot reach http://[secret]@h/x?apikey=[secret]" in err
    assert leaks(err) == 0


def echoing_model() -> Starlette:
    """A model that refuses the key and quotes it back, as some providers do."""

    async def chat(request: Request) -> JSONResponse:
        key = request.headers.get("authorization", "")
        message = f"Incorrect API key provided: {key.removeprefix('Bearer ')}; sent {key}"
        return JSONResponse({"error": {"message": message, "key": key}}, status_code=401)

    return Starlette(routes=[Route("/chat/completions", chat, methods=["POST"])])


def test_a_model_error_reaches_the_a2a_caller_scrubbed() -> None:
    from langop_infra.agent._a2a_server import a2a_routes, build_app
    from langop_infra.agent._loop import AgentLoop
    from langop_infra.agent._metrics import RuntimeMetrics
    from langop_infra.agent._model_client import ChatModel

    class NoTools:
        def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
            return [], {}

        async def call_tool(self, name: str, arguments: Any = None) -> Any:
            raise AssertionError("no tool is called")

    metrics = RuntimeMetrics()
    with serve(echoing_model()) as model_url:
        loop = AgentLoop(ChatModel(model_url, "m", MODEL_KEY, 10, metrics), NoTools(), metrics)
        with serve(build_app(a2a_routes(None, "/", lambda: loop, "helper"))) as agent:
            reply = httpx.post(
                f"{agent}/",
                timeout=30,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "message/send",
                    "params": {
                        "message": {
                            "role": "user",
                            "messageId": "m-1",
                            "parts": [{"kind": "text", "text": "hi"}],
                        }
                    },
                },
            )
    # message/send answers with a Task: the error is in its status message and its artifact.
    task = reply.json()["result"]
    assert task["kind"] == "task" and task["status"]["state"] == "failed"
    (said,) = task["status"]["message"]["parts"]
    (artifact,) = task["artifacts"]
    data = artifact["parts"][1]["data"]
    assert leaks(reply.text) == 0  # the whole reply: status message, artifacts, history
    assert data["error"].startswith(f"the model at {model_url}/chat/completions answered HTTP 401")
    assert "Incorrect API key provided: [secret]" in data["error"]
    assert said["text"] == artifact["parts"][0]["text"] == f"I could not finish: {data['error']}"


def test_peer_headers_go_only_to_the_configured_origin() -> None:
    """The peer's card names a ``message/send`` URL on another origin: that origin gets the
    request without the peer's credential; the configured origin got it with its card."""
    from langop_infra.agent._a2a_client import PeerClient
    from langop_infra.agent._settings import Peer

    elsewhere = Recorder(Starlette(routes=[Route("/", _jsonrpc_reply, methods=["POST"])]))
    with serve(elsewhere, host="127.0.0.2") as other:
        card_app = Recorder(Starlette(routes=[Route(_CARD, _card(f"{other}/"), methods=["GET"])]))
        with serve(card_app) as configured:
            peer = Peer("reviewer", f"{configured}/", headers={"Authorization": "Bearer canary-1"})
            reply = asyncio.run(PeerClient([peer], timeout=30).send("reviewer", "hi"))
    assert reply.text == "from elsewhere"
    assert [r.get("authorization") for r in card_app.requests] == ["Bearer canary-1"]
    assert [r.get("authorization") for r in elsewhere.requests] == [None]


_CARD = "/.well-known/agent-card.json"


def _card(url: str) -> Any:
    async def card(_request: Request) -> JSONResponse:
        return JSONResponse(
            {
                "name": "reviewer",
                "description": "reviews",
                "url": url,
                "protocolVersion": "0.3.0",
                "preferredTransport": "JSONRPC",
                "version": "1",
                "capabilities": {"streaming": False},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [{"id": "a", "name": "A", "description": "a", "tags": ["t"]}],
            }
        )

    return card


async def _jsonrpc_reply(request: Request) -> JSONResponse:
    body = await request.json()
    message = {
        "kind": "message",
        "role": "agent",
        "messageId": "r-1",
        "contextId": "c-1",
        "parts": [{"kind": "text", "text": "from elsewhere"}],
    }
    return JSONResponse({"jsonrpc": "2.0", "id": body["id"], "result": message})


@pytest.mark.parametrize("level", ["DEBUG", "INFO"])
def test_cli_logs_carry_no_credential(level: str, tmp_path: Path) -> None:
    """``langop-infra tools URL`` against a loopback MCP server whose URL holds userinfo
    and an API key: at DEBUG the request lines are logged, masked; at INFO none."""
    with serve(tool_app(CalculatorTool())) as base:
        url = (
            base.replace("http://", f"http://u:{MEMORY_PASSWORD}@") + f"/mcp?apikey={MEMORY_QUERY}"
        )
        run = subprocess.run(
            [sys.executable, "-m", "langop_infra", "tools", url, "--json"],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANGOP_LOG_LEVEL": level},
            timeout=120,
        )
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout)
    assert (leaks(run.stderr), leaks(run.stdout)) == (0, 0), run.stderr[-3000:]
    requests = [line for line in run.stderr.splitlines() if "HTTP Request: POST" in line]
    if level == "DEBUG":
        assert requests and all("http://[secret]@127.0.0.1" in line for line in requests)
        assert all("apikey=[secret]" in line for line in requests)
    else:
        assert requests == []
