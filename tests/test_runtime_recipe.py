"""docs/runtime.md's "Run it on your machine" (issue 51 §6), run as written against an
OpenAI-compatible endpoint (a scripted one on loopback) with an MCP tool server: only the
endpoint, the venv's interpreter and the port are put in; no sample names a private module."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.fake_openai import FakeOpenAI
from tests.faultservers import memory_server
from tests.support.loopback import serve
from tests.support.startup import HUNG_AFTER, until_ready

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "runtime.md"


def section() -> str:
    text = PAGE.read_text()
    return text.split("## Run it on your machine", 1)[1].split("\n## ", 1)[0]


def blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", section(), re.S)


def as_here(block: str, model_url: str, tools_url: str, port: int, health: int = 0) -> str:
    """The block with this machine's endpoint, interpreter and ports (A2A, health); the
    install left out (the package is installed here)."""
    lines = [line for line in block.splitlines() if "pip install" not in line]
    text = "\n".join(lines) + "\n"
    text = text.replace("http://localhost:11434/v1", f"{model_url}/v1")
    text = text.replace("http://localhost:8080/mcp", tools_url)
    text = text.replace("venv/bin/python", sys.executable)
    return text.replace("8099", str(port)).replace("8098", str(health))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_recipe_names_public_things_only() -> None:
    assert len(blocks()) == 2
    assert not re.search(r"langop_infra(\.\w+)*\._", section())
    assert "python -m langop_infra.agent serve" in blocks()[0]


def exports(block: str) -> dict[str, str]:
    """``export NAME=value`` lines of a block, comments left out."""
    found = re.findall(r"^export (\w+)=(\S+)", block, re.M)
    return dict(found)


def wait_until_serving(url: str, server: subprocess.Popen[str]) -> None:
    """Until ``url`` answers 200 (the runtime's own readiness), bounded by ``HUNG_AFTER``."""

    def probe() -> bool | None:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url, timeout=HUNG_AFTER).status_code == 200:
                return True
        return None

    def describe() -> str:
        if server.poll() is None:
            return f"{url} never answered 200"
        return server.communicate()[1][-3000:]

    until_ready(probe, server, describe)


@pytest.mark.slow
def test_the_recipe_runs_a_turn_and_serves_a2a(tmp_path: Path) -> None:
    fake = FakeOpenAI()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "LLM_", "A2A_"))}
    first, second = blocks()
    with serve(fake.app()) as model_url, serve(memory_server().streamable_http_app()) as tools:
        port, health = free_port(), free_port()
        once = subprocess.run(
            ["bash", "-c", as_here(first, model_url, f"{tools}/mcp", port)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert once.returncode == 0, once.stderr[-3000:]
        answer = json.loads(once.stdout.splitlines()[-1])
        assert (answer["type"], answer["answer"]) == ("answer", "hello from llama3.1")
        # The second block in the first one's environment, as a reader runs them in turn.
        exported = {**env, **exports(as_here(first, model_url, f"{tools}/mcp", port))}
        start, send = as_here(second, model_url, f"{tools}/mcp", port, health).split("\n", 1)
        with subprocess.Popen(
            ["bash", "-c", start.removesuffix(" &")],
            cwd=tmp_path,
            env=exported,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        ) as server:
            try:
                # ready once the runtime started: the probes are on the health port
                wait_until_serving(f"http://127.0.0.1:{health}/readyz", server)
                sent = subprocess.run(
                    ["bash", "-c", send], cwd=tmp_path, capture_output=True, text=True, timeout=120
                )
            finally:
                server.terminate()
                server.communicate(timeout=60)
    assert "8098" in second and "A2A_ACCESS=open" in second  # a local run admits the curl
    task = json.loads(sent.stdout)["result"]
    assert (task["kind"], task["status"]["state"]) == ("task", "completed")
    [answer_artifact] = task["artifacts"]
    assert answer_artifact["name"] == "answer"
    [text, data] = answer_artifact["parts"]
    assert text == {"kind": "text", "text": "hello from llama3.1"}
    assert data["data"]["answer"] == "hello from llama3.1"
    assert {r["model"] for r in fake.requests} == {"llama3.1"}
    assert all(r["authorization"] == "Bearer sk-your-key" for r in fake.requests)
