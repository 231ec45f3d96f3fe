"""A registry server's lifecycle: its status, and the backoff between restarts."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

__all__ = ["ServerState", "ServerStatus", "Wait", "restart_delay"]

ServerState = Literal["connecting", "connected", "failed", "disconnected"]
Wait = Literal["all", "first", "none"]
# A stdio server that exits is started again after base * 2**n seconds (n: restarts so far),
# times a jitter factor in [0.5, 1], at most MAX_RESTARTS times in a row; one that ran for
# STABLE_SECONDS since its last start counts as healthy again.
RESTART_BASE_SECONDS = 0.2
RESTART_CAP_SECONDS = 30.0
MAX_RESTARTS = 5
STABLE_SECONDS = 60.0


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
