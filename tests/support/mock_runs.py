"""Programs that fail under the mock engine: the SpecError behind the engine's errors."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest

from langop_infra.core.problems import SpecError
from langop_infra.offline._mock_engine import run_program


def spec_error(exc: BaseException) -> SpecError | None:
    """The SpecError behind ``exc`` (the engine wraps a program's errors), if any."""
    todo: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while todo:
        found = todo.pop()
        if found is None or id(found) in seen:
            continue
        if isinstance(found, SpecError):
            return found
        seen.add(id(found))
        todo += [found.__cause__, found.__context__]
    return None


def failing(program: Callable[[], object]) -> str:
    """The message of the SpecError ``program``, run under the mock engine, fails with (itself,
    or behind the engine's errors of the objects that waited for the bad value)."""
    with pytest.raises(Exception) as caught:
        run_program(program)
    gc.collect()  # the failed run's futures, finalized here, not in a later test
    found = spec_error(caught.value)
    assert found is not None, caught.value
    return str(found)
