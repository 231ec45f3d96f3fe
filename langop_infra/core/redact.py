"""Scrub credentials out of text that reaches state, previews or a terminal.

Schema sync reports why a sync failed, and a server's answer may echo what it was sent (an
``invalid token …`` body, a challenge naming the token). Every message bound for
``last_error``, a failure or the ``schemas`` command goes through :func:`redact` first: the
values actually sent are removed, then anything shaped like a credential, then the text is
folded onto one bounded line.

The same module holds the other halves of that one path: :func:`scrub_values` replaces the
values sent in everything a sync stores (tool schemas, server info), and :func:`escape` and
:func:`json_text` keep what a server wrote from driving a terminal.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, cast

from langop_infra._errors import REDACTED
from langop_infra.core.text import one_line

MARK = REDACTED
LIMIT = 300
MIN_SECRET = 4  # shorter values would redact ordinary words
MIN_PREFIX = 8  # a cut-off echo this long of a secret is redacted too
_TOKEN_RUN = re.compile(rf"[A-Za-z0-9._~+/=-]{{{MIN_PREFIX},}}")

# Terminal escapes and bidi overrides: a server's text must not repaint a CI log or a preview.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# Bidi embeddings, overrides and isolates, and the marks: they reorder what follows them.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# What JSON leaves raw with ensure_ascii=False but a terminal acts on: C1 controls (CSI is
# one), bidi controls, and the line and paragraph separators.
_BIDI_CHARS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_BIDI}\u2028\u2029]")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@]+@")
_QUERY_VALUE = re.compile(r"([?&][^=\s&#?]+=)[^&\s#'\"]+")
# A scheme followed by a token, but not an auth-param list (`Bearer error="invalid_token"`).
_AUTH_TOKEN = re.compile(r"(?i)\b(bearer|basic)(\s+)(?![A-Za-z_-]+=)[A-Za-z0-9._~+/-]{4,}=*")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_KEY_VALUE = re.compile(
    r"(?i)\b(access_token|refresh_token|id_token|client_secret|api[_-]?key|apikey|token|"
    r"password|passwd|secret)(\"?'?\s*[:=]\s*\"?'?)([^\s\"',;&<>]{4,})"
)


def secret_strings(*sources: Any) -> list[str]:
    """Every string worth scrubbing in ``sources`` (header maps, lists, strings), plus the
    token part of ``<scheme> <token>`` values, longest first."""
    found: set[str] = set()

    def collect(value: Any) -> None:
        if isinstance(value, Mapping):
            for item in cast("Mapping[object, object]", value).values():
                collect(item)
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in cast("Iterable[object]", value):
                collect(item)
        elif isinstance(value, str) and len(value.strip()) >= MIN_SECRET:
            found.add(value.strip())
            scheme, _, token = value.strip().partition(" ")
            if scheme and len(token.strip()) >= MIN_SECRET:
                found.add(token.strip())

    for source in sources:
        collect(source)
    return sorted(found, key=len, reverse=True)


def redact(text: Any, secrets: Iterable[str] = (), limit: int = LIMIT) -> str:
    """``text`` without ``secrets``, URL userinfo and query values, token-looking strings or
    control characters, on one line of at most ``limit`` characters."""
    line = _CONTROL.sub("?", " ".join(str(text).split()))
    for secret in secrets:
        # Compare on the folded form too: a value with inner whitespace is folded like the text.
        for form in {secret, " ".join(secret.split())}:
            if len(form) >= MIN_SECRET:
                line = line.replace(form, MARK)
    line = _truncated_echoes(line, secrets)
    line = _USERINFO.sub(rf"\1{MARK}@", line)
    line = _QUERY_VALUE.sub(rf"\1{MARK}", line)
    line = _JWT.sub(MARK, line)
    line = _AUTH_TOKEN.sub(rf"\1\2{MARK}", line)
    line = _KEY_VALUE.sub(rf"\1\2{MARK}", line)
    return one_line(line, limit)


def _truncated_echoes(line: str, secrets: Iterable[str]) -> str:
    """Redact runs that are the start of a secret: servers and clients cut long bodies, and
    ``invalid token abcdefgh...`` still gives away most of a token."""
    prefixes = [s for s in secrets if len(s) >= MIN_PREFIX]
    if not prefixes:
        return line

    def cut(match: re.Match[str]) -> str:
        run = match.group(0)
        core = run.rstrip(".")  # the run may end in the cut's own "..."
        if len(core) >= MIN_PREFIX and any(s.startswith(core) for s in prefixes):
            return MARK + run[len(core) :]
        return run

    return _TOKEN_RUN.sub(cut, line)


def scrub_values(value: Any, secrets: Iterable[str]) -> Any:
    """``value`` (JSON-like) with every occurrence of ``secrets`` in its strings and keys
    replaced by :data:`MARK`: what a server echoed of the credentials it was sent."""
    found = [s for s in secrets if len(s) >= MIN_SECRET]
    if not found:
        return value

    def scrub(item: Any) -> Any:
        if isinstance(item, str):
            for secret in found:
                if secret in item:
                    item = item.replace(secret, MARK)
            return item
        if isinstance(item, Mapping):
            mapping = cast("Mapping[object, object]", item)
            return {scrub(str(k)): scrub(v) for k, v in mapping.items()}
        if isinstance(item, (list, tuple)):
            return [scrub(v) for v in cast("Iterable[object]", item)]
        return item

    return scrub(value)


def escape(text: str, keep: str = "") -> str:
    """``text`` safe for a terminal: control characters (but those in ``keep``), bidi
    controls and line separators as ``\\uXXXX``."""
    return "".join(
        f"\\u{ord(c):04x}"
        if c not in keep and (c in _BIDI_CHARS or unicodedata.category(c) in ("Cc", "Zl", "Zp"))
        else c
        for c in text
    )


def json_text(document: Any, indent: int | None = 2) -> str:
    """``document`` as JSON, readable (non-ASCII kept), but with the characters a terminal
    acts on escaped as ``\\uXXXX``: still valid JSON, decoding to the same value."""
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
