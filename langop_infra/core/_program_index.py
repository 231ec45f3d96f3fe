"""The index of the components a program run built, by (kind, namespace, name), owned by the
run: a second component with the same key would register the same Kubernetes objects twice,
and a standalone agent finds the tools, models, peers and memory it names there.

The run's context holds it, marked with the run's engine connection (the SDK's monitor:
each ``pulumi.runtime.set_mocks`` makes a new one, as each test's mocks do). Pulumi runs each
program (``pulumi up``, each ``@pulumi.runtime.test`` function) in an asyncio task of its
own, whose context is a copy of its caller's; the mock engine runs each program in a new
context (:func:`in_own_program`). The Outputs' callbacks, tasks made during the run, copy
the run's context and so share its index; runs never see each other's.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any, TypeVar

from langop_infra.core._pulumi_sdk import current_monitor

T = TypeVar("T")
Index = dict[tuple[str, str, str], Any]

_INDEX: contextvars.ContextVar[tuple[object, Index] | None] = contextvars.ContextVar(
    "langop_infra_components", default=None
)


def built_components() -> Index:
    """The components built so far in this program run (none yet: an empty index, not kept,
    so that looking in an index never makes one in a context a later run copies)."""
    held = _INDEX.get()
    return held[1] if held is not None and held[0] is current_monitor() else Index()


def index_for_building() -> Index:
    """The run's index, to record a component in: made in the current context the first
    time (before a callback of the run copies the context, for that callback to share it)."""
    held = _INDEX.get()
    monitor = current_monitor()
    if held is None or held[0] is not monitor:
        held = (monitor, Index())
        _INDEX.set(held)
    return held[1]


def in_own_program(program: Callable[[], T]) -> T:
    """``program()`` as a program run of its own: in a new context, with no index yet."""

    def run() -> T:
        _INDEX.set(None)
        return program()

    return contextvars.copy_context().run(run)
