"""The example memory tool (examples/memory_tool) on loopback, through the official SDK client."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from tests.support.loopback import serve

SERVER_FILE = Path(__file__).resolve().parents[1] / "examples" / "memory_tool" / "server.py"
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture(scope="module")
def memory_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_tool_server", SERVER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def serving(memory_tool: ModuleType, db_path: Path) -> Any:
    """Run the tool on a free loopback port in a thread; yield its base URL; stop it on exit."""
    return serve(memory_tool.build_app(db_path))


@pytest.fixture(scope="module")
def base_url(memory_tool: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(memory_tool, tmp_path_factory.mktemp("memory") / "memory.db") as url:
        yield url


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def post_mcp(base_url: str, method: str, params: dict[str, Any], **headers: str) -> dict[str, Any]:
    """One raw JSON-RPC request to ``POST /mcp``; asserts no HTTP error; returns the message."""
    response = httpx.post(
        f"{base_url}/mcp",
        headers={**MCP_HEADERS, **headers},
        json={"jsonrpc": "2.0", "id": 7, "method": method, "params": params},
        timeout=5,
    )
    assert response.status_code == 200, (response.status_code, response.text)
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    for line in response.text.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("id") == 7:
                return message
    raise AssertionError(f"no JSON-RPC response in {response.text!r}")


async def call(url: str, tool: str, arguments: dict[str, Any], mode: str = "auto") -> Any:
    async with Client(f"{url}/mcp", mode=mode) as client:
        return await client.call_tool(tool, arguments)


async def call_failing(url: str, tool: str, arguments: dict[str, Any]) -> MCPError:
    """The JSON-RPC error a call raises (caught inside the session, before its task group exits)."""
    async with Client(f"{url}/mcp") as client:
        try:
            result = await client.call_tool(tool, arguments)
        except MCPError as error:
            return error
    raise AssertionError(f"expected a JSON-RPC error, got {result!r}")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_lists_both_tools_with_described_inputs(base_url: str, mode: str) -> None:
    async def list_tools() -> dict[str, Any]:
        async with Client(f"{base_url}/mcp", mode=mode) as client:
            result = await client.list_tools()
        return {tool.name: tool for tool in result.tools}

    tools = run(list_tools())

    assert sorted(tools) == ["recall", "remember"]
    remember, recall = tools["remember"], tools["recall"]
    assert remember.description == "Store information in long-term memory"
    assert recall.description == "Retrieve information from long-term memory"
    assert remember.input_schema["required"] == ["content"]
    assert recall.input_schema["required"] == ["query"]
    content = remember.input_schema["properties"]["content"]
    assert (content["type"], content["description"]) == ("string", "Information to remember")
    tags = remember.input_schema["properties"]["tags"]
    assert tags["type"] == "array" and tags["items"]["type"] == "string"
    assert "preferences" in tags["description"]
    limit = recall.input_schema["properties"]["limit"]
    assert (limit["type"], limit["default"]) == ("integer", 10)
    for tool in tools.values():
        for name, field in tool.input_schema["properties"].items():
            assert field.get("description"), f"{tool.name}.{name} has no description"
    assert remember.output_schema["required"] == ["id", "content", "tags", "created_at"]
    assert remember.annotations.read_only_hint is False
    assert recall.annotations.read_only_hint is True


def test_recall_returns_what_remember_stored(base_url: str) -> None:
    async def scenario() -> tuple[Any, Any, Any]:
        async with Client(f"{base_url}/mcp") as client:
            stored = await client.call_tool(
                "remember", {"content": "User prefers metric units", "tags": ["preferences"]}
            )
            found = await client.call_tool("recall", {"query": "metric"})
            missing = await client.call_tool("recall", {"query": "zebra-crossing"})
        return stored, found, missing

    stored, found, missing = run(scenario())

    assert stored.is_error is False
    memory = stored.structured_content
    assert (memory["content"], memory["tags"]) == ("User prefers metric units", ["preferences"])
    assert isinstance(memory["id"], int)
    assert found.is_error is False
    assert found.structured_content["memories"] == [memory]
    assert json.loads(found.content[0].text)["memories"][0]["content"] == memory["content"]
    assert missing.structured_content == {"memories": []}


def test_recall_ranks_by_matched_terms_then_newest_and_honours_limit(base_url: str) -> None:
    async def scenario() -> tuple[list[str], list[str], list[str]]:
        async with Client(f"{base_url}/mcp") as client:
            for content, tags in [
                ("kestrel sighting at dawn", []),
                ("kestrel nest in the barn", ["birds"]),
                ("owl in the barn", ["birds"]),
            ]:
                await client.call_tool("remember", {"content": content, "tags": tags})
            both = await client.call_tool("recall", {"query": "kestrel barn"})
            by_tag = await client.call_tool("recall", {"query": "BIRDS"})
            one = await client.call_tool("recall", {"query": "kestrel", "limit": 1})

        def contents(result: Any) -> list[str]:
            return [m["content"] for m in result.structured_content["memories"]]

        return contents(both), contents(by_tag), contents(one)

    both, by_tag, one = run(scenario())

    assert both == ["kestrel nest in the barn", "owl in the barn", "kestrel sighting at dawn"]
    assert by_tag == ["owl in the barn", "kestrel nest in the barn"]
    assert one == ["kestrel nest in the barn"]


def test_concurrent_calls_share_the_one_connection_safely(base_url: str) -> None:
    async def scenario() -> tuple[list[int], list[str]]:
        async with Client(f"{base_url}/mcp") as client:
            results = await asyncio.gather(
                *(
                    client.call_tool("remember", {"content": f"parallel note {i}"})
                    for i in range(20)
                )
            )
            found = await client.call_tool("recall", {"query": "parallel", "limit": 100})
        ids = [r.structured_content["id"] for r in results]
        return ids, [m["content"] for m in found.structured_content["memories"]]

    ids, contents = run(scenario())

    assert len(set(ids)) == 20
    assert sorted(contents) == sorted(f"parallel note {i}" for i in range(20))


def test_memories_survive_a_restart(memory_tool: ModuleType, tmp_path: Path) -> None:
    db_path = tmp_path / "volume" / "memory.db"
    with serving(memory_tool, db_path) as url:
        stored = run(call(url, "remember", {"content": "The deploy window is Tuesday"}))
    assert stored.is_error is False

    with serving(memory_tool, db_path) as url:
        found = run(call(url, "recall", {"query": "deploy"}))

    assert found.structured_content["memories"] == [stored.structured_content]
    with sqlite3.connect(db_path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_health_is_ok_when_the_store_is_usable(base_url: str) -> None:
    response = httpx.get(f"{base_url}/health", timeout=5)

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_unusable_store_gives_503_health_and_the_contract_mcp_error(
    memory_tool: ModuleType, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the volume should be")

    with serving(memory_tool, blocker / "memory.db") as url:
        health = httpx.get(f"{url}/health", timeout=5)
        error = run(call_failing(url, "remember", {"content": "lost"}))
        raw = post_mcp(url, "tools/call", {"name": "recall", "arguments": {"query": "x"}})

    assert health.status_code == 503
    assert health.json()["status"] == "unavailable"
    assert "not-a-directory" in health.json()["reason"]
    assert error.code == -32603
    assert error.message == "Memory store unavailable"
    assert "not-a-directory" in error.data["reason"]
    assert raw["error"]["code"] == -32603
    assert raw["error"]["message"] == "Memory store unavailable"


def test_bad_call_is_a_tool_error_result_not_an_http_error(base_url: str) -> None:
    via_sdk = run(call(base_url, "remember", {"tags": ["orphan"]}))
    raw = post_mcp(base_url, "tools/call", {"name": "remember", "arguments": {"tags": ["x"]}})
    out_of_range = run(call(base_url, "recall", {"query": "x", "limit": 0}))

    assert via_sdk.is_error is True
    assert "content" in via_sdk.content[0].text
    assert "Field required" in via_sdk.content[0].text
    assert raw["result"]["isError"] is True
    assert "content" in raw["result"]["content"][0]["text"]
    assert out_of_range.is_error is True
    assert "limit" in out_of_range.content[0].text


def test_unknown_tool_and_method_are_mcp_errors_not_http_errors(base_url: str) -> None:
    unknown_tool = post_mcp(base_url, "tools/call", {"name": "forget", "arguments": {}})
    unknown_method = post_mcp(base_url, "memories/forget", {})

    assert unknown_tool["result"]["isError"] is True
    assert unknown_tool["result"]["content"][0]["text"] == "Unknown tool: forget"
    assert unknown_method["error"]["code"] == -32601


def test_seed_style_plain_request_with_a_service_host_header(base_url: str) -> None:
    # What a seed-style client sends: tools/list with no initialize, addressed to the Service name.
    message = post_mcp(
        base_url, "tools/list", {}, Host="memory.language-operator-demo.svc.cluster.local:8080"
    )

    assert sorted(tool["name"] for tool in message["result"]["tools"]) == ["recall", "remember"]
