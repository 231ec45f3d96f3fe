"""Garbage-collector settings for one program run, restored afterwards.

A run registers thousands of resources whose objects all live until the run ends, so with
the default thresholds the cyclic collector keeps rescanning a growing heap that holds no
garbage; tuned, the same run takes about 30 % less CPU time (benchmarks/README.md). For the
run, the heap as it stands (interpreter, imports) is frozen out of collection and the
generation thresholds are raised; on leaving, the caller's thresholds come back and what was
frozen is unfrozen, so a program that imports the components and goes on keeps its own
settings.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Generator
from contextlib import contextmanager

# Generation 0 collects every 50,000 net allocations instead of 700; generations 1 and 2
# still run, less often, so cycles made during the run are reclaimed and peak memory stays
# where it was (benchmarks/README.md has the measurements).
RUN_THRESHOLDS = (50_000, 20, 20)

_lock = threading.Lock()
_depth = 0
_saved_thresholds: tuple[int, int, int] = gc.get_threshold()
_owns_freeze = False


@contextmanager
def tuned_for_run(thresholds: tuple[int, int, int] | None = None) -> Generator[None, None, None]:
    """Freeze the heap and raise the thresholds until the outermost ``with`` exits.

    Nested uses (``render`` running the stack program, whose ``main()`` uses it too) freeze
    what was imported since, and leave restoring to the outermost one. A heap the caller
    froze itself is left to the caller: nothing is frozen or unfrozen then. ``thresholds``
    defaults to :data:`RUN_THRESHOLDS`.
    """
    global _depth, _saved_thresholds, _owns_freeze
    with _lock:
        if _depth == 0:
            _saved_thresholds = gc.get_threshold()
            _owns_freeze = gc.get_freeze_count() == 0
            gc.set_threshold(*(thresholds or RUN_THRESHOLDS))
        _depth += 1
        if _owns_freeze:
            gc.freeze()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved_thresholds)
                if _owns_freeze:
                    gc.unfreeze()
