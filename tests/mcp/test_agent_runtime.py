"""Agent-side helpers: config.yaml + MCP_SERVERS into one registry of prefixed tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from langop_infra.agent.runtime import (
    AgentConfigError,
    ServerEntry,
    ServerFailure,
    connect_tool_registry,
    expand_env,
    load_agent_servers,
)
from langop_infra.mcp import ClientOptions
from tests.support.startup import stdio_options

pytestmark = pytest.mark.anyio

FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
SDK_TOOLS = {"add", "echo", "fail", "chatty", "polled"}


def base_of(url: str) -> str:
    return url.removesuffix("/mcp")


CONTRACT_DOC = {
    "tools": {
        "memory": {"endpoint": "http://memory.prod.svc.cluster.local:8080", "protocol": "mcp"},
        "search-index": {
            "endpoint": "http://search-index.prod.svc.cluster.local:9000/",
            "protocol": "mcp",
            "mcpPath": "/rpc",
        },
    },
    "mcpServers": [
        {
            "name": "search",
            "url": "https://search.example.com/sse",
            "timeoutSeconds": 30,
            "headers": [
                {"name": "X-API-Version", "value": "2"},
                {"name": "X-Tenant", "value": "team-${TEAM}-prod"},
                {"name": "Authorization", "valueFromEnv": "ARK_MCP_SEARCH_HEADER_AUTHORIZATION"},
            ],
        }
    ],
    "webhookTools": [{"name": "fetch_news", "url": "http://news-api.internal/headlines"}],
}


def test_loads_the_contract_document_and_mcp_servers() -> None:
    env = {
        "TEAM": "blue",
        "ARK_MCP_SEARCH_HEADER_AUTHORIZATION": "Bearer s3cret",
        "MCP_SERVERS": "http://memory.prod.svc.cluster.local:8080, http://weather.tools.svc:8080,",
    }
    loaded = load_agent_servers(CONTRACT_DOC, env=env)
    assert loaded.failures == []
    assert loaded.warnings == []
    assert loaded.servers == [
        ServerEntry(
            "memory", "http://memory.prod.svc.cluster.local:8080/mcp", source="config.yaml tools"
        ),
        ServerEntry(
            "search-index",
            "http://search-index.prod.svc.cluster.local:9000/rpc",
            source="config.yaml tools",
        ),
        ServerEntry(
            "search",
            "https://search.example.com/sse",
            {"X-API-Version": "2", "X-Tenant": "team-blue-prod", "Authorization": "Bearer s3cret"},
            30,
            "config.yaml mcpServers",
        ),
        # memory is in both sources: connected once, with config.yaml's entry.
        ServerEntry("weather", "http://weather.tools.svc:8080/mcp", source="MCP_SERVERS"),
    ]


def test_unset_variables_are_reported_and_the_server_skipped() -> None:
    loaded = load_agent_servers(CONTRACT_DOC, env={"ARK_MCP_SEARCH_HEADER_AUTHORIZATION": "x"})
    assert [s.name for s in loaded.servers] == ["memory", "search-index"]
    assert loaded.failures == [
        ServerFailure(
            "search",
            "config",
            "mcpServers[0].headers.X-Tenant: ${TEAM} is not set in the environment",
        )
    ]
    loaded = load_agent_servers(CONTRACT_DOC, env={"TEAM": "blue"})
    assert loaded.failures == [
        ServerFailure(
            "search",
            "config",
            "mcpServers[0].headers.Authorization: environment variable "
            "ARK_MCP_SEARCH_HEADER_AUTHORIZATION is not set",
        )
    ]


def test_expand_env() -> None:
    assert expand_env("Bearer ${TOKEN}", {"TOKEN": "abc"}) == "Bearer abc"
    assert expand_env("${HOST:-localhost}:${PORT:-80}", {"PORT": "8080"}) == "localhost:8080"
    assert expand_env("${EMPTY:-fallback}", {"EMPTY": ""}) == "fallback"
    assert expand_env("${SET:-}", {}) == ""
    assert expand_env("${A}-${B}-$C-${}", {"A": "1", "B": "2"}) == "1-2-$C-${}"
    with pytest.raises(KeyError, match="MISSING"):
        expand_env("${MISSING}", {})


def test_mcp_servers_only_entries_are_named_by_host() -> None:
    loaded = load_agent_servers(
        None,
        env={"MCP_SERVERS": "http://10.0.0.7:8080,http://notes.ns.svc:80,http://notes.other:80"},
    )
    assert [(s.name, s.url) for s in loaded.servers] == [
        ("10-0-0-7-8080", "http://10.0.0.7:8080/mcp"),
        ("notes", "http://notes.ns.svc:80/mcp"),
        ("notes-2", "http://notes.other:80/mcp"),
    ]
    assert loaded.warnings == [
        "two servers are named 'notes'; the one at http://notes.other:80/mcp (MCP_SERVERS) "
        "is 'notes-2'"
    ]


def test_bad_entries_are_reported_not_fatal() -> None:
    document = {
        "tools": {"broken": {"protocol": "mcp"}, "ok": {"endpoint": "http://ok:8080"}},
        "mcpServers": [
            {"url": "http://nameless"},
            {"name": "slow", "url": "http://s", "timeoutSeconds": -1},
        ],
    }
    loaded = load_agent_servers(document, env={})
    assert [s.name for s in loaded.servers] == ["ok"]
    assert [(f.name, f.kind) for f in loaded.failures] == [
        ("broken", "config"),
        ("mcpServers[0]", "config"),
        ("slow", "config"),
    ]
    assert "tools.broken: needs an endpoint URL string" in loaded.failures[0].message


def test_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(AgentConfigError, match="cannot read agent config"):
        load_agent_servers(tmp_path / "missing.yaml", env={})
    (tmp_path / "list.yaml").write_text("- not a mapping\n")
    with pytest.raises(AgentConfigError, match="is not a YAML mapping"):
        load_agent_servers(tmp_path / "list.yaml", env={})
    (tmp_path / "empty.yaml").write_text("")
    assert load_agent_servers(tmp_path / "empty.yaml", env={}).servers == []


async def test_registry_prefixes_tools_and_skips_failed_servers(
    tmp_path: Path,
    stateful_url: str,
    json_url: str,
    seed_url: str,
    fault_server: tuple[str, Any],
    free_port: int,
) -> None:
    faults_base, app = fault_server
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "tools": {
                    "memory": {"endpoint": base_of(stateful_url), "protocol": "mcp"},
                    "notes": {"endpoint": base_of(json_url), "protocol": "mcp", "mcpPath": "/mcp"},
                    "dead": {"endpoint": f"http://127.0.0.1:{free_port}", "protocol": "mcp"},
                },
                "mcpServers": [
                    {
                        "name": "private",
                        "url": f"{faults_base}/auth",
                        "headers": [{"name": "Authorization", "value": "Bearer ${TOKEN}"}],
                    }
                ],
                "webhookTools": [{"name": "fetch_news", "url": "http://news/headlines"}],
            },
            sort_keys=False,
        )
    )
    env = {"TOKEN": "right-token", "MCP_SERVERS": f"{base_of(stateful_url)},{base_of(seed_url)}"}
    servers = load_agent_servers(config, env=env)
    seed_name = "127-0-0-1-" + base_of(seed_url).rsplit(":", 1)[1]
    assert [s.name for s in servers.servers] == ["memory", "notes", "dead", "private", seed_name]

    async with await connect_tool_registry(servers, FAST) as registry:
        assert set(registry.tools) == (
            {f"memory__{t}" for t in SDK_TOOLS}
            | {f"notes__{t}" for t in SDK_TOOLS}
            | {"private__only", f"{seed_name}__remember", f"{seed_name}__recall"}
            | {"fetch_news"}  # the inline HTTP tool, under its own name (ark)
        )
        assert registry.tools["fetch_news"].server == ""
        assert [(f.name, f.kind) for f in registry.failures] == [("dead", "unreachable")]
        assert "connection refused" in registry.failures[0].message
        assert set(registry.sessions) == {"memory", "notes", "private", seed_name}
        # The ${TOKEN} header reached the server: /auth answers 401 without it.
        assert app.requests[-1].headers["authorization"] == "Bearer right-token"

        definitions = {d["name"]: d for d in registry.definitions()}
        assert definitions["notes__add"]["inputSchema"]["required"] == ["a", "b"]
        tool = registry.tools["notes__add"]
        assert (tool.server, tool.tool_name) == ("notes", "add")

        result = await registry.call_tool("memory__add", {"a": 20, "b": 22})
        assert result.content == [{"type": "text", "text": "42"}]
        stored = await registry.call_tool(f"{seed_name}__remember", {"content": "metric units"})
        assert stored.content[0]["text"] == "Stored successfully."
        unknown = await registry.call_tool("add", {})
        assert unknown.is_error is True
        assert unknown.content[0]["text"].startswith("no tool named 'add'; the tools are: ")
        sessions = list(registry.sessions.values())
    assert all(session._closed for session in sessions)


async def test_registry_mcp_naming_and_name_collisions(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    entries = [
        ServerEntry("s", f"{base}/named/x__y,dup,dup"),
        ServerEntry("s__x", f"{base}/named/y"),
        ServerEntry("s", f"{base}/named/z"),
    ]
    async with await connect_tool_registry(entries, FAST) as registry:
        assert list(registry.tools) == ["s__x__y", "s__dup", "s__x__y_2", "s-2__z"]
        assert registry.tools["s__x__y_2"].server == "s__x"
        assert registry.tools["s__x__y_2"].tool_name == "y"
        assert registry.warnings == [
            f"two servers are named 's'; the one at {base}/named/z (given) is 's-2'",
            "s lists tool 'dup' twice; kept the first",
            "tool name 's__x__y' is taken; s__x's 'y' is 's__x__y_2'",
        ]
    async with await connect_tool_registry(entries[:2], FAST, naming="mcp") as registry:
        assert list(registry.tools) == ["mcp:s:x__y", "mcp:s:dup", "mcp:s__x:y"]
        assert registry.failures == []


async def test_a_garbled_header_fails_only_its_server(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    entries = [
        ServerEntry("garbled", f"{base}/ok", {"Authorization": "Bearer caf\u00e9"}),
        ServerEntry("fine", f"{base}/named/a"),
    ]
    async with await connect_tool_registry(entries, FAST) as registry:
        assert list(registry.tools) == ["fine__a"]
        assert [(f.name, f.kind) for f in registry.failures] == [("garbled", "invalid-input")]
        assert "header 'Authorization' cannot be sent" in registry.failures[0].message


def test_urls_headers_and_stdio_env_expand_variables() -> None:
    document = {
        "mcpServers": [
            {
                "name": "remote",
                "url": "https://${MCP_HOST:-tools.example.com}/mcp",
                "headers": [{"name": "X-Region", "value": "${REGION:-eu}"}],
            },
            {
                "name": "local",
                "transport": "stdio",
                "command": "python",
                "args": ["-m", "server"],
                "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MODE": "${MODE:-ro}"},
            },
            {
                "name": "found",
                "transport": "url",
                "url": "https://${DOMAIN}/.well-known/mcp",
                "env": {"DOMAIN": "${DOMAIN}"},  # a URL expands only what its entry declares
            },
            {"name": "odd", "transport": "carrier-pigeon", "url": "http://x"},
        ]
    }
    env = {"REGION": "us", "GITHUB_TOKEN": "t0k", "DOMAIN": "example.org"}
    loaded = load_agent_servers(document, env=env)
    remote, local, found = loaded.servers
    assert (remote.url, dict(remote.headers)) == (
        "https://tools.example.com/mcp",
        {"X-Region": "us"},
    )
    assert (local.transport, local.command) == ("stdio", ("python", "-m", "server"))
    assert dict(local.env) == {"GITHUB_TOKEN": "t0k", "MODE": "ro"}
    assert (found.transport, found.url) == ("url", "https://example.org/.well-known/mcp")
    assert [str(f) for f in loaded.failures] == [
        "odd: mcpServers[3].transport: must be one of http, url, stdio [config]"
    ]
    missing = load_agent_servers(document, env={"DOMAIN": "x"})
    assert "mcpServers[1].env.GITHUB_TOKEN: ${GITHUB_TOKEN} is not set" in str(missing.failures[0])


async def test_url_transport_discovers_the_endpoint(
    serve_app: Any, sdk_tools: Any, json_url: str
) -> None:
    """A well-known document naming the endpoint (relative), served next to a real server."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Mount, Route

    sdk_app = sdk_tools.build_server("sdk-found").streamable_http_app(json_response=True)

    async def well_known(request: Any) -> JSONResponse:
        return JSONResponse({"name": "found", "endpoint": "/tools/mcp"})

    app = Starlette(
        routes=[Route("/.well-known/mcp", well_known), Mount("/tools", sdk_app)],
        lifespan=lambda _: sdk_app.router.lifespan_context(sdk_app),
    )
    with serve_app(app) as base:
        entries = [
            ServerEntry("found", base, transport="url"),  # a bare origin: /.well-known/mcp
            ServerEntry("lost", json_url, transport="url"),  # no document there
        ]
        async with await connect_tool_registry(entries, FAST) as registry:
            assert {t.tool_name for t in registry.tools.values()} == SDK_TOOLS
            assert [(f.name, f.kind) for f in registry.failures] == [("lost", "transport")]
            assert registry.failures[0].message.startswith(
                f"no MCP endpoint found at {json_url} (HTTP 406): the url transport expects"
            )


async def test_tool_call_failures_come_back_as_error_results(
    fault_server: tuple[str, Any],
) -> None:
    base, _ = fault_server
    options = ClientOptions(timeout=0.5, deadline=10, connect_retries=0)
    async with await connect_tool_registry([ServerEntry("bad", f"{base}/bad-calls")], options) as r:
        slow, garbled, refused = [
            await r.call_tool(f"bad__{name}", {}) for name in ("slow", "garbled", "refused")
        ]
    assert all(result.is_error for result in (slow, garbled, refused))
    assert slow.content[0]["text"].startswith("tool bad__slow failed: no answer to tools/call")
    assert slow.content[0]["text"].endswith("[timeout]")
    assert "sent a body that is not JSON" in garbled.content[0]["text"]
    assert refused.content[0]["text"] == (
        f"tool bad__refused failed: {base}/bad-calls answered tools/call with JSON-RPC "
        "error -32603: database is down [jsonrpc]"
    )


async def test_a_crashed_stdio_server_is_restarted_with_backoff_then_given_up() -> None:
    import sys

    document = {
        "mcpServers": [
            {
                "name": "crashy",
                "transport": "stdio",
                "command": sys.executable,
                "args": [str(Path(__file__).parent / "servers" / "crashy_stdio.py")],
                "env": {"GREETING": "${GREETING:-hello}"},
            }
        ]
    }
    loaded = load_agent_servers(document, env={})
    # Each start of the SDK server is part of a request: its bound only ends a hung run.
    options = stdio_options(connect_retries=0)
    async with await connect_tool_registry(loaded, options) as registry:
        registry.max_restarts, registry.restart_base = 2, 0.05
        first = (await registry.call_tool("crashy__pid")).content[0]["text"]
        assert first.endswith(" hello")  # env reached the server, default applied
        crashed = await registry.call_tool("crashy__crash")
        assert crashed.is_error is True
        assert "exited with code 3" in crashed.content[0]["text"]
        assert "restarted it: call the tool again" in crashed.content[0]["text"]
        second = (await registry.call_tool("crashy__pid")).content[0]["text"]
        assert second != first and second.endswith(" hello")
        await registry.call_tool("crashy__crash")
        third = (await registry.call_tool("crashy__pid")).content[0]["text"]
        assert third not in (first, second)  # restarted a second time
        first_delay, second_delay = registry.restart_delays
        assert 0.025 <= first_delay <= 0.05 <= second_delay <= 0.1  # doubled, with jitter
        await registry.call_tool("crashy__crash")
        gone = await registry.call_tool("crashy__pid")
        assert gone.is_error is True
        assert "exited again after 2 restarts; gave up restarting it" in gone.content[0]["text"]
        [status] = registry.servers()
        assert (status.name, status.state) == ("crashy", "failed")


CANARY = "CANARY-7f3a9c-secret"


def canary_servers(base: str) -> dict[str, Any]:
    header = [{"name": "Authorization", "value": "Bearer ${TOKEN}"}]
    return {
        "mcpServers": [
            {"name": name, "url": f"{base}/{path}", "headers": header}
            for name, path in (("denied", "auth"), ("bad", "bad-calls"), ("named", "named/x"))
        ]
    }


async def test_header_secrets_never_reach_results_failures_or_warnings(
    fault_server: tuple[str, Any],
) -> None:
    """A canary token in headers, over every channel the registry writes to: failures,
    warnings and tool results (what the LLM reads)."""
    base, _ = fault_server
    options = ClientOptions(timeout=0.5, deadline=5, connect_retries=0)
    loaded = load_agent_servers(canary_servers(base), env={"TOKEN": CANARY})
    registry = await connect_tool_registry(loaded, options)
    async with registry:
        results = [await registry.call_tool(name, {}) for name in sorted(registry.tools)]
        results.append(await registry.call_tool("nope", {}))
    channels = [str(f) for f in registry.failures] + registry.warnings
    channels += [block.get("text", "") for r in results for block in r.content]
    assert any("HTTP 401" in text for text in channels)  # the refusal itself is reported
    assert sum(r.is_error for r in results) == 4  # slow, garbled, refused, nope
    assert not [text for text in channels if CANARY in text]


def test_header_secrets_never_reach_the_cli_output(
    fault_server: tuple[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langop_infra.cli.main import main

    base, _ = fault_server
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(canary_servers(base)))
    monkeypatch.setenv("TOKEN", CANARY)
    for extra in ([], ["-o", "json"]):
        main(["tools", "--agent-config", str(config), "--timeout", "1", *extra])
        out, err = capsys.readouterr()
        assert "skipped server denied (http-status)" in err
        assert CANARY not in out + err
