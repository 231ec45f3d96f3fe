"""The 2026-07-28 revision: negotiation against the official SDK server and client.

The SDK server runs in dual mode (its default: both eras on one endpoint) and in
2026-07-28-only mode (``modern_only_app`` in conftest); the official SDK client in its
automatic mode is the reference our listing must equal.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from langop_infra.mcp import (
    ClientOptions,
    JSONRPCError,
    ProtocolVersionError,
    Session,
    fetch_tool_listing,
)

pytestmark = pytest.mark.anyio

FAST = ClientOptions(timeout=5, deadline=10)


async def _official_tools(url: str) -> tuple[str, list[dict[str, Any]]]:
    async with Client(url) as client:
        listed = await client.list_tools()
        version = client.protocol_version
    return version, [
        t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools
    ]


@pytest.mark.parametrize("server", ["stateful_url", "modern_only_url"])
async def test_lists_the_same_tools_as_the_official_client(
    request: pytest.FixtureRequest, server: str
) -> None:
    url = request.getfixturevalue(server)
    official_version, official = await _official_tools(url)
    listing = await fetch_tool_listing(url, FAST)
    assert listing.protocol_version == official_version == "2026-07-28"
    assert listing.tools == official
    assert len(listing.tools) == 5


async def test_calls_tools_on_a_2026_only_server(modern_only_url: str) -> None:
    async with Session(modern_only_url, FAST) as session:
        assert session.protocol_version == "2026-07-28"
        assert session.session_id is None  # the revision has no sessions
        assert session.server_info == {"name": "sdk-modern", "version": "1.0.0"}
        # The server checks Mcp-Method and Mcp-Name against the body: a mismatch is -32020.
        added = await session.call_tool("add", {"a": 2, "b": 40})
        failed = await session.call_tool("fail", {"reason": "disk full"})
    assert added.structured_content == {"result": 42}
    assert failed.is_error is True


async def test_a_2025_pin_against_a_2026_only_server_says_what_to_do(modern_only_url: str) -> None:
    options = ClientOptions(timeout=5, deadline=10, protocol="2025-11-25")
    with pytest.raises(JSONRPCError) as refused:
        async with Session(modern_only_url, options):
            pass
    assert "answered initialize with JSON-RPC error -32602" in str(refused.value)
    assert str(refused.value).endswith("try protocol auto")


async def test_a_2026_pin_skips_the_handshake_fallback(json_url: str) -> None:
    options = ClientOptions(timeout=5, deadline=10, protocol="2026-07-28")
    async with Session(json_url, options) as session:
        assert session.protocol_version == "2026-07-28"
        assert len(await session.list_tools()) == 5


async def test_unsupported_version_with_no_common_one_is_an_error(
    fault_server: tuple[str, Any],
) -> None:
    """-32022 naming only versions we do not speak (a fake future server)."""
    base, _ = fault_server
    with pytest.raises(ProtocolVersionError) as refused:
        async with Session(f"{base}/future", FAST):
            pass
    assert "speaks protocol versions 2099-01-01" in str(refused.value)


async def test_unsupported_version_naming_a_2025_version_falls_back(
    fault_server: tuple[str, Any],
) -> None:
    """-32022 whose ``data.supported`` names a handshake version: initialize follows."""
    base, app = fault_server
    async with Session(f"{base}/future-dual", FAST) as session:
        assert session.protocol_version == "2025-11-25"
        assert [t["name"] for t in await session.list_tools()] == ["only"]
    sent = [r.message for r in app.requests if r.path == "/future-dual" and r.message]
    methods = [message.get("method") for message in sent]
    assert methods[:2] == ["server/discover", "initialize"]


async def test_header_mismatch_on_discover_falls_back(fault_server: tuple[str, Any]) -> None:
    """-32020 (a proxy rewriting the Mcp-* headers) on discover: the handshake still works."""
    base, _ = fault_server
    async with Session(f"{base}/header-mismatch", FAST) as session:
        assert session.protocol_version == "2025-11-25"
        assert await session.list_tools()


def _regional_server() -> Any:
    """An SDK low-level server whose tool mirrors its ``region`` argument in a header."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    schema = {
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"],
    }

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="regional", input_schema=schema)])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        text = f"served {params.arguments['region']}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("regional", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def test_mcp_param_headers_are_learned_on_a_header_mismatch(
    serve_app: Any, modern_only: Any
) -> None:
    """The server requires ``Mcp-Param-Region`` (the tool's x-mcp-header): a call before any
    listing gets -32020; the client lists the tools once and sends the call again."""
    with serve_app(modern_only(_regional_server())) as base:
        async with Session(base + "/mcp", FAST) as session:
            transport = session.transport
            assert transport is not None
            sent: list[tuple[str, Any]] = []
            request = transport.request

            async def recording(message: dict[str, Any], headers: Any = None) -> Any:
                response = await request(message, headers)
                sent.append((message["method"], response.get("error", {}).get("code")))
                return response

            transport.request = recording  # type: ignore[method-assign]
            result = await session.call_tool("regional", {"region": "eu-west"})
            again = await session.call_tool("regional", {"region": "us"})
    assert result.content == [{"type": "text", "text": "served eu-west"}]
    assert again.content == [{"type": "text", "text": "served us"}]
    assert sent == [
        ("tools/call", -32020),
        ("tools/list", None),
        ("tools/call", None),
        ("tools/call", None),
    ]


def test_routing_headers_mirror_the_body() -> None:
    from langop_infra.mcp import _modern as modern

    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
            "bad": {"type": "string", "x-mcp-header": "not a token"},
        },
    }
    params = {"name": "résumé", "arguments": {"region": " eu ", "opts": {"dry": True}}}
    assert modern.routing_headers("tools/call", params, "2026-07-28", schema) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "=?base64?csOpc3Vtw6k=?=",  # not ASCII: base64 in the sentinel
        "Mcp-Param-Region": "=?base64?IGV1IA==?=",  # edge whitespace would be lost
        "Mcp-Param-Dry-Run": "true",
    }
    assert modern.routing_headers("tools/list", {}, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }


@pytest.mark.parametrize("method", ["sampling/createMessage", "roots/list", "elicitation/create"])
def test_requests_the_client_cannot_serve_are_refused_at_once(method: str) -> None:
    from langop_infra.mcp import _jsonrpc as jsonrpc

    answer = jsonrpc.answer_to({"jsonrpc": "2.0", "id": 7, "method": method})
    assert answer == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {
            "code": -32601,
            "message": f"Method not found: this client does not support {method}",
        },
    }
    assert jsonrpc.answer_to({"jsonrpc": "2.0", "id": "p", "method": "ping"})["result"] == {}
