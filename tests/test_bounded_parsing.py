"""What tools and pull requests send is parsed within bounds (issue 28, section 2).

- deep JSON from a tool: refused by the MCP client's decoder, and hashing or comparing a deep
  value is refused without recursion, inside the provider's error handling;
- YAML a pull request can change (the schema lock, an agent's config.yaml, a kubeconfig, diff
  inputs) goes through the bounded loader of stack files: alias bombs, depth, duplicate keys;
- an integer over Python's digit limit in a stack file is a config error naming the field.

Memory-heavy checks run in a child process under an address-space limit
(``resource.setrlimit``), so a regression fails the test instead of taking the machine down.
The deep-JSON tool is a stand-in (``tests/faultservers.ScriptedEndpoint``): the official SDK
cannot serve a schema that deep.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from langop_infra.cli.main import main
from langop_infra.mcp import MalformedResponse, ToolListing
from langop_infra.mcp._jsonrpc import decode
from langop_infra.sync import provider
from langop_infra.sync._compare import SchemaTooDeep, compare_tools, schema_hash
from langop_infra.sync._lock import LockError, parse_lock
from langop_infra.sync.provider import ToolSchemaSyncProvider
from tests.faultservers import ScriptedEndpoint, parse_message, read_body, respond
from tests.support.loopback import serve
from tests.support.provider_host import EngineHost, ProviderFailure, service_inputs

PROJECT_DIR = Path(__file__).resolve().parents[1]
MEMORY_LIMIT = 1 << 30  # bytes of address space for a child process


def deep_schema(levels: int) -> str:
    """A JSON Schema nested ``levels`` objects deep, built as text (no recursion)."""
    return '{"type":"object","properties":{"a":' * levels + "{}" + "}}" * levels


def deep_listing_body(levels: int, request_id: int = 2) -> bytes:
    tool = f'{{"name":"deep","inputSchema":{deep_schema(levels)}}}'
    return f'{{"jsonrpc":"2.0","id":{request_id},"result":{{"tools":[{tool}]}}}}'.encode()


def deep_value(levels: int) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return root


def deep_server(levels: int) -> Any:
    """A STAND-IN MCP server (``ScriptedEndpoint``, answering the handshake correctly) whose
    ``tools/list`` answer nests a schema ``levels`` deep: no real server sends that, and the
    official SDK's own encoder gives up near 200 levels."""
    endpoint = ScriptedEndpoint()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            body = await read_body(receive)
            message = parse_message(body)
            if message.get("method") == "tools/list":
                await respond(send, 200, deep_listing_body(levels, message["id"]))
                return
            replay_sent = False

            async def replay() -> dict[str, Any]:
                nonlocal replay_sent
                if replay_sent:
                    return await receive()
                replay_sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            await endpoint(scope, replay, send)
            return
        await endpoint(scope, receive, send)

    return app


def run_limited(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child Python under a 1 GiB address-space limit."""
    prelude = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_AS, ({MEMORY_LIMIT}, {MEMORY_LIMIT}))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=PROJECT_DIR,
    )


# A billion-laughs document: 551 bytes that expand to 9**9 strings.
BOMB = "version: 1\ntools: {}\n" + "".join(
    f"{name}: &{name} [{', '.join([prev] * 9)}]\n"
    for name, prev in zip(
        "abcdefghi", ["lol", "*a", "*b", "*c", "*d", "*e", "*f", "*g", "*h"], strict=True
    )
)


# -- deep JSON --------------------------------------------------------------------------------


def test_the_client_refuses_a_message_nested_500_levels() -> None:
    with pytest.raises(MalformedResponse, match="nested more than 100 levels deep"):
        decode(deep_listing_body(500), source="http://tool/mcp")


def test_the_client_still_reads_a_schema_nested_90_levels() -> None:
    [message] = decode(deep_listing_body(45), source="http://tool/mcp")  # 2 levels per step
    assert message["result"]["tools"][0]["name"] == "deep"


def test_hashing_and_comparing_a_deep_value_is_refused_without_recursion() -> None:
    tools = [{"name": "deep", "inputSchema": deep_value(100_000)}]
    with pytest.raises(SchemaTooDeep, match="nested more than 128 levels"):
        schema_hash(tools)
    with pytest.raises(SchemaTooDeep):
        compare_tools([{"name": "deep", "inputSchema": {}}], tools)
    assert len(schema_hash([{"name": "ok", "inputSchema": deep_value(100)}])) == 64


def test_a_deep_tools_list_is_phase_error_through_create_diff_read_and_update() -> None:
    with serve(deep_server(500)) as url:
        host = EngineHost(ToolSchemaSyncProvider())
        inputs = service_inputs(url)
        assert host.up(inputs) == "create"
        outs = host.plain_outputs()
        assert outs["phase"] == "Error"
        assert "nested more than 100 levels deep" in outs["last_error"]
        # diff probes it; it still fails, which is no change (no perpetual diff)
        assert host.preview(inputs).op == "same"
        assert host.refresh()["phase"] == "Error"
        assert host.up({**inputs, "timeout": 4}) == "update"
        assert host.plain_outputs()["phase"] == "Error"


def test_a_schema_too_deep_to_hash_is_phase_error_not_an_engine_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Hashing runs inside the provider's error handling (a listing the client let through
    but the hash refuses: the client's cap is lower, so it is handed in here)."""
    tools = [{"name": "deep", "inputSchema": deep_value(300)}]
    listing = ToolListing(tools, {}, "2025-11-25", "streamable-http")
    monkeypatch.setattr(provider, "fetch_listing", lambda *a, **k: listing)
    outs = ToolSchemaSyncProvider().create(service_inputs("http://127.0.0.1:9")).outs
    assert outs["phase"] == "Error"
    assert outs["last_error"].startswith("a tool schema is nested more than 128 levels deep")
    with pytest.raises(RuntimeError, match="nested more than 128 levels deep"):
        ToolSchemaSyncProvider().create(service_inputs("http://127.0.0.1:9", required=True))


def test_a_required_sync_of_a_deep_tools_list_fails_the_deploy_with_a_reason() -> None:
    with serve(deep_server(500)) as url:
        host = EngineHost(ToolSchemaSyncProvider())
        with pytest.raises(ProviderFailure) as failed:
            host.up(service_inputs(url, required=True))
    assert "nested more than 100 levels deep" in failed.value.details
    assert "RecursionError" not in failed.value.details


STACK = """
config:
  langop-infra:namespace: apps
  langop-infra:tools:
    - name: memory
      image: ghcr.io/acme/memory-mcp:1.0.0
      schemaSync: {access: direct, timeout: 5s}
"""


def test_schemas_cli_reports_a_deep_tools_list_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.ci.yaml"
    stack.write_text(STACK)
    with serve(deep_server(500)) as url:
        capsys.readouterr()
        argv = ["schemas", "--config", str(stack), "--project-dir", str(PROJECT_DIR)]
        argv += ["--lock", str(tmp_path / "lock.yaml"), "--update", "--url", f"memory={url}/mcp"]
        code = main(argv)
    _out, err = capsys.readouterr()
    assert code == 1
    assert "nested more than 100 levels deep" in err
    assert "Traceback" not in err


# -- YAML a pull request can change -----------------------------------------------------------


def test_a_551_byte_alias_bomb_in_a_lock_file_is_refused_within_a_memory_limit(
    tmp_path: Path,
) -> None:
    assert len(BOMB) <= 560
    lock = tmp_path / "schemas.lock.yaml"
    lock.write_text(BOMB)
    child = run_limited(
        f"""
        from langop_infra.sync._lock import LockError, load_lock
        try:
            load_lock({str(lock)!r})
        except LockError as exc:
            print("LockError:", exc)
        """
    )
    assert child.returncode == 0, child.stderr[-500:]
    assert "LockError:" in child.stdout
    assert "expands to more than" in child.stdout and "(aliases)" in child.stdout


def test_schemas_cli_refuses_a_bombed_lock_with_exit_2(tmp_path: Path) -> None:
    lock = tmp_path / "schemas.lock.yaml"
    lock.write_text(BOMB)
    stack = tmp_path / "Pulumi.ci.yaml"
    stack.write_text(STACK)
    child = run_limited(
        f"""
        import sys
        from langop_infra.cli.main import main
        sys.exit(main(["schemas", "--config", {str(stack)!r}, "--project-dir",
                       {str(PROJECT_DIR)!r}, "--lock", {str(lock)!r}]))
        """
    )
    assert child.returncode == 2, child.stderr[-500:]
    assert "(aliases)" in child.stderr and "Traceback" not in child.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("version: 1\nversion: 1\ntools: {}\n", "key 'version' given twice"),
        ("version: 1\ntools: {}\nx: " + "[" * 200 + "]" * 200 + "\n", "nested more than"),
        ("version: 1\ntools: {}\nx: " + "9" * 5000 + "\n", "a number of 5000 digits"),
    ],
    ids=["duplicate-key", "deep", "huge-int"],
)
def test_a_lock_file_is_read_as_strictly_as_a_stack_file(text: str, says: str) -> None:
    with pytest.raises(LockError, match=says):
        parse_lock(text, "schemas.lock.yaml")


def test_a_lock_written_by_update_reads_back(tmp_path: Path) -> None:
    from langop_infra.sync._lock import LockEntry, dump_lock

    tools = [{"name": "deep", "inputSchema": deep_value(120)}]
    text = dump_lock({"memory": LockEntry.from_tools(tools)})
    assert parse_lock(text)["memory"].tools == tuple(tools)
    json_text = dump_lock({"memory": LockEntry.from_tools(tools)}, "json")
    assert parse_lock(json_text)["memory"].schema_hash == schema_hash(tools)


def test_an_agent_config_bomb_is_refused_within_a_memory_limit(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(BOMB.replace("version: 1\ntools: {}\n", "tools: {}\n"))
    child = run_limited(
        f"""
        from langop_infra.agent.runtime import AgentConfigError, load_agent_servers
        try:
            load_agent_servers({str(config)!r})
        except AgentConfigError as exc:
            print("AgentConfigError:", exc)
        """
    )
    assert child.returncode == 0, child.stderr[-500:]
    assert "AgentConfigError:" in child.stdout and "(aliases)" in child.stdout


def test_a_kubeconfig_bomb_is_refused_within_a_memory_limit(tmp_path: Path) -> None:
    kubeconfig = "apiVersion: v1\nkind: Config\n" + BOMB.replace("version: 1\ntools: {}\n", "")
    path = tmp_path / "kubeconfig"
    path.write_text(kubeconfig)
    child = run_limited(
        f"""
        import json
        from langop_infra.sync._kube_proxy import ProxyError, kube_api_access, kubeconfig_secrets
        for source in ({kubeconfig!r}, {str(path)!r}):
            try:
                kube_api_access(source, None)
            except ProxyError as exc:
                print("ProxyError:", exc)
        print("secrets:", len(kubeconfig_secrets({kubeconfig!r})))
        """
    )
    assert child.returncode == 0, child.stderr[-500:]
    assert child.stdout.count("ProxyError: cannot load a kubeconfig") == 2
    assert "(aliases)" in child.stdout  # the file's refusal names why
    assert "secrets:" in child.stdout


def test_a_diff_input_bomb_is_refused_within_a_memory_limit(tmp_path: Path) -> None:
    old = tmp_path / "old.yaml"
    old.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    new = tmp_path / "new.yaml"
    new.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
        + BOMB.replace("version: 1\ntools: {}\n", "")
    )
    child = run_limited(
        f"""
        import sys
        from langop_infra.cli.main import main
        sys.exit(main(["diff", {str(old)!r}, {str(new)!r}]))
        """
    )
    assert child.returncode == 2, child.stderr[-500:]
    assert "(aliases)" in child.stderr and "Traceback" not in child.stderr


def test_a_render_reads_back_as_a_diff_input(tmp_path: Path) -> None:
    """The bounds refuse bombs, not real renders: the shipped dev stack diffs against itself."""
    out = tmp_path / "dev.yaml"
    argv = ["render", "--stack", "dev", "--project-dir", str(PROJECT_DIR), "--out", str(out)]
    assert main(argv) == 0
    assert main(["diff", str(out), str(out)]) == 0


# -- oversized integers -----------------------------------------------------------------------


def test_a_stack_value_over_4300_digits_is_a_config_error_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = tmp_path / "Pulumi.big.yaml"
    stack.write_text(
        "config:\n  langop-infra:namespace: apps\n  langop-infra:tools:\n"
        "    - name: memory\n      image: ghcr.io/acme/memory-mcp:1.0.0\n"
        f"      port: {'9' * 5000}\n"
    )
    capsys.readouterr()
    code = main(["validate", "--config", str(stack), "--project-dir", str(PROJECT_DIR)])
    _out, err = capsys.readouterr()
    assert code == 2
    assert "config.langop-infra:tools[0].port: a number of 5000 digits at line 6" in err
    assert "internal error" not in err and "Traceback" not in err
    assert "9" * 100 not in err


def test_json_in_a_lock_is_held_to_the_same_bounds() -> None:
    deep = json.dumps({"version": 1, "tools": {}, "x": deep_value(200)})
    with pytest.raises(LockError, match="nested more than"):
        parse_lock(deep, "schemas.lock.json")
