"""``langop-infra tools``: tables, JSON, stdio, agent configs, errors and exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.cli.main import main
from tests.support.startup import HUNG_AFTER

SDK_TOOLS = {"add", "echo", "fail", "chatty", "polled"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_of_a_streamable_http_server(
    capsys: pytest.CaptureFixture[str], stateful_url: str
) -> None:
    code, out, err = run(capsys, stateful_url)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "TITLE", "REQUIRED", "DESCRIPTION"]
    add = next(line for line in lines if line.startswith("add "))
    assert add.split("  ")[0] == "add"
    assert "Add numbers" in add and "a, b" in add and "Add two integers." in add
    echo = next(line for line in lines if line.startswith("echo "))
    assert " text " in echo and "repeat" not in echo  # only required fields are listed
    assert lines[-1] == "5 tools from sdk-stateful 1.0.0 (streamable-http, protocol 2026-07-28)"


def test_url_without_a_path_gets_mcp(capsys: pytest.CaptureFixture[str], json_url: str) -> None:
    code, out, _ = run(capsys, json_url.removesuffix("/mcp"), "-o", "json")
    assert code == 0
    document = json.loads(out)
    assert document["protocolVersion"] == "2026-07-28"
    assert document["server"] == {"name": "sdk-json", "version": "1.0.0"}
    assert document["transport"] == "streamable-http"
    tools = document["tools"]
    assert {tool["name"] for tool in tools} == SDK_TOOLS
    assert next(t for t in tools if t["name"] == "add")["inputSchema"]["required"] == ["a", "b"]


def test_legacy_sse_server(capsys: pytest.CaptureFixture[str], legacy_sse_url: str) -> None:
    code, out, _ = run(capsys, legacy_sse_url, "--timeout", "5")
    assert code == 0
    assert out.splitlines()[-1] == "5 tools from sdk-legacy 1.0.0 (sse, protocol 2025-11-25)"


def test_stdio_server(capsys: pytest.CaptureFixture[str], stdio_command: list[str]) -> None:
    # The server's start-up is part of the first request: the timeout only ends a hung run.
    guard = str(HUNG_AFTER)
    code, out, err = run(
        capsys, "--transport", "stdio", "--timeout", guard, "-o", "json", "--", *stdio_command
    )
    assert (code, err) == (0, "")
    assert {tool["name"] for tool in json.loads(out)["tools"]} == SDK_TOOLS


def test_protocol_flag_pins_the_version(
    capsys: pytest.CaptureFixture[str], stateful_url: str
) -> None:
    code, out, _ = run(capsys, stateful_url, "-o", "json", "--protocol", "2025-11-25")
    assert code == 0
    assert json.loads(out)["protocolVersion"] == "2025-11-25"
    with pytest.raises(SystemExit) as usage:
        run(capsys, stateful_url, "--protocol", "1999-01-01")
    assert usage.value.code == 2
    assert "invalid choice: '1999-01-01'" in capsys.readouterr().err


def test_headers_are_sent(
    capsys: pytest.CaptureFixture[str], fault_server: tuple[str, Any]
) -> None:
    base, _ = fault_server
    code, out, err = run(capsys, f"{base}/auth", "--header", "Authorization: Bearer right-token")
    assert (code, err) == (0, "")
    assert "only" in out
    code, out, err = run(capsys, f"{base}/auth")
    assert (code, out) == (1, "")
    assert err.count("\n") == 1
    # The first request is server/discover; a 401 there is not a reason to fall back.
    assert err.startswith(
        f"langop-infra tools: error: {base}/auth refused server/discover with HTTP 401 Unauthorized"
    )
    assert "credentials are missing or wrong" in err


def test_unreachable_server_exits_1_with_one_line(
    capsys: pytest.CaptureFixture[str], free_port: int
) -> None:
    code, out, err = run(capsys, f"http://127.0.0.1:{free_port}", "--timeout", "1")
    assert (code, out) == (1, "")
    assert err.startswith(
        f"langop-infra tools: error: connection refused by http://127.0.0.1:{free_port}/mcp"
    )
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["http://x/mcp", "--header", "NoColon"], "is not 'Name: value'"),
        (["localhost:8080"], "is not an http(s) URL"),
        ([], "give a URL"),
        (["http://x/mcp", "--timeout", "0"], "--timeout must be a positive number"),
        (["--agent-config", "c.yaml", "http://x/mcp"], "not both"),
        (["--transport", "sse", "--", "python", "server.py"], "needs --transport stdio"),
    ],
)
def test_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert message in err


@pytest.mark.slow
def test_agent_config_lists_the_merged_registry(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    stateful_url: str,
    seed_url: str,
    free_port: int,
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "tools": {
                    "memory": {"endpoint": seed_url.removesuffix("/mcp"), "protocol": "mcp"},
                    "dead": {"endpoint": f"http://127.0.0.1:{free_port}", "protocol": "mcp"},
                }
            }
        )
    )
    monkeypatch.setenv("MCP_SERVERS", stateful_url.removesuffix("/mcp"))
    code, out, err = run(capsys, "--agent-config", str(config), "--timeout", "2")
    assert code == 0
    stateful_name = "127-0-0-1-" + stateful_url.removesuffix("/mcp").rsplit(":", 1)[1]
    names = [line.split()[0] for line in out.splitlines()[1:] if line.strip()][:-1]
    assert set(names) == {"memory__remember", "memory__recall"} | {
        f"{stateful_name}__{tool}" for tool in SDK_TOOLS
    }
    assert out.splitlines()[-1] == "7 tools from 2 of 3 servers"
    assert err.startswith("skipped server dead (unreachable): connection refused by")

    code, out, err = run(capsys, "--agent-config", str(config), "-o", "json", "--naming", "mcp")
    assert code == 0
    document = json.loads(out)
    assert "mcp:memory:remember" in {tool["name"] for tool in document["tools"]}
    assert [failure["name"] for failure in document["failures"]] == ["dead"]


def test_agent_config_with_every_server_down_fails(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    free_port: int,
) -> None:
    monkeypatch.setenv("MCP_SERVERS", f"http://127.0.0.1:{free_port}")
    config = tmp_path / "config.yaml"
    config.write_text("tools: {}\n")
    code, _, err = run(capsys, "--agent-config", str(config))
    assert code == 1
    assert "skipped server 127-0-0-1-" in err
    code, _, err = run(capsys, "--agent-config", str(tmp_path / "nope.yaml"))
    assert code == 1
    assert err.startswith("langop-infra tools: error: cannot read agent config")


def test_help_does_not_import_httpx() -> None:
    import subprocess

    probe = (
        "import sys\n"
        "from langop_infra.cli import main\n"
        "try:\n    main(['tools', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('httpx' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert "--agent-config" in done.stdout
    assert done.stdout.strip().endswith("False")
