"""Credential literals, found by name and by shape with ``detect-secrets``' plugins.

``langop-no-literal-credentials`` asks two questions of every literal it can see:

- **the name**: an env var or ConfigMap key named like a credential (``TOKEN``, ``SECRET``,
  ``PASSWORD``/``PASS``/``PWD``, ``API_KEY``/``*_KEY``, ``PAT``, ``CREDENTIALS``,
  ``WEBHOOK_URL``, ``DSN``...), a header named like one (``Authorization``,
  ``Proxy-Authorization``, ``Cookie``, ``X-Api-Key``, ``api-key``, ``X-Auth-Token``, any
  ``*-token``/``*-secret``/``*-auth*``);
- **the value**: ``detect-secrets``' plugins (keywords, high-entropy base64 and hex strings,
  private keys, URLs with a password, and the vendor token shapes: GitHub, Slack, AWS,
  OpenAI, Stripe, JWTs...).

Where: container env literals of every pod template; ConfigMap keys and values, also the
entries inside JSON, YAML, XML, ``.netrc`` and ``.env`` text and text wrapped in base64,
and each ``binaryData`` key and (decoded) value; header literals in any of those
(``{name, value}`` pairs and ``headers:`` maps).
A value that refers to a credential rather than holding one (``os.environ/VAR``,
``${VAR}``, ``{{ .Values.x }}``) or a placeholder a model server without a key is given
(``no-key``, ``none``, ``unused``) is not a credential, nor is the Python function LiteLLM's
``custom_auth`` names (``module.function``: the model gateway's auth hook). A finding names the
place and the detector, never the value.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, cast

import langop_infra._json as _json
from langop_infra.core import _yaml_io as yaml_io
from langop_infra.policy import _text_formats as formats

# Names: an env var or ConfigMap key, split on _ - . and checked word by word.
_NAME_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "apikey",
        "pat",
        "credential",
        "credentials",
        "dsn",
        "cookie",
        "auth",
        "authorization",
    }
)
_NAME_ENDINGS = ("_key", "-key", ".key", "_webhook_url", "_webhook", "_private_key")
_HEADER = re.compile(
    r"(?i)^(authorization|proxy-authorization|cookie|set-cookie)$|(^|-)(api-?key|token|secret|"
    r"auth[a-z]*|session|password|credentials?)($|-)"
)
_REFERENCE = re.compile(r"^\s*(os\.environ/\S+|\$\{[^}]+\}|\{\{.*\}\}|<[^>]+>)\s*$")
PLACEHOLDERS = frozenset({"no-key", "none", "null", "unused", "not-needed", "dummy", ""})
_DOTENV = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*?)\s*$")
_MAX_TEXT = 1024 * 1024  # a ConfigMap holds at most 1 MiB
# Keys of a document whose value names code (LiteLLM's general_settings.custom_auth).
_CODE_KEYS = frozenset({"custom_auth"})
_DOTTED_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


def credential_name(name: str) -> bool:
    """Whether an env var or ConfigMap key is named like a credential."""
    lowered = name.lower()
    words = set(re.split(r"[_.\-]+", lowered))
    return bool(words & _NAME_WORDS) or lowered.endswith(_NAME_ENDINGS) or "api_key" in lowered


def credential_header(name: str) -> bool:
    """Whether a header is named like one that carries a credential."""
    return bool(_HEADER.search(name.strip()))


def literal(value: object) -> bool:
    """Whether ``value`` is a literal worth judging (not a reference, not a placeholder)."""
    if not isinstance(value, str):
        return False
    return value.strip().lower() not in PLACEHOLDERS and not _REFERENCE.match(value)


@cache
def _plugins() -> tuple[Any, ...]:
    """detect-secrets' plugins, made once: every registered detector, the high-entropy ones
    at the project's own limits (base64 4.5, hex 3.0), the public-IP one left out."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    skipped = {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
    classes = get_mapping_from_secret_type_to_class().values()
    found: list[object] = [c() for c in classes if c.__name__ not in skipped]
    return (*found, Base64HighEntropyString(limit=4.5), HexHighEntropyString(limit=3.0))


def detected(name: str, value: str) -> str | None:
    """The detect-secrets finding for ``name: "value"`` (a YAML line), or ``None``."""
    if not literal(value):
        return None
    from detect_secrets.settings import default_settings

    lines = [f'{name}: "{v}"' for v in value.splitlines() if v.strip()][:200]
    with default_settings():
        for plugin in _plugins():
            for line in lines:
                for secret in plugin.analyze_line(filename="x.yaml", line=line, line_number=1):
                    return str(secret.type)
    return None


def judge(name: str, value: object, header: bool = False) -> str | None:
    """Why ``name = value`` is a credential literal, or ``None``."""
    if not literal(value):
        return None
    named = credential_header(name) if header else credential_name(name)
    if named:
        return "named like a credential"
    found = detected(name, str(value))
    return f"looks like one ({found})" if found else None


def in_document(document: object, where: str = "") -> Iterator[tuple[str, str]]:
    """``(path, reason)`` of each credential literal in a parsed JSON or YAML document:
    ``{name, value}`` pairs (env and header lists), ``headers`` maps, and plain keys."""
    stack: list[tuple[str, object, bool]] = [(where, document, False)]
    while stack:
        path, node, headers = stack.pop()
        if isinstance(node, Mapping):
            fields = cast("Mapping[str, Any]", node)
            pair_name = fields.get("name")
            if isinstance(pair_name, str) and "value" in fields:
                header = credential_header(pair_name) and not credential_name(pair_name)
                reason = judge(pair_name, fields.get("value"), header=header)
                if reason:
                    yield f"{path} ({pair_name})", reason
            for key, value in fields.items():
                here = f"{path}.{key}"
                if key in _CODE_KEYS and isinstance(value, str) and _DOTTED_NAME.match(value):
                    continue
                if isinstance(value, str) and key not in ("name", "value"):
                    reason = judge(str(key), value, header=headers)
                    if reason:
                        yield here, reason
                else:
                    stack.append((here, value, str(key).lower() == "headers"))
        elif isinstance(node, list):
            stack += [(f"{path}[{i}]", v, headers) for i, v in enumerate(cast("list[Any]", node))]


def in_text(key: str, text: str, *, unwrapped: bool = False) -> Iterator[tuple[str, str]]:
    """``(path, reason)`` of each credential literal in a ConfigMap value: a PEM private
    key; the entries of JSON, YAML, XML, ``.netrc`` or ``.env`` text; what base64 wraps
    (one level: ``unwrapped`` says it is done); else the value as a whole."""
    if len(text) > _MAX_TEXT:
        return
    if "PRIVATE KEY-----" in text:
        yield key, "looks like one (Private Key)"
        return
    document = _parsed(key, text)
    if document is not None:
        yield from in_document(document, key)
        return
    pairs = [(f"{key} <{n}>", n, v) for n, v in formats.xml_pairs(text)] or [
        (f"{key} ({n})", n, v) for n, v in formats.netrc_pairs(key, text)
    ]
    if pairs:
        for path, name, value in pairs:
            reason = judge(name, value)
            if reason:
                yield path, reason
        return
    decoded = None if unwrapped else formats.base64_text(text)
    inner = list(in_text(key, decoded, unwrapped=True)) if decoded else []
    if inner:
        yield from ((f"{path} (base64)", reason) for path, reason in inner)
        return
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if lines and (key.endswith(".env") or all(_DOTENV.match(ln) for ln in lines)):
        for number, line in enumerate(text.splitlines(), 1):
            match = _DOTENV.match(line)
            if match and not line.lstrip().startswith("#"):
                name, value = match.group(1), match.group(2).strip("'\"")
                reason = judge(name, value)
                if reason:
                    yield f"{key} line {number} ({name})", reason
        return
    reason = judge(key, text)
    if reason:
        yield key, reason


def _parsed(key: str, text: str) -> Any:
    """``text`` as JSON or YAML when it is a mapping or list of them, else ``None``."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return _json.read(stripped)
        except ValueError:
            pass
    if key.endswith(".env") or ":" not in text:
        return None
    try:
        document: object = yaml_io.load(text)
    except yaml_io.YAMLError:
        return None
    return cast("Any", document) if isinstance(document, (dict, list)) else None


def in_binary(key: str, encoded: object) -> Iterator[tuple[str, str]]:
    """``(path, reason)`` for a ``binaryData`` entry: its key's name, then its decoded text."""
    if credential_name(key) and encoded:
        yield f"binaryData.{key}", "named like a credential"
        return
    try:
        text = base64.b64decode(str(encoded), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return
    for path, reason in in_text(key, text):
        yield f"binaryData.{path}", reason
