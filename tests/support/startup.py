"""Waiting for a server a test starts: on the server's own signal (its first answer, a line,
a port file), bounded by :data:`HUNG_AFTER`, a limit that only ends a hung run. A start-up
bound is never a measure of speed: on a loaded machine a Python process that imports the MCP
SDK may take many seconds to start, and a test that gave it 5 failed there."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any, TypeVar

from langop_infra.mcp import ClientOptions

T = TypeVar("T")

HUNG_AFTER = 300.0  # seconds


def stdio_options(**changes: Any) -> ClientOptions:
    """Options for a session whose server is a child process the client starts: its start-up
    is part of the first request, so the request timeout is only the hang guard."""
    return ClientOptions(**{"timeout": HUNG_AFTER, "deadline": 2 * HUNG_AFTER, **changes})


def until_ready(
    probe: Callable[[], T | None], process: subprocess.Popen[Any], describe: Callable[[], str]
) -> T:
    """``probe()``'s first answer other than None: the server is ready. Fails at once when
    ``process`` exits first, and after :data:`HUNG_AFTER` seconds (``describe()`` says why:
    e.g. the server's log)."""
    give_up = time.monotonic() + HUNG_AFTER
    while True:
        if process.poll() is not None:
            raise AssertionError(f"the server exited with {process.returncode}: {describe()}")
        answer = probe()
        if answer is not None:
            return answer
        if time.monotonic() > give_up:
            raise AssertionError(f"the server was not ready after {HUNG_AFTER} s: {describe()}")
        time.sleep(0.05)
