"""Scripted MCP endpoints that misbehave, one per path, for the client's fault tests.

No real MCP server misbehaves on demand (never answering, looping cursors, HTML 500s...), so
these are raw ASGI handlers. Unless its fault is in the handshake, each path answers
``initialize`` and notifications as a correct streamable HTTP server would, then misbehaves
on ``tools/list``. Every request is recorded (path, method, headers, JSON body) so tests can
check what the client sent.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from tests.faultservers import lifespan, read_body

Scope = dict[str, Any]

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "0.0.1"},
}
TOOL = {"name": "only", "description": "The one tool.", "inputSchema": {"type": "object"}}
BIG_SIZE = 300_000
WWW_AUTHENTICATE = 'Bearer realm="tools", error="invalid_token"'
GOOD_TOKEN = "Bearer right-token"


@dataclass
class Recorded:
    path: str
    method: str
    headers: dict[str, str]
    message: Any
    client_port: int  # the client's port: one per TCP connection
    names: tuple[str, ...] = ()  # every header line's name, repeats kept


class FaultServer:
    """The ASGI app; ``requests`` lists everything it received."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.garbage: tuple[str, bytes] = ("application/json", b"")
        self.legacy_streams: dict[str, tuple[str, asyncio.Queue[Any]]] = {}
        self.resume_id: Any = None

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        body = await read_body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        message = json.loads(body) if body else None
        self.requests.append(
            Recorded(
                scope["path"],
                scope["method"],
                headers,
                message,
                scope["client"][1],
                tuple(k.decode().lower() for k, _ in scope["headers"]),
            )
        )
        if scope["path"].startswith("/named/"):
            route = self.named_tools
        else:
            route = getattr(self, "route_" + scope["path"].strip("/").replace("-", "_"), None)
        if route is None:
            await respond(send, 404, b"no such path", "text/plain")
            return
        if scope["method"] == "DELETE":
            await respond(send, 200, b"")
            return
        await route(Call(scope, receive, send, headers, message))

    async def named_tools(self, call: Call) -> None:
        """``/named/a,b,b``: a correct server whose tools are named by the path."""
        if not await call.handshake():
            names = call.scope["path"].removeprefix("/named/").split(",")
            await call.reply_json(call.result({"tools": [{**TOOL, "name": n} for n in names]}))

    # -- one route per fault -------------------------------------------------------------

    async def route_bad_calls(self, call: Call) -> None:
        """Lists fine; ``tools/call`` of ``slow`` never answers, ``garbled`` is not JSON,
        ``refused`` is a JSON-RPC error."""
        if await call.handshake():
            return
        if call.method == "tools/list":
            names = ["slow", "garbled", "refused"]
            await call.reply_json(call.result({"tools": [{**TOOL, "name": n} for n in names]}))
            return
        name = (call.message.get("params") or {}).get("name")
        if name == "slow":
            await call.until_disconnected()
        elif name == "garbled":
            await respond(call.send, 200, b"<html>oops")
        else:
            await call.reply_error(-32603, "database is down", status=200)

    async def route_hostile(self, call: Call) -> None:
        """Tool names and descriptions that try to drive the terminal."""
        if not await call.handshake():
            names = ["工具", "ok\x1b[2J", "rtl\u202eevil"]
            tools = [
                {**TOOL, "name": n, "title": "Echo", "description": "\x1b]0;pwned\x07 hi"}
                for n in names
            ]
            await call.reply_json(call.result({"tools": tools}))

    async def route_never(self, call: Call) -> None:
        await call.until_disconnected()

    async def route_html500(self, call: Call) -> None:
        page = (
            b"<html><head><style>h1{color:red}</style></head><body><h1>Internal Server Error</h1>"
        )
        page += b"<p>database &amp; cache are down</p></body></html>"
        await respond(call.send, 500, page, "text/html")

    async def route_auth(self, call: Call) -> None:
        if call.headers.get("authorization") != GOOD_TOKEN:
            body = json.dumps({"error": "invalid_token"}).encode()
            await respond(call.send, 401, body, extra=[(b"www-authenticate", WWW_AUTHENTICATE)])
            return
        await self.route_ok(call)

    async def route_malformed(self, call: Call) -> None:
        if not await call.handshake():
            await respond(call.send, 200, b'{"jsonrpc": "2.0", "id": 2, "result": {"tools": [')

    async def route_wrong_id(self, call: Call) -> None:
        if not await call.handshake():
            await call.reply_json({"jsonrpc": "2.0", "id": 999, "result": {"tools": []}})

    async def route_sse_silent(self, call: Call) -> None:
        if await call.handshake():
            return
        await call.start_sse()
        await call.sse(b"id: 0\ndata: \n\n")
        disconnected = asyncio.ensure_future(call.until_disconnected())
        while not disconnected.done():
            await call.sse(b": keepalive\n\n")
            await asyncio.wait({disconnected}, timeout=0.1)

    async def route_huge(self, call: Call) -> None:
        if not await call.handshake():
            await call.reply_json(call.result({"tools": [big_tool()]}))

    async def route_huge_chunked(self, call: Call) -> None:
        if await call.handshake():
            return
        body = json.dumps(call.result({"tools": [big_tool()]})).encode()
        await call.send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        for start in range(0, len(body), 16_384):
            await call.send(
                {
                    "type": "http.response.body",
                    "body": body[start : start + 16_384],
                    "more_body": True,
                }
            )
        await call.send({"type": "http.response.body", "body": b""})

    async def route_huge_sse(self, call: Call) -> None:
        if await call.handshake():
            return
        data = json.dumps(call.result({"tools": [big_tool()]})).encode()
        await call.start_sse()
        for start in range(0, len(data), 16_384):
            await call.sse((b"data: " if start == 0 else b"") + data[start : start + 16_384])
        await call.sse(b"\n\n", last=True)

    async def route_garbage(self, call: Call) -> None:
        """Answers every request with ``self.garbage`` (content type, body): a fuzz target."""
        content_type, body = self.garbage
        await respond(call.send, 200, body, content_type)

    async def route_garbage_list(self, call: Call) -> None:
        """A correct handshake, then ``self.garbage`` as the tools/list answer."""
        if not await call.handshake():
            await self.route_garbage(call)

    async def route_legacy(self, call: Call) -> None:
        """A legacy HTTP+SSE server (GET only); ``?fault=`` one of evil-endpoint,
        userinfo-endpoint, huge, close."""
        if call.scope["method"] != "GET":
            await respond(call.send, 405, b"Method Not Allowed", "text/plain")
            return
        fault = call.query("fault")
        stream_id = str(len(self.legacy_streams) + 1)
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self.legacy_streams[stream_id] = (fault, queue)
        endpoint = f"/legacy-messages?sid={stream_id}"
        host, port = call.scope["server"]
        if fault == "evil-endpoint":
            endpoint = f"http://localhost:{port}{endpoint}"
        elif fault == "userinfo-endpoint":  # the same origin, named with a user: odd, not evil
            endpoint = f"http://someone:hunter2@{host}:{port}{endpoint}"
        await call.start_sse()
        await call.sse(f"event: endpoint\r\ndata: {endpoint}\r\n\r\n".encode())
        disconnected = asyncio.ensure_future(call.until_disconnected())
        while True:
            next_message = asyncio.ensure_future(queue.get())
            await asyncio.wait({next_message, disconnected}, return_when=asyncio.FIRST_COMPLETED)
            if not next_message.done():
                next_message.cancel()
                return
            message = next_message.result()
            if message is None:
                await call.sse(b"", last=True)
                return
            await call.sse(b"event: message\ndata: " + json.dumps(message).encode() + b"\n\n")

    async def route_legacy_messages(self, call: Call) -> None:
        fault, queue = self.legacy_streams[call.query("sid")]
        await respond(call.send, 202, b"Accepted", "text/plain")
        if "id" not in call.message:
            return
        if call.method == "initialize":
            await queue.put(call.result(INIT_RESULT))
        elif fault == "huge":
            await queue.put(call.result({"tools": [big_tool()]}))
        elif fault == "close":
            await queue.put(None)
        else:
            await queue.put(call.result({"tools": [TOOL]}))

    async def route_loop_cursor(self, call: Call) -> None:
        if not await call.handshake():
            await call.reply_json(call.result({"tools": [TOOL], "nextCursor": "again"}))

    async def route_endless(self, call: Call) -> None:
        if not await call.handshake():
            cursor = int((call.message.get("params") or {}).get("cursor") or 0)
            tool = {**TOOL, "name": f"tool_{cursor}"}
            await call.reply_json(call.result({"tools": [tool], "nextCursor": str(cursor + 1)}))

    async def route_bad_version(self, call: Call) -> None:
        if call.method == "initialize":
            await call.reply_json(call.result({**INIT_RESULT, "protocolVersion": "1999-01-01"}))
        else:
            await self.route_ok(call)

    async def route_old_version(self, call: Call) -> None:
        if call.method == "initialize":
            await call.reply_json(call.result({**INIT_RESULT, "protocolVersion": "2024-11-05"}))
        else:
            await self.route_ok(call)

    async def route_future(self, call: Call) -> None:
        """A 2026-style server that speaks only a version from the future."""
        await call.reply_error(
            -32022, "Unsupported protocol version", {"supported": ["2099-01-01"]}
        )

    async def route_future_dual(self, call: Call) -> None:
        """Refuses 2026-07-28 with -32022 naming 2025-11-25, then serves the handshake."""
        if call.method == "server/discover":
            data = {"supported": ["2099-01-01", "2025-11-25"], "requested": "2026-07-28"}
            await call.reply_error(-32022, "Unsupported protocol version", data)
        else:
            await self.route_ok(call)

    async def route_header_mismatch(self, call: Call) -> None:
        """Answers discover with -32020 (HTTP 400), as behind a header-rewriting proxy."""
        if call.method == "server/discover":
            await call.reply_error(-32020, "mcp-method header does not match", status=400)
        else:
            await self.route_ok(call)

    async def route_redirect_away(self, call: Call) -> None:
        port = call.scope["server"][1]
        await respond(call.send, 307, b"", extra=[(b"location", f"http://localhost:{port}/ok")])

    async def route_moved(self, call: Call) -> None:
        await respond(call.send, 308, b"", extra=[(b"location", "/ok")])

    async def route_resume_refused(self, call: Call) -> None:
        """Ends the tools/list stream after a priming event, then refuses the resume GET."""
        if call.scope["method"] == "GET":
            await respond(call.send, 405, b"", extra=[(b"allow", "POST")])
        elif not await call.handshake(session_id="unresumable-1"):
            await call.start_sse()
            await call.sse(b"id: p-1\ndata:\n\n", last=True)

    async def route_redirect_here(self, call: Call) -> None:
        await respond(call.send, 307, b"", extra=[(b"location", "/ok")])

    async def route_ok(self, call: Call) -> None:
        """A correct server: session id, SSE answer with a notification and a ping first."""
        if call.scope["method"] == "GET":
            await respond(call.send, 405, b"", extra=[(b"allow", "POST, DELETE")])  # no GET stream
        elif call.message is not None and "method" not in call.message:
            await respond(call.send, 202, b"")  # the client's answer to our ping
        elif not await call.handshake(session_id="scripted-1"):
            await call.start_sse()
            await call.sse(b": comment\r\nid: 1\r\ndata:\r\n\r\n")
            note = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info"},
            }
            await call.sse(b"data: " + json.dumps(note).encode() + b"\r\n\r\n")
            ping = {"jsonrpc": "2.0", "id": "server-ping-1", "method": "ping"}
            await call.sse(b"event: message\ndata: " + json.dumps(ping).encode() + b"\n\n")
            reply = json.dumps(call.result({"tools": [TOOL]}), indent=1).encode()
            # A multi-line data field: the parser joins the lines with "\n", still valid JSON.
            lines = b"".join(b"data: " + line + b"\n" for line in reply.split(b"\n"))
            await call.sse(lines + b"\n", last=True)

    async def route_resume(self, call: Call) -> None:
        """Ends the tools/list stream after a priming event; the answer comes on GET resume."""
        if call.scope["method"] == "GET":
            if call.headers.get("last-event-id") != "p-1":
                await respond(call.send, 400, b"expected Last-Event-ID p-1", "text/plain")
                return
            await call.start_sse()
            answer = {"jsonrpc": "2.0", "id": self.resume_id, "result": {"tools": [TOOL]}}
            await call.sse(b"id: p-2\ndata: " + json.dumps(answer).encode() + b"\n\n", last=True)
        elif not await call.handshake(session_id="resumable-1"):
            self.resume_id = call.message.get("id")
            await call.start_sse()
            await call.sse(b"retry: 10\nid: p-1\ndata:\n\n", last=True)


def big_tool() -> dict[str, Any]:
    return {**TOOL, "description": "x" * BIG_SIZE}


class Call:
    """One request to a route, with helpers to answer it."""

    def __init__(
        self, scope: Scope, receive: Any, send: Any, headers: dict[str, str], message: Any
    ):
        self.scope, self.receive, self.send = scope, receive, send
        self.headers, self.message = headers, message
        self.method = message.get("method") if isinstance(message, dict) else None

    def query(self, name: str) -> str:
        return parse_qs(self.scope["query_string"].decode()).get(name, [""])[0]

    def result(self, result: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.message.get("id"), "result": result}

    async def handshake(self, session_id: str | None = None) -> bool:
        """Answer initialize or a notification as a correct server; False for anything else.

        ``server/discover`` gets "method not found", as from a server older than 2026-07-28.
        """
        if self.method == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            await self.reply_json({"jsonrpc": "2.0", "id": self.message.get("id"), "error": error})
            return True
        if self.method == "initialize":
            extra = [(b"mcp-session-id", session_id)] if session_id else []
            await self.reply_json(self.result(INIT_RESULT), extra)
            return True
        if isinstance(self.message, dict) and "id" not in self.message:
            await respond(self.send, 202, b"")
            return True
        return False

    async def reply_error(
        self, code: int, message: str, data: Any = None, status: int = 400
    ) -> None:
        error = {"code": code, "message": message, **({"data": data} if data else {})}
        body = {"jsonrpc": "2.0", "id": self.message.get("id"), "error": error}
        await respond(self.send, status, json.dumps(body).encode())

    async def reply_json(self, payload: Any, extra: list[tuple[bytes, str]] | None = None) -> None:
        await respond(self.send, 200, json.dumps(payload).encode(), extra=extra)

    async def start_sse(self) -> None:
        await self.send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )

    async def sse(self, chunk: bytes, *, last: bool = False) -> None:
        await self.send({"type": "http.response.body", "body": chunk, "more_body": not last})

    async def until_disconnected(self) -> None:
        while (await self.receive())["type"] != "http.disconnect":
            pass


async def respond(
    send: Any,
    status: int,
    body: bytes,
    content_type: str = "application/json",
    extra: list[tuple[bytes, str]] | None = None,
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
    ]
    headers += [(name, value.encode()) for name, value in extra or []]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
