"""``python -m langop_infra.agent serve`` as a process and in-process: the probes, the
fallback card, JSON-RPC ``message/send`` on the wire, readiness that waits for a required
tool, bad settings (exit 2), and scheduled mode's failures (exit 1 with a JSON line)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from langop_infra.agent._serve import main, run_scheduled
from langop_infra.agent._settings import load_settings
from tests.fake_openai import FakeOpenAI
from tests.support.agent_parts import tool_app
from tests.support.kubelet import loopback_ip
from tests.support.loopback import free_port, serve
from tests.support.startup import HUNG_AFTER, until_ready
from tests.test_toolkit import CalculatorTool

CALLER_TOKEN = "planner-token-0123456789abcdef"


def agent_env(root: Path, model_url: str, **extra: str) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "LANGOP_PATH_ROOT": str(root),
        "MODEL_ENDPOINT": model_url,
        "LLM_MODEL": "m1,m2",
        "AGENT_NAME": "helper",
        **extra,
    }


def write_config(root: Path, document: dict[str, Any]) -> None:
    path = root / "etc" / "agent" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document))


def test_settings_read_the_rendered_contract(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        {
            "agent": {"name": "helper", "maxIterations": 4},
            "tools": {
                "memory": {"endpoint": "http://m", "required": True},
                "files": {"endpoint": "http://f"},
            },
        },
    )
    env = agent_env(
        tmp_path,
        "http://gw:8000/",
        AGENT_SYSTEM_PROMPT="Be brief.",
        AGENT_PERSONA="Tone: calm.",
        MODEL_API_KEY="sk-1",
    )
    settings = load_settings(env)
    assert (settings.model_endpoint, settings.model, settings.api_key) == (
        "http://gw:8000",
        "m1",
        "sk-1",
    )
    assert settings.system_prompt == "Be brief.\n\nTone: calm."
    assert (settings.max_iterations, settings.required_tools) == (4, ("memory",))
    assert settings.card_path == tmp_path / "etc/agent/a2a/agent-card.json"
    assert "sk-1" not in repr(settings)


def test_memory_is_scoped_to_the_conversation_unless_shared(tmp_path: Path) -> None:
    from langop_infra.agent._settings import SettingsError

    env = agent_env(tmp_path, "http://gw:8000")
    write_config(tmp_path, {"memory": {"name": "notes"}})
    assert (load_settings(env).memory_tool, load_settings(env).memory_shared) == ("notes", False)
    write_config(tmp_path, {"memory": {"name": "notes", "scope": "shared"}})
    assert load_settings(env).memory_shared is True
    with pytest.raises(
        SettingsError, match=r"memory scope 'everyone' .*: expected conversation or shared"
    ):
        load_settings({**env, "AGENT_MEMORY_SCOPE": "everyone"})


def test_bad_settings_exit_2_naming_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve"], {"AGENT_MODE": "scheduled"}) == 2
    assert capsys.readouterr().err.startswith(
        "langop-agent: error: the agent has no model: MODEL_ENDPOINT and LLM_MODEL"
    )
    assert (
        main(
            ["serve"], {"MODEL_ENDPOINT": "http://x", "LLM_MODEL": "m", "AGENT_MAX_ITERATIONS": "0"}
        )
        == 2
    )
    assert "AGENT_MAX_ITERATIONS='0': must be at least 1" in capsys.readouterr().err


def test_scheduled_without_input_or_model_fails_with_a_json_line(tmp_path: Path) -> None:
    out = io.StringIO()
    env = agent_env(tmp_path, f"http://127.0.0.1:{free_port()}", AGENT_MODE="scheduled")
    assert asyncio.run(run_scheduled(env, out)) == 1
    assert json.loads(out.getvalue())["error"] == (
        "AGENT_MODE=scheduled needs AGENT_INPUT (the prompt)"
    )
    out = io.StringIO()
    assert asyncio.run(run_scheduled({**env, "AGENT_INPUT": "hi"}, out)) == 1
    (line,) = [json.loads(x) for x in out.getvalue().splitlines()]
    assert line["type"] == "answer" and "cannot be reached" in line["error"]


@pytest.mark.slow
def test_serve_probes_card_message_send_and_readiness(tmp_path: Path) -> None:
    tool_port, ip, port, health_port = free_port(), loopback_ip(), 8080, 9090
    write_config(
        tmp_path,
        {
            "tools": {
                "calc": {
                    "endpoint": f"http://127.0.0.1:{tool_port}",
                    "protocol": "mcp",
                    "required": True,
                }
            }
        },
    )
    fake = FakeOpenAI()
    with serve(fake.app()) as model_url:
        env = agent_env(
            tmp_path,
            model_url,
            A2A_HOST=ip,
            A2A_PORT=str(port),
            A2A_HEALTH_PORT=str(health_port),
            A2A_CALLER_PLANNER_TOKEN=CALLER_TOKEN,
        )
        process = subprocess.Popen(
            [sys.executable, "-m", "langop_infra.agent", "serve"],
            env=env,
            stderr=(tmp_path / "log").open("wb"),
        )
        base, service = f"http://{ip}:{port}", f"http://{ip}:{health_port}"
        try:
            health = _wait(f"{service}/healthz", process, tmp_path)
            not_ready = httpx.get(f"{service}/readyz")
            card = httpx.get(f"{base}/.well-known/agent-card.json").json()
            probes_on_a2a = [httpx.get(f"{base}{p}").status_code for p in ("/healthz", "/metrics")]
            refused = httpx.post(f"{base}/", json={"jsonrpc": "2.0", "id": 1})
            sent = httpx.post(
                f"{base}/",
                timeout=30,
                headers={"Authorization": f"Bearer {CALLER_TOKEN}"},
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
            ).json()
            with serve(tool_app(CalculatorTool()), port=tool_port):
                ready = _poll(f"{service}/readyz", process, tmp_path)
        finally:
            process.terminate()
            process.wait(timeout=20)
    assert health.json() == {"status": "ok"}
    assert probes_on_a2a == [401, 401]  # the A2A port serves callers, not probes
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == (
        'Bearer realm="a2a"'
    )
    assert (not_ready.status_code, not_ready.json()) == (
        503,
        {"status": "not ready", "waiting_for": ["calc"]},
    )
    assert (card["name"], card["url"], card["protocolVersion"]) == ("helper", f"{base}/", "0.3.0")
    assert card["supportedInterfaces"] == [
        {"url": f"{base}/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
    ]
    assert card["capabilities"] == {"streaming": True}
    task = sent["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    parts = task["artifacts"][0]["parts"]
    assert parts[0] == {"kind": "text", "text": "hello from m1"}
    assert parts[1]["data"]["steps"] == [] and parts[1]["data"]["error"] is None
    assert ready == {"status": "ready"}
    assert fake.models_asked() == ["m1"]


def _wait(url: str, process: subprocess.Popen[bytes], root: Path) -> httpx.Response:
    """The first answer of ``url``: the server is up (bounded only against a hung run)."""

    def probe() -> httpx.Response | None:
        try:
            return httpx.get(url, timeout=HUNG_AFTER)
        except httpx.TransportError:
            return None

    return until_ready(probe, process, lambda: (root / "log").read_text())


def _poll(url: str, process: subprocess.Popen[bytes], root: Path) -> Any:
    """``url``'s body once it answers 200 (the agent connected its tools)."""

    def probe() -> Any:
        answer = httpx.get(url, timeout=HUNG_AFTER)
        return answer.json() if answer.status_code == 200 else None

    return until_ready(probe, process, lambda: (root / "log").read_text())


def test_peer_client_sends_the_peers_headers_and_reads_the_reply(tmp_path: Path) -> None:
    """The A2A client on a2a-sdk against this runtime's A2A routes (in-process, on loopback),
    the peer's header from its env variable; a secret header never shows in a repr."""
    from langop_infra.agent._a2a_client import A2AClientError, PeerClient
    from langop_infra.agent._a2a_server import a2a_routes, build_app
    from langop_infra.agent._loop import AgentLoop
    from langop_infra.agent._metrics import RuntimeMetrics
    from langop_infra.agent._model_client import ChatModel
    from langop_infra.agent._settings import load_peers
    from tests.support.agent_parts import Recorder

    class NoTools:
        def llm_definitions(self, format: Any) -> tuple[list[Any], dict[str, str]]:
            return [], {}

        async def call_tool(self, name: str, arguments: Any = None) -> Any:
            raise AssertionError("no tool is called")

    fake, metrics = FakeOpenAI(), RuntimeMetrics()
    with serve(fake.app()) as model_url:
        loop = AgentLoop(ChatModel(model_url, "peer-model", None, 10, metrics), NoTools(), metrics)
        recorder = Recorder(build_app(a2a_routes(None, "/rpc", lambda: loop, "reviewer")))
        with serve(recorder) as peer_url:
            peers = load_peers(
                {
                    "A2A_PEERS": json.dumps([{"name": "reviewer", "url": f"{peer_url}/rpc"}]),
                    "A2A_PEER_REVIEWER_HEADER_AUTHORIZATION": "Bearer peer-canary",
                }
            )
            reply = asyncio.run(PeerClient(peers, timeout=30).send("reviewer", "check this"))
            with pytest.raises(A2AClientError, match="no A2A peer named 'nobody'"):
                asyncio.run(PeerClient(peers).send("nobody", "hi"))
    assert reply.text == "hello from peer-model"
    assert reply.data[0]["answer"] == "hello from peer-model"
    # An int sent in a data part is an int again, not the protobuf double (issue 51 §5).
    assert (reply.data[0]["iterations"], type(reply.data[0]["iterations"])) == (1, int)
    assert len(recorder.requests) == 2  # the card, then message/send
    assert all(r["authorization"] == "Bearer peer-canary" for r in recorder.requests)
    assert "peer-canary" not in repr(peers)


def test_pulumi_and_the_a2a_runtime_share_a_process() -> None:
    """a2a-sdk's gRPC parts and Pulumi's SDK define the same protobuf symbol; the runtime
    keeps the gRPC parts out, so a test run (or a program) may import both, in either order."""
    for first, second in (
        ("pulumi.provider", "langop_infra.agent._a2a_client"),
        ("langop_infra.agent._a2a_server", "pulumi.provider"),
    ):
        code = f"import {first}; import {second}; import langop_infra.agent._a2a_server"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[-2000:]


def test_every_unusable_tool_server_is_logged_with_its_reason_and_no_credential(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that refuses the connection (its URL and header carry canaries) and one whose
    header needs an unset variable: each is one warning naming it and why, credential-free."""
    from langop_infra.agent._serve import start_runtime

    port = free_port()
    down = f"http://agent:canary-pass@127.0.0.1:{port}/?token=canary-query"
    write_config(
        tmp_path,
        {
            "tools": {
                "geo": {
                    "endpoint": down,
                    "headers": [{"name": "Authorization", "value": "Bearer canary-header"}],
                },
                "calc": {
                    "endpoint": "http://127.0.0.1:9/",
                    "headers": [{"name": "X-Key", "valueFromEnv": "CALC_KEY"}],
                },
            }
        },
    )
    env = agent_env(tmp_path, "http://127.0.0.1:9")

    async def start() -> None:
        runtime = await start_runtime(env, wait=True)
        await runtime.aclose()

    with caplog.at_level(logging.INFO, logger="langop_infra.agent"):
        asyncio.run(start())
    unusable = [r.getMessage() for r in caplog.records if "unusable" in r.getMessage()]
    assert [line.split(":")[0:2] for line in unusable] == [
        ["tool server unusable", " calc"],
        ["tool server unusable", " geo"],
    ]
    assert unusable[0].endswith(
        "tools.calc.headers.X-Key: environment variable CALC_KEY is not set [config]"
    )
    assert unusable[1] == (
        f"tool server unusable: geo: connection refused by http://127.0.0.1:{port}/ (tried 4 "
        "times): is the server running on that port? [unreachable]"
    )
    assert "canary" not in caplog.text
