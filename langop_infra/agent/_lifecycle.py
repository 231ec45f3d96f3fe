"""A registry server's lifecycle: its status, the backoff between restarts, and whether it
is wedged."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["WEDGED_AFTER", "ServerState", "ServerStatus", "Stalls", "Wait", "restart_delay"]

ServerState = Literal["connecting", "connected", "failed", "disconnected"]
Wait = Literal["all", "first", "none"]
# A stdio server that exits is started again after base * 2**n seconds (n: restarts so far),
# times a jitter factor in [0.5, 1], at most MAX_RESTARTS times in a row; one that ran for
# STABLE_SECONDS since its last start counts as healthy again.
RESTART_BASE_SECONDS = 0.2
RESTART_CAP_SECONDS = 30.0
MAX_RESTARTS = 5
STABLE_SECONDS = 60.0
WEDGED_AFTER = 3  # calls in a row that timed out or found the server busy
_STALLED = frozenset({"timeout", "busy"})


@dataclass(frozen=True)
class ServerStatus:
    """One server as the registry sees it: ``state``, its tool count, the last error."""

    name: str
    state: ServerState
    transport: str = "http"
    tools: int = 0
    error: str = ""


def restart_delay(restarts: int, base: float = RESTART_BASE_SECONDS) -> float:
    """Seconds before restart number ``restarts + 1``: exponential, capped, with jitter (so
    that agents restarting together do not hammer a shared dependency in step)."""
    return min(RESTART_CAP_SECONDS, base * 2**restarts) * random.uniform(0.5, 1.0)


class Stalls:
    """Calls in a row, per server, that timed out or found it busy: a server with
    :data:`WEDGED_AFTER` of them is wedged (``/readyz`` counts it out) until it answers a
    call or a :meth:`probe`."""

    def __init__(self) -> None:
        self._count: dict[str, int] = {}
        self._probes: dict[str, asyncio.Task[bool]] = {}

    def record(self, server: str, kind: str | None) -> None:
        """A call to ``server`` answered (``kind`` None) or failed with an error of ``kind``."""
        if kind is None:
            self._count.pop(server, None)
        elif kind in _STALLED:
            self._count[server] = self._count.get(server, 0) + 1

    def wedged(self, servers: Iterable[str]) -> list[str]:
        """Those of ``servers`` that are wedged."""
        return [s for s in servers if self._count.get(s, 0) >= WEDGED_AFTER]

    async def recheck(self, server: str, answers: Callable[[], Awaitable[object]]) -> bool:
        """Whether ``answers()`` succeeds now (it raises when the server does not answer);
        if so ``server`` is no longer wedged."""
        try:
            await answers()
        except Exception:  # any failure: still wedged
            return False
        self._count.pop(server, None)
        return True

    def probe(self, server: str, answers: Callable[[], Awaitable[object]]) -> None:
        """:meth:`recheck` in the background, one at a time per server."""
        running = self._probes.get(server)
        if running is None or running.done():
            task = asyncio.get_running_loop().create_task(self.recheck(server, answers))
            self._probes[server] = task

    def tasks(self) -> list[asyncio.Task[bool]]:
        """The probes started (for closing)."""
        return list(self._probes.values())
