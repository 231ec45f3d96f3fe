"""Whether the caller of the current request is still there.

ASGI servers report a caller that closed its connection as an ``http.disconnect`` from
``receive``, but only to whoever asks; a2a-sdk never asks during ``message/send``, so a turn
whose caller gave up ran on to its end. :class:`CallerWatch` asks for every request, once its
body is read, and marks that request's :class:`Caller` (in :data:`CALLER`) gone when the
caller leaves. a2a-sdk runs the executor in the context of the request that sent the message,
so the turn sees its own caller.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CALLER", "Caller", "CallerWatch"]


class Caller:
    """One request's caller: whether it left, and what to call when it does (callbacks, so a
    turn need not keep a task waiting on it)."""

    def __init__(self) -> None:
        self.gone = asyncio.Event()
        self._callbacks: list[Callable[[], object]] = []

    def leave(self) -> None:
        if not self.gone.is_set():
            self.gone.set()
            for callback in self._callbacks:
                callback()

    def on_leave(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` when the caller leaves; the function that forgets it."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback)


CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")


class CallerWatch:
    """ASGI middleware: a request's caller leaving marks that request's ``CALLER`` gone."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        caller = Caller()
        token = CALLER.set(caller)
        watching: list[asyncio.Task[None]] = []

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass  # a server gives nothing else once the body is read; ignore it if it does
            caller.leave()

        async def watched() -> Message:
            if watching:  # the body is read: the app waits for the caller to leave
                await caller.gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                caller.leave()
            elif not message.get("more_body", False):
                watching.append(asyncio.get_running_loop().create_task(watch()))
            return message

        try:
            await self.app(scope, watched, send)
        finally:
            CALLER.reset(token)
            for task in watching:
                task.cancel()
