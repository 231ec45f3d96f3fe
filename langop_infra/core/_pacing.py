"""Where a program lets an in-process engine catch up: after each tool or agent it builds.

Under ``pulumi up`` nothing happens here: the engine answers a registration once the object
exists, and waiting for it would deploy one batch at a time. The offline mock engine answers
at once, so catching up with it every few workloads keeps what a large program has created
but not yet registered (pending tasks, futures, serialized inputs) from piling up: at
100 tools x 1000 agents the render's peak memory about halves (benchmarks/README.md).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager

_hook: Callable[[], None] | None = None


def workload_built() -> None:
    """Called by a component when it has created all its objects; the engine's hook, if any."""
    if _hook is not None:
        _hook()


def in_process_engine() -> bool:
    """True while the offline mock engine runs the program (render, validate, outputs): a
    component then does nothing with the outside world (an HttpTool's probe)."""
    return _hook is not None


@contextmanager
def paced(hook: Callable[[], None]) -> Generator[None, None, None]:
    """Call ``hook`` after each workload built inside the ``with``."""
    global _hook
    saved, _hook = _hook, hook
    try:
        yield
    finally:
        _hook = saved
