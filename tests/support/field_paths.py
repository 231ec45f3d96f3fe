"""One walk over a document of dicts and lists by the paths of its fields, for the property
tests of component fields (tests/test_output_fields_property.py,
tests/test_unknown_fields_property.py)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

Path = tuple[str | int, ...]


def walk(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Each scalar in ``value`` with its path (an empty dict or list has none)."""
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        yield path, value
        return
    for key, inner in items:
        yield from walk(inner, (*path, key))


def fields(doc: dict[str, Any]) -> Iterator[Path]:
    """Each top-level field of ``doc``, and each scalar inside one."""
    for key, inner in doc.items():
        yield (key,)
        yield from (path for path, _ in walk(inner, (key,)) if path != (key,))


def at(doc: Any, path: Path) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def with_value(doc: dict[str, Any], path: Path, make: Callable[[Any], Any]) -> dict[str, Any]:
    """A copy of ``doc`` whose value at ``path`` is ``make`` of the one there."""
    copied = copy.deepcopy(doc)
    parent = at(copied, path[:-1])
    parent[path[-1]] = make(parent[path[-1]])
    return copied


def replaced(value: Any, make: Callable[[Any], Any]) -> Any:
    """A copy of ``value`` with each scalar ``s`` in it replaced by ``make(s)``."""
    copied = copy.deepcopy(value)
    for path, leaf in walk(value):
        if path == ():
            return make(leaf)
        at(copied, path[:-1])[path[-1]] = make(leaf)
    return copied
