"""What has been done to a cluster document already, kept beside the documents rather than
on them: a spec object carries no hidden flag.

:data:`VALIDATED` holds the specs :func:`~langop_infra.config.checks._validation.parse_cluster`
returned, so that LanguageCluster does not check again a document the stack program checked
(a copy with changes is a new object, and is checked). :data:`IMAGES_WARNED` holds those whose
unpinned images the stack program has warned of under their config keys, so that
LanguageCluster does not warn of them again.
"""

from __future__ import annotations

import weakref
from typing import Generic, TypeVar

T = TypeVar("T")


class SpecSet(Generic[T]):
    """A set of objects by identity that keeps none of them alive (pydantic models are not
    hashable, so ``weakref.WeakSet`` cannot hold them)."""

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ReferenceType[T]] = {}

    def add(self, item: T) -> None:
        key = id(item)

        def forget(_: weakref.ReferenceType[T], key: int = key) -> None:
            self._refs.pop(key, None)

        self._refs[key] = weakref.ref(item, forget)

    def __contains__(self, item: object) -> bool:
        ref = self._refs.get(id(item))
        return ref is not None and ref() is item

    def __len__(self) -> int:
        return sum(ref() is not None for ref in self._refs.values())


# Typed loosely: this module sits beneath the config models it holds.
VALIDATED: SpecSet[object] = SpecSet()
IMAGES_WARNED: SpecSet[object] = SpecSet()
