"""The one JSON reader of langop-infra: bounded in size and depth, never a ``RecursionError``.

``json.loads`` recurses once per level of nesting: 15 KB of ``[`` raise ``RecursionError``,
which no ``except ValueError`` catches. Every document we read (an HTTP body, a token
response, a CLI argument, a policy config) goes through :func:`read`, which refuses a text
over ``max_bytes`` or nested over ``max_depth`` levels *before* parsing, with a
:class:`JSONLimitError`. That error is a ``ValueError`` (so "not JSON" handling covers it)
and a :class:`~langop_infra._errors.LangopError`.

The limits are the JSON-RPC decoder's (:mod:`langop_infra.mcp._jsonrpc` uses this reader
too). This module imports only the error root, so the standalone MCP client may use it;
``tests/test_json_reader.py`` fails if any other ``json.load``/``json.loads`` appears in
the package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from itertools import accumulate
from typing import Any

from langop_infra._errors import LangopError

# Levels of objects and arrays a document may nest. The official MCP SDK fails near 200
# levels; a tool schema needs a few dozen, and callers recurse over what they read.
MAX_DEPTH = 100
# The most a document may hold: ClientOptions.max_response_bytes' default.
MAX_BYTES = 8 * 1024 * 1024

# A JSON string (escapes included): strings are removed whole before brackets are counted,
# so a bracket inside one is not counted.
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONLimitError(LangopError, ValueError):
    """A JSON text over the reader's size or depth limit (never parsed)."""


class JSONTooDeep(JSONLimitError):
    """Nested deeper than the limit."""


class JSONTooLarge(JSONLimitError):
    """Larger than the limit."""


def read(
    data: str | bytes | bytearray,
    *,
    max_depth: int = MAX_DEPTH,
    max_bytes: int = MAX_BYTES,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """``data`` parsed as JSON; :class:`JSONLimitError` over the limits, ``ValueError``
    (``json.JSONDecodeError``, ``UnicodeDecodeError``) when it is not JSON.
    ``object_pairs_hook`` is ``json.loads``' (e.g. to refuse a key given twice)."""
    if len(data) > max_bytes:
        raise JSONTooLarge(f"the JSON is larger than {max_bytes} bytes ({len(data)})")
    if isinstance(data, (bytes, bytearray)):
        data = bytes(data)
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    else:
        text = data
    if depth_over(text, max_depth):
        raise JSONTooDeep(f"the JSON nests more than {max_depth} levels of objects and arrays")
    return json.loads(text, object_pairs_hook=object_pairs_hook)


def reason(exc: ValueError) -> str:
    """Why :func:`read` refused a text, in a few words: the parser's own message for text
    that is not JSON, else the limit or decoding error."""
    return exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)


def depth_over(text: str, limit: int) -> bool:
    """Whether ``text`` opens more than ``limit`` objects and arrays at once (a linear scan,
    no recursion; brackets inside strings do not count). Strings and everything but
    brackets are dropped by the regular-expression engine, and the running depth is summed
    by ``accumulate``: no Python-level step per token."""
    if text.count("[") + text.count("{") <= limit:
        return False  # cannot nest deeper than it has brackets
    brackets = _NOT_BRACKETS.sub("", _STRINGS.sub("", text))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit
