"""Text every layer shares: a near miss's "did you mean" (one cutoff for every suggestion)
and a message folded onto one line."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# How alike a name must be to one we know to be suggested (difflib's ratio): 'memry' for
# 'memory' (0.91) is; 'db-credentials' for 'search-credentials' (0.75) is not. Two letters
# swapped ('prdo' for 'prod', 0.75) are a typo whatever the ratio.
CUTOFF = 0.8


def _swapped(a: str, b: str) -> bool:
    """``a`` is ``b`` with two neighbouring characters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return (
        len(diff) == 2
        and diff[1] == diff[0] + 1
        and a[diff[0]] == b[diff[1]]
        and a[diff[1]] == b[diff[0]]
    )


def closest(name: object, known: Iterable[object]) -> str | None:
    """The name among ``known`` that ``name`` was probably meant to be, or None."""
    # Sorted: ``known`` may be a set, and a tie must not depend on its order.
    names = sorted({str(k) for k in known})
    close = difflib.get_close_matches(str(name), names, n=1, cutoff=CUTOFF)
    if close:
        return close[0]
    return next((k for k in names if _swapped(str(name), k)), None)


def did_you_mean(name: object, known: Iterable[object], then: str = "Otherwise: ") -> str:
    """``did you mean 'memory'? Otherwise: `` for a near miss among ``known``, else ``""``."""
    close = closest(name, known)
    return f"did you mean {close!r}? {then}" if close is not None else ""


def one_line(text: str, limit: int = 300) -> str:
    """``text`` folded onto one line of at most ``limit`` characters (for phases, CLI output)."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
