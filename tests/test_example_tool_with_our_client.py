"""The example memory tool through langop-infra's own MCP client: list, remember, recall,
and recall again after the server restarts on the same database."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from langop_infra.mcp import ClientOptions, Session, fetch_tool_listing_sync
from tests.support.loopback import serve

SERVER_FILE = Path(__file__).parents[1] / "examples" / "memory_tool" / "server.py"
OPTIONS = ClientOptions(timeout=5, deadline=10)


@pytest.fixture(scope="module")
def memory_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_tool_for_our_client", SERVER_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def remember_then_recall(url: str, content: str) -> tuple[bool, str]:
    async with Session(url, OPTIONS) as session:
        stored = await session.call_tool("remember", {"content": content, "tags": ["units"]})
        found = await session.call_tool("recall", {"query": "metric"})
    return stored.is_error, " ".join(c.get("text", "") for c in found.content)


async def recall(url: str, query: str) -> str:
    async with Session(url, OPTIONS) as session:
        found = await session.call_tool("recall", {"query": query})
    assert found.is_error is False
    return " ".join(c.get("text", "") for c in found.content)


def test_our_client_lists_calls_and_recalls_across_a_restart(
    memory_tool: ModuleType, tmp_path: Path
) -> None:
    db = tmp_path / "memory.db"
    with serve(memory_tool.build_app(str(db))) as base:
        listing = fetch_tool_listing_sync(f"{base}/mcp", OPTIONS)
        assert sorted(t["name"] for t in listing.tools) == ["recall", "remember"]
        remember = next(t for t in listing.tools if t["name"] == "remember")
        assert remember["inputSchema"]["required"] == ["content"]
        is_error, text = asyncio.run(
            remember_then_recall(f"{base}/mcp", "User prefers metric units")
        )
        assert is_error is False
        assert "User prefers metric units" in text
    # A new server process on the same database file: the memory survived.
    with serve(memory_tool.build_app(str(db))) as base:
        assert "User prefers metric units" in asyncio.run(recall(f"{base}/mcp", "metric"))


def test_a_bad_call_is_an_error_result_not_an_http_failure(
    memory_tool: ModuleType, tmp_path: Path
) -> None:
    async def call_without_content(url: str) -> bool:
        async with Session(url, OPTIONS) as session:
            result = await session.call_tool("remember", {"tags": ["x"]})
        return result.is_error

    with serve(memory_tool.build_app(str(tmp_path / "m.db"))) as base:
        assert asyncio.run(call_without_content(f"{base}/mcp")) is True
