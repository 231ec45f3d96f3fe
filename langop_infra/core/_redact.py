"""Scrub credentials out of text that reaches state, previews or a terminal.

A server's answer may echo what it was sent (an ``invalid token …`` body, a challenge
naming the token, the ``Basic`` value a token request carried). Every string bound for the
model, the console or state (``last_error``, an HTTP tool's error result, CLI output, a
stored tool listing) goes through the one :class:`Scrubber`, built from every credential
the process sent: it knows their encodings and their cut-off echoes.
:func:`redact` is its one-line form for messages.

:func:`escape` and :func:`json_text` keep what a server wrote from driving a terminal.
"""

from __future__ import annotations

import base64
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import quote, quote_plus

from langop_infra._errors import REDACTED
from langop_infra.core._text import one_line

MARK = REDACTED
LIMIT = 300
MIN_SECRET = 4  # shorter values would redact ordinary words
MIN_PREFIX = 8  # a cut-off echo this long of a secret is redacted too
MAX_LEARNED = 64  # short-lived credentials (tokens) a Scrubber remembers

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
# A scheme followed by a token, but not an auth-param list (`Bearer error="invalid_token"`):
# a name, `=` and a value; base64 padding (`dXNlcjpwYXNz==`) is a token.
_AUTH_TOKEN = re.compile(
    r"(?i)\b(bearer|basic)(\s+)(?![A-Za-z_-]+=[^=\s,;])[A-Za-z0-9._~+/-]{4,}=*"
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_KEY_VALUE = re.compile(
    r"(?i)\b(access_token|refresh_token|id_token|client_secret|api[_-]?key|apikey|token|"
    r"password|passwd|secret)(\"?'?\s*[:=]\s*\"?'?)([^\s\"',;&<>]{4,})"
)


def secret_strings(*sources: object) -> list[str]:
    """Every string worth scrubbing in ``sources`` (header maps, lists, strings), plus the
    token part of ``<scheme> <token>`` values, longest first."""
    found: set[str] = set()

    def collect(value: object) -> None:
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


class Scrubber:
    """The one scrubber: what the process sent, as sent and as the process encoded it.

    Built from every credential a caller sent (:func:`secret_strings` of its sources), it
    knows each one's forms: as is and folded, percent- and form-encoded (a token request's
    body), and base64 at each of the three alignments (``Basic base64(id:secret)`` or
    ``base64(user:password)``, whatever stands before the secret), plain and URL-safe; the
    token part of ``Bearer x`` comes from :func:`secret_strings`. A cut-off echo (a run of
    :data:`MIN_PREFIX` or more characters that starts a known form) counts as the secret.
    :meth:`line` is for a message (also credential-shaped text, folded and bounded),
    :meth:`text` for one string kept as it is but for the secrets, :meth:`value` for a
    JSON-like value (keys too).

    :meth:`add` keeps what it is given for good (configured credentials); :meth:`learn`
    keeps the last :data:`MAX_LEARNED` only (access tokens a long-lived agent fetches every
    hour), so scrubbing costs the same after a month as after a day.
    """

    def __init__(self, *sources: Any) -> None:
        self._kept: set[str] = set()
        self._learned: dict[str, set[str]] = {}  # secret -> its forms, oldest first
        self.forms: list[str] = []
        self.add(*sources)

    def add(self, *sources: object) -> None:
        """Know more credentials for good."""
        for secret in secret_strings(*sources):
            self._kept |= _forms(secret)
        self._index()

    def learn(self, *sources: object) -> None:
        """Know more short-lived credentials; the oldest beyond :data:`MAX_LEARNED` go."""
        for secret in secret_strings(*sources):
            self._learned.pop(secret, None)
            self._learned[secret] = _forms(secret)
        while len(self._learned) > MAX_LEARNED:
            del self._learned[next(iter(self._learned))]
        self._index()

    def _index(self) -> None:
        found = set(self._kept).union(*self._learned.values())
        self.forms = sorted(found, key=len, reverse=True)

    def text(self, text: str) -> str:
        """``text`` with every known form, and every cut-off echo of one, replaced by MARK."""
        for form in self.forms:
            if form in text:
                text = text.replace(form, MARK)
        return _cut_off_echoes(text, [f for f in self.forms if len(f) >= MIN_PREFIX])

    def value(self, value: object) -> Any:
        """``value`` (JSON-like) with :meth:`text` applied to every string and key."""
        if not self.forms:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            mapping = cast("Mapping[object, object]", value)
            return {self.text(str(k)): self.value(v) for k, v in mapping.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in cast("Iterable[object]", value)]
        return value

    def line(self, text: object, limit: int = LIMIT) -> str:
        """``text`` without known credentials, URL userinfo and query values, token-looking
        strings or control characters, on one line of at most ``limit`` characters."""
        return one_line(self.masked(_CONTROL.sub("?", " ".join(str(text).split()))), limit)

    def masked(self, text: str) -> str:
        """``text``, lines and length kept, without known credentials, URL userinfo and
        query values or token-looking strings (what a log record becomes)."""
        text = self.text(text)
        text = _USERINFO.sub(rf"\1{MARK}@", text)
        text = _QUERY_VALUE.sub(rf"\1{MARK}", text)
        text = _JWT.sub(MARK, text)
        text = _AUTH_TOKEN.sub(rf"\1\2{MARK}", text)
        return _KEY_VALUE.sub(rf"\1\2{MARK}", text)


def redact(text: object, secrets: Iterable[str] = (), limit: int = LIMIT) -> str:
    """``Scrubber(secrets).line(text, limit)``: one message, credential-free."""
    return Scrubber(list(secrets)).line(text, limit)


def _forms(secret: str) -> set[str]:
    """``secret`` as the process may have sent it: raw, folded, percent- and form-encoded,
    and the base64 characters that depend on it alone, at each alignment."""
    forms = {secret, " ".join(secret.split()), quote(secret, safe=""), quote_plus(secret)}
    if len(secret) >= MIN_PREFIX:
        for raw in {secret.encode(), quote(secret, safe="").encode()}:
            for core in _base64_cores(raw):
                forms |= {core, core.replace("+", "-").replace("/", "_")}
    return {form for form in forms if len(form) >= MIN_SECRET}


def _base64_cores(raw: bytes) -> set[str]:
    """For 0, 1 and 2 bytes before ``raw``: the base64 characters all of whose bits come
    from ``raw`` (what ``base64(prefix + raw + suffix)`` holds whatever the others are)."""
    cores: set[str] = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode("ascii")
        start = -(-8 * shift // 6)  # the first character past the prefix's bits
        end = 8 * (shift + len(raw)) // 6  # the last one whose bits are all raw's
        if end - start >= MIN_PREFIX:
            cores.add(encoded[start:end])
    return cores


def _cut_off_echoes(text: str, forms: list[str]) -> str:
    """Replace runs that start a known form and are :data:`MIN_PREFIX` or more characters
    long: servers and clients cut long bodies, and ``invalid token abcdefgh...`` still gives
    away most of a token."""
    spans: list[tuple[int, int]] = []
    for form in forms:
        head = form[:MIN_PREFIX]
        start = text.find(head)
        while start != -1:
            end = start + MIN_PREFIX
            while end < len(text) and end - start < len(form) and text[end] == form[end - start]:
                end += 1
            spans.append((start, end))
            start = text.find(head, end)
    if not spans:
        return text
    pieces: list[str] = []
    done = 0
    for start, end in sorted(spans):
        if end <= done:
            continue
        pieces.append(text[done : max(start, done)] + MARK)
        done = end
    return "".join(pieces) + text[done:]


def escape(text: str, keep: str = "") -> str:
    """``text`` safe for a terminal: control characters (but those in ``keep``), bidi
    controls and line separators as ``\\uXXXX``."""
    return "".join(
        f"\\u{ord(c):04x}"
        if c not in keep and (c in _BIDI_CHARS or unicodedata.category(c) in ("Cc", "Zl", "Zp"))
        else c
        for c in text
    )


def json_text(document: object, indent: int | None = 2) -> str:
    """``document`` as JSON, readable (non-ASCII kept), but with the characters a terminal
    acts on escaped as ``\\uXXXX``: still valid JSON, decoding to the same value."""
    text = json.dumps(document, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
