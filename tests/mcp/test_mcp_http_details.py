"""Small HTTP behaviours: permanent redirects remembered, refused resumes named, and
transports injected for in-process tests (httpx2's ``transport=``, or a ready MCP one)."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest

from langop_infra.mcp import ClientOptions, HTTPStatusError, InvalidInput, JSONRPCError, Session

pytestmark = pytest.mark.anyio

FAST = ClientOptions(timeout=5, deadline=10, listen=False)


async def test_a_same_origin_permanent_redirect_is_remembered(
    fault_server: tuple[str, Any],
) -> None:
    base, app = fault_server
    before = len(app.requests)
    async with Session(f"{base}/moved", FAST) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]
    paths = [r.path for r in app.requests[before:]]
    # Only the first message pays the redirect; the rest, DELETE included, go to /ok.
    assert paths.count("/moved") == 1
    assert paths.count("/ok") >= 5


async def test_a_refused_resume_is_reported_as_such(fault_server: tuple[str, Any]) -> None:
    base, _ = fault_server
    with pytest.raises(HTTPStatusError) as refused:
        async with Session(f"{base}/resume-refused", FAST) as session:
            await session.list_tools()
    assert refused.value.status == 405
    assert str(refused.value) == (
        f"{base}/resume-refused ended the event stream of tools/list before answering and "
        "then refused to resume it (GET with Last-Event-ID answered HTTP 405): the server's "
        "stream resumption is broken or disabled; retry, or check its event store"
    )


async def test_an_injected_httpx2_transport_runs_the_sdk_server_in_process(
    sdk_tools: Any,
) -> None:
    server = sdk_tools.build_server("in-process")
    app = server.streamable_http_app(json_response=True)
    async with server.session_manager.run():
        transport = httpx2.ASGITransport(app=app)
        # Nothing is dialled; the SDK only checks the Host header against loopback names.
        async with Session("http://127.0.0.1:8000/mcp", FAST, transport=transport) as session:
            assert session.protocol_version == "2026-07-28"
            assert session.server_info["name"] == "in-process"
            added = await session.call_tool("add", {"a": 1, "b": 1})
    assert added.structured_content == {"result": 2}


class _MemoryTransport:
    """An MCP transport object answering from a dict: the smallest injected transport."""

    name = "memory"
    label = "memory"
    protocol_version: str | None = None

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.closed = False

    async def request(self, message: dict[str, Any], headers: Any = None) -> dict[str, Any]:
        self.sent.append(message)
        method = message["method"]
        if method == "server/discover":
            result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}
        elif method == "tools/list":
            result = {"tools": [{"name": "noop", "inputSchema": {"type": "object"}}]}
        else:
            result = {"content": [{"type": "text", "text": "done"}]}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    async def notify(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def reset_session(self) -> None:
        pass

    def diagnostics(self) -> str:
        return ""

    async def aclose(self) -> None:
        self.closed = True


async def test_an_injected_mcp_transport_object() -> None:
    transport = _MemoryTransport()
    async with Session("memory", FAST, transport=transport) as session:
        assert session.protocol_version == "2026-07-28"
        assert [tool["name"] for tool in await session.list_tools()] == ["noop"]
        assert (await session.call_tool("noop")).content == [{"type": "text", "text": "done"}]
    assert transport.closed is True
    assert [m["method"] for m in transport.sent] == ["server/discover", "tools/list", "tools/call"]
    envelope = transport.sent[2]["params"]["_meta"]
    assert envelope["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


def test_an_httpx_transport_is_refused_with_what_fits_instead() -> None:
    import httpx

    with pytest.raises(InvalidInput) as refused:
        Session("http://127.0.0.1:8000/mcp", FAST, transport=httpx.MockTransport(print))  # type: ignore[arg-type]
    assert str(refused.value) == (
        "transport=MockTransport is neither an httpx2.AsyncBaseTransport (e.g. "
        "httpx2.ASGITransport; an httpx one no longer fits) nor an MCP transport object "
        "with request() and notify()"
    )


async def test_a_redirect_to_an_unparsable_location_is_refused_with_its_own_error() -> None:
    """A ``Location`` even ``urlsplit`` cannot read (an unclosed IPv6 bracket) is named as
    an invalid URL; it used to escape the error's own builder and end the transport."""

    def moved(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(307, headers={"location": "http://[::1"})

    url = "http://127.0.0.1:9/mcp"
    with pytest.raises(HTTPStatusError) as refused:
        async with Session(url, FAST, transport=httpx2.MockTransport(moved)) as session:
            await session.list_tools()
    assert refused.value.status == 307
    assert str(refused.value) == (
        f"{url} redirected (307) to an invalid URL, not followed because it is not a valid "
        "URL; if that is the real MCP endpoint, use its URL directly"
    )


def _scripted(discover: httpx2.Response, call: dict[str, Any] | None = None) -> Any:
    """A 2025-11-25 server (scripted, as a MockTransport handler) that answers
    ``server/discover`` with ``discover`` and ``tools/call`` with ``call``; every method it
    is asked is kept in ``handler.asked``."""
    asked: list[str] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        message = json.loads(request.content) if request.content else {}
        asked.append(message.get("method", request.method))
        key, method = message.get("id"), message.get("method")
        if method == "server/discover":
            return discover
        if method == "initialize":
            info = {"name": "scripted", "version": "1"}
            result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": info}
            return httpx2.Response(200, json={"jsonrpc": "2.0", "id": key, "result": result})
        if method == "tools/list":
            result = {"tools": [{"name": "only", "inputSchema": {"type": "object"}}]}
            return httpx2.Response(200, json={"jsonrpc": "2.0", "id": key, "result": result})
        if method == "tools/call" and call is not None:
            return httpx2.Response(200, json={"jsonrpc": "2.0", "id": key, **call})
        return httpx2.Response(202)

    handler.asked = asked  # type: ignore[attr-defined]
    return handler


async def test_a_discover_refused_with_an_id_less_json_rpc_error_falls_back() -> None:
    """The TypeScript SDK's servers refuse an unknown protocol version with HTTP 400 and a
    JSON-RPC error of code -32000 and ``id: null`` (the MCP conformance suite's do): the
    client falls back to ``initialize``. Code -32000 is also the SDK client's own code for a
    stream that closed, and was once taken for one ("closed the event stream")."""
    error = {"code": -32000, "message": "Bad Request: Unsupported protocol version: 2026-07-28"}
    refused = httpx2.Response(400, json={"jsonrpc": "2.0", "error": error, "id": None})
    handler = _scripted(refused)
    transport = httpx2.MockTransport(handler)
    async with Session("http://127.0.0.1:9/mcp", FAST, transport=transport) as session:
        assert [tool["name"] for tool in await session.list_tools()] == ["only"]
        assert session.protocol_version == "2025-11-25"
    assert handler.asked[:3] == ["server/discover", "initialize", "notifications/initialized"]


async def test_a_servers_own_minus_32000_error_is_its_answer() -> None:
    error = {"code": -32000, "message": "the backing store is read-only"}
    handler = _scripted(httpx2.Response(404), call={"error": error})
    transport = httpx2.MockTransport(handler)
    async with Session("http://127.0.0.1:9/mcp", FAST, transport=transport) as session:
        with pytest.raises(JSONRPCError) as refused:
            await session.call_tool("only", {})
    assert (refused.value.code, refused.value.message) == (-32000, error["message"])
    assert str(refused.value) == (
        "http://127.0.0.1:9/mcp answered tools/call with JSON-RPC error -32000: "
        "the backing store is read-only"
    )
