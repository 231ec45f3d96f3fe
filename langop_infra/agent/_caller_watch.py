"""Whether the caller of the current request is still there.

ASGI servers report a caller that closed its connection as an ``http.disconnect`` from
``receive``, but only to whoever asks; a2a-sdk never asks during ``message/send``, so a turn
whose caller gave up ran on to its end. :class:`CallerWatch` gives every request a
:class:`Caller` (in :data:`CALLER`); once the body is read and something listens for that
caller (a waiting turn, through :meth:`Caller.on_leave`), it asks the server and marks the
caller gone when it leaves. Most requests never wait on their caller, and pay no listener.
a2a-sdk runs the executor in the context of the request that sent the message, so the turn
sees its own caller.
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
        self._wanted = False
        self._start: Callable[[], None] | None = None

    def leave(self) -> None:
        if not self.gone.is_set():
            self.gone.set()
            for callback in self._callbacks:
                callback()

    def on_leave(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` when the caller leaves (listening from now on); the function
        that forgets it."""
        self._callbacks.append(callback)
        self.listen()
        return lambda: self._callbacks.remove(callback)

    def listen(self) -> None:
        """Listen for the caller leaving: now if the body is read, else once it is."""
        self._wanted = True
        self._started()

    def listen_with(self, start: Callable[[], None]) -> None:
        """The body is read: ``start`` listens, now if something listens already, else once
        something does."""
        self._start = start
        self._started()

    def _started(self) -> None:
        if self._wanted and self._start is not None:
            start, self._start = self._start, None
            start()


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
        body_read = False

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass  # a server gives nothing else once the body is read; ignore it if it does
            caller.leave()

        def start() -> None:
            watching.append(asyncio.get_running_loop().create_task(watch()))

        async def watched() -> Message:
            nonlocal body_read
            if body_read:  # the app waits for the caller to leave
                caller.listen()
                await caller.gone.wait()
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.disconnect":
                caller.leave()
            elif not message.get("more_body", False):
                body_read = True
                caller.listen_with(start)
            return message

        try:
            await self.app(scope, watched, send)
        finally:
            CALLER.reset(token)
            for task in watching:
                task.cancel()
