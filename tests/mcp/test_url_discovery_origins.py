"""The ``url`` transport never carries configured credentials to another origin.

Two real loopback servers on two ports (two origins), each recording the headers of every
request it receives: the discovery document is served by one, the official SDK's MCP server
by the other (or by the same one, for the control case)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from langop_infra.agent.runtime import ServerEntry, connect_tool_registry
from langop_infra.mcp import ClientOptions

pytestmark = pytest.mark.anyio

FAST = ClientOptions(timeout=5, deadline=10, connect_retries=0)
TOKEN = "Bearer url-discovery-canary-51c2"
SDK_TOOLS = {"add", "echo", "fail", "chatty", "polled"}


class Recorder:
    """ASGI middleware keeping (path, headers) of every HTTP request that reaches ``app``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.seen.append((scope["path"], headers))
        await self.app(scope, receive, send)

    def credentials(self) -> list[str]:
        return [h["authorization"] for _, h in self.seen if "authorization" in h]


def discovery_app(endpoint: str, mount: Any = None) -> Starlette:
    async def well_known(_: Any) -> JSONResponse:
        return JSONResponse({"name": "found", "endpoint": endpoint})

    routes: list[Any] = [Route("/.well-known/mcp", well_known)]
    lifespan = None
    if mount is not None:
        routes.append(Mount("/tools", mount))
        lifespan = lambda _: mount.router.lifespan_context(mount)  # noqa: E731
    return Starlette(routes=routes, lifespan=lifespan)


@contextmanager
def sdk_origin(serve_app: Any, sdk_tools: Any) -> Iterator[tuple[str, Recorder]]:
    app = sdk_tools.build_server("sdk-elsewhere").streamable_http_app(json_response=True)
    recorder = Recorder(app)
    with serve_app(recorder) as base:
        yield base, recorder


async def test_headers_never_follow_the_document_to_another_origin(
    serve_app: Any, sdk_tools: Any
) -> None:
    with sdk_origin(serve_app, sdk_tools) as (other, at_endpoint):
        at_document = Recorder(discovery_app(f"{other}/mcp"))
        with serve_app(at_document) as base:
            entry = ServerEntry("found", base, {"Authorization": TOKEN}, transport="url")
            async with await connect_tool_registry([entry], FAST) as registry:
                assert registry.failures == []
                assert {t.tool_name for t in registry.tools.values()} == SDK_TOOLS
                await registry.call_tool("found__echo", {"text": "hi"})
                warnings = list(registry.warnings)
    # The document's own origin got the header; the other origin, many requests, none.
    assert at_document.credentials() == [TOKEN]
    assert len(at_endpoint.seen) >= 3
    assert at_endpoint.credentials() == []
    assert [w for w in warnings if "another origin" in w] == [
        f"found: {base} names the endpoint {other}/mcp on another origin; connecting without "
        "the configured headers or credentials (give that endpoint itself with transport: "
        "http to send them there)"
    ]
    assert TOKEN not in "\n".join(warnings)


async def test_a_same_origin_endpoint_still_gets_the_headers(
    serve_app: Any, sdk_tools: Any
) -> None:
    sdk_app = sdk_tools.build_server("sdk-here").streamable_http_app(json_response=True)
    recorder = Recorder(discovery_app("/tools/mcp", mount=sdk_app))
    with serve_app(recorder) as base:
        entry = ServerEntry("found", base, {"Authorization": TOKEN}, transport="url")
        async with await connect_tool_registry([entry], FAST) as registry:
            assert {t.tool_name for t in registry.tools.values()} == SDK_TOOLS
            assert [w for w in registry.warnings if "another origin" in w] == []
    at_endpoint = [h for path, h in recorder.seen if path.startswith("/tools/")]
    assert at_endpoint and all(h.get("authorization") == TOKEN for h in at_endpoint)


async def test_global_headers_do_not_follow_either(serve_app: Any, sdk_tools: Any) -> None:
    """Headers given in the client options (every server's) are configured credentials too."""
    options = ClientOptions(
        timeout=5, deadline=10, connect_retries=0, headers={"Authorization": TOKEN}
    )
    with sdk_origin(serve_app, sdk_tools) as (other, at_endpoint):
        document = discovery_app(f"{other}/mcp")
        with serve_app(document) as base:
            entry = ServerEntry("found", base, transport="url")
            async with await connect_tool_registry([entry], options) as registry:
                assert {t.tool_name for t in registry.tools.values()} == SDK_TOOLS
    assert at_endpoint.seen and at_endpoint.credentials() == []
