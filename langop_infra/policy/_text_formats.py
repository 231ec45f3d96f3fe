"""The ``(name, value)`` pairs of the ConfigMap text formats credentials hide in besides
JSON, YAML and ``.env``: XML (elements and attributes: ``<password>…</password>``,
``<add key="ApiKey" value="…"/>``), ``.netrc`` (``machine h login u password p``), and text
wrapped in base64. Read with regular expressions, never an XML parser: a ConfigMap is
untrusted, and entity expansion is a bomb.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator

__all__ = ["base64_text", "netrc_pairs", "xml_pairs"]

_XML_START = re.compile(r"^\s*<(\?xml|[A-Za-z_][\w.:-]*)")
_ELEMENT = re.compile(r"<([A-Za-z_][\w.:-]*)(?:\s[^<>]*)?>([^<]*)</\1\s*>")
_ATTRIBUTE = re.compile(r"([A-Za-z_][\w.:-]*)\s*=\s*(\"[^\"]*\"|'[^']*')")
_TAG = re.compile(r"<[A-Za-z_][\w.:-]*(\s[^<>]*?)/?>")
_NETRC_WORDS = ("machine", "default", "login", "password", "account", "macdef")
_BASE64 = re.compile(r"^[A-Za-z0-9+/_-]+={0,2}$")
MIN_BASE64 = 16  # shorter base64 is as likely a word


def xml_pairs(text: str) -> Iterator[tuple[str, str]]:
    """Each element's name and text, each attribute's name and value, and a tag's
    ``key``/``name`` attribute with its ``value`` (.NET's ``<add key=… value=…/>``)."""
    if not _XML_START.match(text):
        return
    for match in _ELEMENT.finditer(text):
        if match.group(2).strip():
            yield match.group(1), match.group(2).strip()
    for tag in _TAG.finditer(text):
        attributes = {n: v[1:-1] for n, v in _ATTRIBUTE.findall(tag.group(1) or "")}
        named = attributes.get("key") or attributes.get("name")
        if named and "value" in attributes:
            yield named, attributes["value"]
        for name, value in attributes.items():
            if name not in ("key", "name", "value"):
                yield name, value


def netrc_pairs(key: str, text: str) -> Iterator[tuple[str, str]]:
    """``password`` and ``account`` values of ``.netrc`` text (any layout of its tokens)."""
    words = text.split()
    netrc = key.lstrip(".").lower() in ("netrc", "_netrc") or (
        "machine" in words and "password" in words
    )
    if not netrc:
        return
    for index, word in enumerate(words[:-1]):
        if word in ("password", "account") and words[index + 1] not in _NETRC_WORDS:
            yield word, words[index + 1]


def base64_text(text: str) -> str | None:
    """``text`` decoded when it is base64 (standard or URL-safe) of UTF-8 text, else None."""
    compact = "".join(text.split())
    if len(compact) < MIN_BASE64 or not _BASE64.match(compact):
        return None
    padded = compact + "=" * (-len(compact) % 4)
    try:
        decoded = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
        plain = decoded.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(c.isprintable() or c in "\n\r\t" for c in plain)
    return plain if plain and printable == len(plain) else None
