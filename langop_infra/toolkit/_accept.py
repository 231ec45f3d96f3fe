"""language-operator's discovery request as its controller sends it: Go's
``client.Post`` (``Content-Type: application/json``, *no* ``Accept`` header), whose answer is
read with ``json.Unmarshal``. The MCP SDK refuses a POST without ``Accept`` (406), so servers
run in JSON-response mode behind :class:`JsonWhenUnasked`, which reads a missing ``Accept`` as
``application/json`` (RFC 9110: no ``Accept`` means any type is acceptable). ``*/*`` and a
client that lists ``text/event-stream`` beside ``application/json`` get the same JSON body,
which the streamable HTTP transport allows the server to choose.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["JsonWhenUnasked"]


class JsonWhenUnasked:
    """ASGI middleware: a POST with no (or an empty) ``Accept`` header is handed on with
    ``Accept: application/json``; every other request passes unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "POST" and not _accepts(scope):
            kept = [(k, v) for k, v in scope["headers"] if k.lower() != b"accept"]
            scope = {**scope, "headers": [*kept, (b"accept", b"application/json")]}
        await self.app(scope, receive, send)


def _accepts(scope: Scope) -> bool:
    """Whether the request names any media type it accepts."""
    return any(k.lower() == b"accept" and v.strip() for k, v in scope["headers"])
