"""``agent/_serve``: what ``serve`` does once the runtime has started."""

from __future__ import annotations

import gc
import weakref

from langop_infra.agent._serve import freeze_startup_heap


class Node:
    """A plain object that can sit in a reference cycle."""

    other: object = None


def test_the_startup_heap_is_frozen_after_its_cyclic_garbage_is_collected() -> None:
    kept, cycle = Node(), Node()
    cycle.other = cycle
    gone = weakref.ref(cycle)
    del cycle
    frozen_before = gc.get_freeze_count()
    assert any(o is kept for o in gc.get_objects())
    try:
        freeze_startup_heap()
        assert gone() is None  # collected, not frozen
        assert gc.get_freeze_count() > frozen_before
        assert not any(o is kept for o in gc.get_objects())  # no generation walks it now
    finally:
        gc.unfreeze()
    assert any(o is kept for o in gc.get_objects())
