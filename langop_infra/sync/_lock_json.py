"""A schema lock written as JSON, read by the C ``json`` decoder: about ten times faster
than building it from YAML events, within the same limits.

:func:`read` reads only a text that the decoder reads cleanly. Anything else (not JSON, over
the size or depth limit, a key given twice, an integer over Python's digit limit, a
surrogate escape, a BOM) returns None, and the caller reads the text as YAML, which refuses
it with the line, word for word as before this route existed. JSON has no aliases, so the
YAML route's value budget has nothing to count here.
"""

from __future__ import annotations

import re
from typing import cast

from langop_infra import _json as json_reader

_JSON_START = re.compile(r"[ \t\r\n]*\{")  # a lock is an object
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _KeyTwice(ValueError):
    """A JSON object gives a key twice."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _KeyTwice
    return found


def read(text: str, *, max_depth: int, max_bytes: int) -> dict[str, object] | None:
    """``text``'s object, read as JSON within ``max_depth`` levels and ``max_bytes`` bytes
    of UTF-8; None when the YAML route must read it."""
    if not _JSON_START.match(text) or _SURROGATE_ESCAPE.search(text):
        return None
    if not text.isascii():
        try:
            if len(text.encode("utf-8")) > max_bytes:
                return None  # refused there, by its size in bytes
        except UnicodeEncodeError:
            return None
    try:
        found: object = json_reader.read(
            text, max_depth=max_depth, max_bytes=max_bytes, object_pairs_hook=_unique_keys
        )
    except ValueError:  # JSONDecodeError, a limit, _KeyTwice, int's digit limit
        return None
    return cast("dict[str, object]", found) if isinstance(found, dict) else None
