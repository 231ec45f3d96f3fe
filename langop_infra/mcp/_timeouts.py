"""``timeout_after(seconds)``: ``asyncio.timeout`` on 3.11+, an equivalent on 3.10."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

__all__ = ["timeout_after", "timeout_after_compat"]


@asynccontextmanager
async def timeout_after_compat(seconds: float | None) -> AsyncGenerator[None, None]:
    """Raise ``TimeoutError`` out of the block if it runs longer than ``seconds``.

    The 3.10 stand-in for ``asyncio.timeout``: cancel the task when time is up, and turn
    that cancellation (ours only, not one from outside) into ``TimeoutError``.
    """
    if seconds is None:
        yield
        return
    task = asyncio.current_task()
    if task is None:  # pragma: no cover - only reachable outside a task
        raise RuntimeError("timeout_after must be used inside a task")
    expired = False

    def expire() -> None:
        nonlocal expired
        expired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(max(seconds, 0), expire)
    try:
        yield
    except asyncio.CancelledError:
        if not expired:
            raise
        uncancel = getattr(task, "uncancel", None)
        if uncancel is not None:
            uncancel()
        raise TimeoutError from None
    finally:
        handle.cancel()


def timeout_after(seconds: float | None) -> AbstractAsyncContextManager[object]:
    """Raise ``TimeoutError`` out of the block if it runs longer than ``seconds``."""
    if sys.version_info >= (3, 11):
        return asyncio.timeout(seconds)
    return timeout_after_compat(seconds)  # pragma: no cover - 3.10 only
