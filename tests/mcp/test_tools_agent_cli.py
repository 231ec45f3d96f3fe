"""``langop-infra tools call --agent-config`` and ``tools --agent-config --format``: any tool of
an agent's registry, HTTP or MCP, called from the command line with the agent's env."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.agent._naming import LLM_NAME
from langop_infra.cli.main import main
from tests.mcp.test_http_tools import PAYMENT_SCHEMA, Recorder
from tests.support.loopback import serve

SECRET = "cli-canary-5e1b"


@pytest.fixture(scope="module")
def api() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder()
    recorder.static_tokens = frozenset({SECRET})  # the bearer token its /echo accepts
    with serve(recorder.app()) as base:
        yield base, recorder


@pytest.fixture
def config(tmp_path: Path, api: tuple[str, Recorder], json_url: str) -> Path:
    document = {
        "mcpServers": [{"name": "notes", "url": json_url}],
        "webhookTools": [
            {
                "name": "create_payment",
                "description": "Create a new payment transaction",
                "url": f"{api[0]}/echo",
                "inputSchema": PAYMENT_SCHEMA,
                "authentication": {
                    "type": "bearer",
                    "headerName": "Authorization",
                    "valueFromEnv": "AGENT_WEBHOOK_CREATE_PAYMENT_AUTH",
                },
            }
        ],
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_call_an_http_tool_with_the_agents_env(
    config: Path,
    api: tuple[str, Recorder],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT_WEBHOOK_CREATE_PAYMENT_AUTH", SECRET)
    monkeypatch.delenv("MCP_SERVERS", raising=False)
    api[1].requests.clear()
    code, out, err = run(
        capsys,
        "call",
        "--agent-config",
        str(config),
        "create_payment",
        "--arguments",
        '{"amount": 12, "recipient": "acct-1"}',
    )
    assert (code, err) == (0, "")
    assert json.loads(out)["body"] == {"amount": 12, "recipient": "acct-1"}
    assert api[1].requests[-1].headers["authorization"] == f"Bearer {SECRET}"

    code, out, err = run(
        capsys,
        "call",
        "--agent-config",
        str(config),
        "create_payment",
        "--arguments",
        '{"amount": 12}',
    )
    assert (code, out) == (1, "")
    assert err.strip() == (
        "tool create_payment: invalid arguments: (root): 'recipient' is a required property"
    )
    assert SECRET not in out + err


def test_call_an_mcp_tool_as_json(
    config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_WEBHOOK_CREATE_PAYMENT_AUTH", SECRET)
    monkeypatch.delenv("MCP_SERVERS", raising=False)
    code, out, _ = run(
        capsys,
        "call",
        "--agent-config",
        str(config),
        "notes__add",
        "--arguments",
        '{"a": 2, "b": 40}',
        "-o",
        "json",
    )
    assert code == 0
    assert json.loads(out) == {
        "content": [{"type": "text", "text": "42"}],
        "isError": False,
        "structuredContent": {"result": 42},
    }


def test_usage_errors(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "call", "--agent-config", str(config), "x", "--arguments", "[1]")
    assert (code, err.strip()) == (
        2,
        "langop-infra tools: error: --arguments must be a JSON object",
    )
    code, _, err = run(capsys, "call", "--agent-config", str(config), "--arguments", "{")
    assert code == 2 and "needs exactly one tool NAME" in err


@pytest.mark.parametrize("api_format", ["openai", "anthropic"])
def test_format_prints_valid_names_and_the_map_back(
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    api_format: str,
) -> None:
    monkeypatch.setenv("AGENT_WEBHOOK_CREATE_PAYMENT_AUTH", SECRET)
    monkeypatch.delenv("MCP_SERVERS", raising=False)
    code, out, _ = run(
        capsys, "--agent-config", str(config), "--naming", "mcp", "--format", api_format
    )
    assert code == 0
    document: dict[str, Any] = json.loads(out)
    names = [
        t["function"]["name"] if api_format == "openai" else t["name"] for t in document["tools"]
    ]
    assert all(LLM_NAME.fullmatch(n) for n in names)
    assert document["names"]["mcp_notes_add"] == "mcp:notes:add"
    assert document["names"]["http_create_payment"] == "http:create_payment"
    assert sorted(document["names"]) == sorted(names)
