"""A request body cap for the runtime's HTTP face, enforced while the body is read.

A declared ``Content-Length`` over the cap is refused before a byte is read; a chunked body
is read up to the cap and refused as soon as it passes it. Either way the caller gets 413 and
the app is never called; under the cap the body, already read, is handed to the app.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit"]


class BodyLimit:
    """ASGI middleware: at most ``max_bytes`` of request body reach ``app``."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self._declared_over(scope):
            await self._refuse(send)
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.max_bytes:
                await self._refuse(send)
                return
        await self.app(scope, _replay(bytes(body), receive), send)

    def _declared_over(self, scope: Scope) -> bool:
        for name, value in scope["headers"]:
            if name == b"content-length":
                return not value.isdigit() or int(value) > self.max_bytes
        return False

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"error": f"the request body is over {self.max_bytes} bytes (A2A_MAX_REQUEST_BYTES)"}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"connection", b"close")]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body read already, then what the server sends next
    (a disconnect)."""
    given = False

    async def replayed() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
