"""Whether the caller of the current request is still there.

ASGI servers report a caller that closed its connection as an ``http.disconnect`` from
``receive``, but only to whoever asks; a2a-sdk never asks during ``message/send``, so a turn
whose caller gave up ran on to its end. :class:`CallerWatch` asks for every request, once its
body is read, and sets :data:`CALLER_GONE`'s event for that request when the caller leaves.
a2a-sdk runs the executor in the context of the request that sent the message, so the turn
sees its own caller's event.
"""

from __future__ import annotations

import asyncio
import contextvars

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CALLER_GONE", "CallerWatch"]

CALLER_GONE: contextvars.ContextVar[asyncio.Event] = contextvars.ContextVar("caller_gone")


class CallerWatch:
    """ASGI middleware: a request's caller leaving sets that request's ``CALLER_GONE``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = asyncio.Event()
        token = CALLER_GONE.set(gone)
        watching: list[asyncio.Task[None]] = []

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass  # a server gives nothing else once the body is read; ignore it if it does
            gone.set()

        async def watched() -> Message:
            if watching:  # the body is read: the app waits for the caller to leave
                await gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            elif not message.get("more_body", False):
                watching.append(asyncio.get_running_loop().create_task(watch()))
            return message

        try:
            await self.app(scope, watched, send)
        finally:
            CALLER_GONE.reset(token)
            for task in watching:
                task.cancel()
