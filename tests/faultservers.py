"""Misbehaving MCP endpoints for the client fuzz tests and the schema-sync fault matrix.

Real official-SDK servers are used wherever a real part can produce the fault (slow handler,
bearer auth refusing with 401/403, an oversized tool, paginations that loop or repeat);
the raw ASGI apps here are STAND-INS for faults no real server produces on demand (random
bytes, HTML 500 pages, a wrong protocol version, malformed tool lists, streams that close
before answering). Every stand-in says so in its docstring.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

PROTOCOL_VERSION = "2025-11-25"
INIT_RESULT: dict[str, Any] = {
    "protocolVersion": PROTOCOL_VERSION,
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "stand-in", "version": "0.0.1"},
}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "remember",
        "description": "Store information in long-term memory.",
        "inputSchema": {"type": "object", "properties": {"content": {"type": "string"}}},
    },
    {"name": "recall", "description": "Search the memory.", "inputSchema": {"type": "object"}},
]
OVERSIZED_BYTES = 9 * 1024 * 1024  # above the client's default 8 MiB cap
KEEP_OPEN_SECONDS = 3.0
GOOD_TOKEN = "reader-token"  # test tokens, sent to loopback only
WEAK_TOKEN = "no-scope-token"


# -- plumbing shared by the raw ASGI stand-ins ------------------------------------------------


async def lifespan(receive: Receive, send: Send) -> None:
    while (await receive())["type"] != "lifespan.shutdown":
        await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})


async def read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            return body


def parse_message(body: bytes) -> dict[str, Any]:
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}


async def respond(
    send: Send,
    status: int,
    body: bytes,
    content_type: str = "application/json",
    extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(body))]
    await send(
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])}
    )
    await send({"type": "http.response.body", "body": body})


async def until_disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def start_truncated_sse(send: Send) -> None:
    """Start an SSE answer with a priming event and declare 4 KiB more than will come: the
    caller returns (or sleeps, then returns) with the body incomplete, and the connection
    drops as a crashed server's behind a proxy would."""
    priming = b"id: ev-1\ndata:\n\n"
    headers = [
        (b"content-type", b"text/event-stream"),
        (b"content-length", b"%d" % (len(priming) + 4096)),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": priming, "more_body": True})


def result(request_id: Any, value: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": value}).encode()


# -- (1) the fuzz target ----------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted HTTP answer: body chunks sent as they are, then end or hold the stream."""

    content_type: str
    chunks: list[bytes]
    keep_open: bool = False  # after the chunks, hold the response open (until the client leaves)
    declared_length: int | None = None  # a Content-Length header (may lie); None: chunked
    content_encoding: str | None = None


@dataclass
class ScriptedEndpoint:
    """A STAND-IN MCP endpoint answering with scripted bytes (no real server emits random bytes).

    One long-lived app for a whole property test: each example sets ``replies`` (JSON-RPC
    method -> :class:`Reply`) and ``get_reply`` (the answer to a GET, i.e. a stream resume;
    ``None``: 405). Methods without a scripted reply are answered correctly (``initialize``,
    ``tools/list`` with :data:`TOOLS`, 202 to notifications), so a fuzzed body can sit at
    any step of the conversation. With ``legacy`` set it plays a legacy HTTP+SSE server
    instead (:meth:`play_legacy`).
    """

    replies: dict[str, Reply] = field(default_factory=dict)
    get_reply: Reply | None = None
    legacy: LegacyScript | None = None
    _stream: asyncio.Queue[bytes | None] | None = field(default=None, repr=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        message = parse_message(await read_body(receive))
        method = message.get("method")
        if self.legacy is not None:
            await self.play_legacy(self.legacy, scope, message, receive, send)
            return
        if scope["method"] == "GET":
            reply = self.get_reply
        elif scope["method"] == "DELETE":
            await respond(send, 200, b"")
            return
        else:
            reply = self.replies.get(method or "")
        if reply is not None:
            await self.play(reply, receive, send)
        elif scope["method"] == "GET":
            await respond(send, 405, b"Method Not Allowed", "text/plain")
        elif method == "initialize":
            await respond(send, 200, result(message.get("id"), INIT_RESULT))
        elif method == "tools/list":
            await respond(send, 200, result(message.get("id"), {"tools": TOOLS}))
        else:
            await respond(send, 202, b"")

    @staticmethod
    async def play(reply: Reply, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", reply.content_type.encode())]
        if reply.declared_length is not None:
            headers.append((b"content-length", b"%d" % reply.declared_length))
        if reply.content_encoding:
            headers.append((b"content-encoding", reply.content_encoding.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for chunk in reply.chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if reply.keep_open:
            # Bounded: uvicorn may never report the disconnect of a connection the client
            # reused (its pipelined request takes the disconnect), and shutdown waits for us.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until_disconnected(receive), KEEP_OPEN_SECONDS)
        await send({"type": "http.response.body", "body": b""})

    async def play_legacy(
        self, script: LegacyScript, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """The legacy HTTP+SSE dialogue: POST to the URL refused (405), GET opens the stream,
        requests POSTed to ``/messages`` get 202 and their scripted answer on the stream."""
        if scope["method"] == "GET":
            self._stream = queue = asyncio.Queue()
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            await send({"type": "http.response.body", "body": script.prelude, "more_body": True})
            gone = asyncio.ensure_future(until_disconnected(receive))
            while True:
                item = asyncio.ensure_future(queue.get())
                await asyncio.wait(
                    {item, gone}, timeout=KEEP_OPEN_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                if not item.done() or item.result() is None:
                    item.cancel()
                    gone.cancel()
                    await send({"type": "http.response.body", "body": b""})
                    return
                await send({"type": "http.response.body", "body": item.result(), "more_body": True})
        if scope["method"] != "POST" or scope["path"] != "/messages":
            await respond(send, 405, b"Method Not Allowed", "text/plain")
            return
        await respond(send, 202, b"Accepted", "text/plain")
        method = message.get("method")
        if self._stream is None or "id" not in message or not isinstance(method, str):
            return
        if method in script.replies:
            await self._stream.put(script.replies[method])
        else:
            value = INIT_RESULT if method == "initialize" else {"tools": TOOLS}
            await self._stream.put(
                b"event: message\ndata: " + result(message["id"], value) + b"\n\n"
            )
        if script.end_after == method:
            await self._stream.put(None)


@dataclass
class LegacyScript:
    """What a legacy-SSE stand-in writes on its event stream."""

    prelude: bytes  # first, normally ``event: endpoint`` naming ``/messages``
    replies: dict[str, bytes]  # method -> bytes written when that request is POSTed
    end_after: str | None = None  # end the stream after this method's answer


# -- (2) schema-sync fault stand-ins ----------------------------------------------------------


class SyncFaults:
    """STAND-INS for the faults no official-SDK server produces on demand, one per path.

    ``/<fault>/mcp``; unless the fault is in the handshake, each answers ``initialize`` and
    notifications correctly, then misbehaves on ``tools/list``.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        message = parse_message(await read_body(receive))
        fault = scope["path"].strip("/").removesuffix("/mcp").replace("-", "_")
        route = getattr(self, f"route_{fault}", None)
        if route is None:
            await respond(send, 404, b"no such fault", "text/plain")
        elif scope["method"] == "DELETE":
            await respond(send, 200, b"")
        else:
            await route(scope, message, receive, send)

    @staticmethod
    async def handshake(message: dict[str, Any], send: Send) -> bool:
        """Answer ``initialize`` and notifications as a correct server; False otherwise.

        ``server/discover`` gets "method not found", as from a server older than 2026-07-28.
        """
        if message.get("method") == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error})
            await respond(send, 200, body.encode())
            return True
        if message.get("method") == "initialize":
            await respond(send, 200, result(message["id"], INIT_RESULT))
            return True
        if "id" not in message:
            await respond(send, 202, b"")
            return True
        return False

    async def route_ok(self, scope: Scope, message: dict, receive: Receive, send: Send) -> None:
        """STAND-IN control: a correct server listing :data:`TOOLS` (proves the plumbing)."""
        if not await self.handshake(message, send):
            await respond(send, 200, result(message["id"], {"tools": TOOLS}))

    async def route_html500(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: a reverse proxy's HTML error page (no MCP server writes HTML)."""
        page = (
            b"<!DOCTYPE html><html><head><title>500</title><style>body{color:red}</style>"
            b"</head><body><h1>Internal Server Error</h1><p>upstream &amp; cache are down</p>"
            b"</body></html>"
        )
        await respond(send, 500, page, "text/html; charset=utf-8")

    async def route_bad_version(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: answers initialize with protocol version 1999-01-01 (the SDK negotiates)."""
        if message.get("method") == "initialize":
            body = result(message["id"], {**INIT_RESULT, "protocolVersion": "1999-01-01"})
            await respond(send, 200, body)
        elif not await self.handshake(message, send):
            await respond(send, 200, result(message["id"], {"tools": TOOLS}))

    async def route_tools_not_list(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: ``tools`` is an object keyed by name, not a list."""
        if not await self.handshake(message, send):
            tools = {tool["name"]: tool for tool in TOOLS}
            await respond(send, 200, result(message["id"], {"tools": tools}))

    async def route_nameless_tool(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: the second tool has no name."""
        if not await self.handshake(message, send):
            tools = [TOOLS[0], {k: v for k, v in TOOLS[1].items() if k != "name"}]
            await respond(send, 200, result(message["id"], {"tools": tools}))

    async def route_not_json(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: tools/list answered with a Python repr labelled application/json."""
        if not await self.handshake(message, send):
            text = repr({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": TOOLS}})
            await respond(send, 200, text.encode())

    async def route_closes_mid_stream(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: tools/list opens an SSE stream, sends a priming event and ends it; every
        resume (GET with Last-Event-ID) gets a stream that ends at once, too."""
        if scope["method"] != "GET" and await self.handshake(message, send):
            return
        priming = b"id: ev-1\ndata:\n\n" if scope["method"] != "GET" else b""
        await respond(send, 200, priming, "text/event-stream")

    async def route_drops_connection(
        self, scope: Scope, message: dict, receive: Receive, send: Send
    ) -> None:
        """STAND-IN: tools/list starts an SSE answer with a priming event, then the connection
        drops before the declared body length was sent (a crashed server behind a proxy)."""
        if await self.handshake(message, send):
            return
        await start_truncated_sse(send)
        # Returning with the body incomplete makes uvicorn close the connection.


# -- (3) official-SDK servers that produce a fault themselves ---------------------------------


def memory_server() -> MCPServer:
    """A correct official-SDK server with one tool: the source of a previous good sync."""
    server = MCPServer("memory", version="1.0.0", log_level="WARNING")

    @server.tool()
    def remember(content: str, tags: list[str] | None = None) -> str:
        """Store information in long-term memory."""
        return "Stored."

    return server


class StaticTokens:
    """Token verifier: :data:`GOOD_TOKEN` has scope ``tools:read``, :data:`WEAK_TOKEN` none."""

    async def verify_token(self, token: str) -> AccessToken | None:
        scopes = {GOOD_TOKEN: ["tools:read"], WEAK_TOKEN: []}.get(token)
        if scopes is None:
            return None
        return AccessToken(token=token, client_id="sync", scopes=scopes)


def guarded_memory_server(base: str) -> MCPServer:
    """The official SDK's bearer auth in front of a memory server: no token gives its own 401
    with ``WWW-Authenticate``, a token without scope ``tools:read`` its 403."""
    server = MCPServer(
        "guarded",
        version="1.0.0",
        log_level="WARNING",
        token_verifier=StaticTokens(),
        auth=AuthSettings(
            issuer_url="https://issuer.example.com",
            resource_server_url=f"{base}/mcp",
            required_scopes=["tools:read"],
            validate_token_resource=False,
        ),
    )

    @server.tool()
    def remember(content: str) -> str:
        """Store information in long-term memory."""
        return "Stored."

    return server


def auth_server_app(base: str) -> Starlette:
    """:func:`guarded_memory_server` as an ASGI app."""
    return guarded_memory_server(base).streamable_http_app()


def paged_server_app(pages: dict[str | None, tuple[list[str], str | None]]) -> Starlette:
    """An official-SDK low-level server whose tools/list serves ``pages``: cursor -> (tool
    names, next cursor). A cursor may lead back to a page already served, or a page may
    repeat a tool: the list changes between pages."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        names, next_cursor = pages[params.cursor if params is not None else None]
        tools = [
            types.Tool(name=n, description=f"Tool {n}.", input_schema={"type": "object"})
            for n in names
        ]
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    return Server("paged", version="1.0.0", on_list_tools=list_tools).streamable_http_app()


def slow_server_app(delay: float, tool: str = "late") -> Starlette:
    """An official-SDK low-level server whose tools/list handler takes ``delay`` seconds to
    list one tool, ``tool``."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await anyio.sleep(delay)
        return types.ListToolsResult(tools=[types.Tool(name=tool, input_schema={"type": "object"})])

    return Server("slow", version="1.0.0", on_list_tools=list_tools).streamable_http_app()


def gathering_server_app(barrier: threading.Barrier, tool: str) -> Starlette:
    """An official-SDK low-level server whose tools/list handler answers only once
    ``barrier``'s other parties (other servers' handlers) have all arrived too: a client
    that lists them one at a time never gets past the first (``BrokenBarrierError`` when the
    barrier's own timeout, a hang guard, runs out)."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await anyio.to_thread.run_sync(barrier.wait)
        return types.ListToolsResult(tools=[types.Tool(name=tool, input_schema={"type": "object"})])

    return Server("gathering", version="1.0.0", on_list_tools=list_tools).streamable_http_app()


def oversized_server() -> MCPServer:
    """An official-SDK server one of whose tools has a description over the 8 MiB cap."""
    server = MCPServer("oversized", version="1.0.0", log_level="WARNING")

    def bulky(text: str) -> str:
        return text

    server.add_tool(bulky, name="bulky", description="x" * OVERSIZED_BYTES)
    return server
