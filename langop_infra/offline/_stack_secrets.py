"""What an offline render can know about secrets.

``secure:`` values: render never decrypts them for the program (they come out as
``[secret]``). It checks what can be checked without the Pulumi CLI. With the passphrase
secrets provider (the stack file has ``encryptionsalt``) every value must have the provider's
form ``v1:<nonce>:<ciphertext>``; when ``PULUMI_CONFIG_PASSPHRASE`` (or ``_FILE``) is set and
``cryptography`` is installed, each value must also decrypt (AES-256-GCM authenticates it)
with this stack's key, so a value copied from another stack's file is refused; when a stack
file beside it holds the key that does decrypt it (the same passphrase), the advice names that
stack and `pulumi config cp`. Advice never puts a secret on the command line. Cloud and KMS
providers keep the key elsewhere: their values are not checked offline.

Fingerprints: an HMAC-SHA256 of a secret value keyed by a key the user holds, so that two
renders show a rotation without revealing the value. A plain hash would let anyone with the
render test guesses against it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from langop_infra.core.problems import Problem

PBKDF2_ITERATIONS = 1_000_000  # what the Pulumi CLI uses for passphrase stacks
_PASSPHRASE_VALUE = re.compile(r"v1:([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)")
MIN_FINGERPRINT_KEY_BYTES = 16
FINGERPRINT = re.compile(r"\[secret hmac-sha256 key=([0-9a-f]{8}) ([0-9a-f]{64})\]")


def secure_values(value: object, path: str) -> Iterator[tuple[str, Any]]:
    """``(config path, ciphertext)`` of every ``{secure: ...}`` under ``value``."""
    if isinstance(value, Mapping):
        mapping = cast("Mapping[Any, Any]", value)
        if set(mapping) == {"secure"}:
            yield path, mapping["secure"]
            return
        for key, item in mapping.items():
            yield from secure_values(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(cast("list[Any]", value)):
            yield from secure_values(item, f"{path}[{index}]")


def _set_again(path: str, stack: str) -> str:
    """How to set a secret again with its value never on the command line (shell history,
    ``ps``): from a file on stdin, or typed at Pulumi's prompt."""
    key = path.split(":", 1)[-1]
    return (
        f"set it again with `pulumi config set --secret --path '{key}' -s {stack} < FILE` "
        "(the value from FILE, or typed at the prompt without `< FILE`; never as an "
        "argument, which shell history and `ps` keep)"
    )


def _copy_again(path: str, source: str, stack: str) -> str:
    """How to copy a secret from the stack it was encrypted for: Pulumi decrypts it with
    ``source``'s key and encrypts it with this stack's."""
    key = path.split(":", 1)[-1]
    return (
        f"(it was encrypted for stack {source!r} and copied from its file); copy it with "
        f"`pulumi config cp --path '{key}' --stack {source} --dest {stack}`"
    )


def _sibling_keys(file: Path) -> Iterator[tuple[str, bytes]]:
    """``(stack, key)`` of each other stack file beside ``file`` that the passphrase unlocks."""
    for other in sorted(file.parent.glob("Pulumi.*.yaml")):
        if other.resolve() == file.resolve():
            continue
        salt = _salt_of(other)
        key = _stack_key(salt, other) if salt is not None else None
        if isinstance(key, bytes):
            yield other.name[len("Pulumi.") : -len(".yaml")], key


def _salt_of(file: Path) -> str | None:
    """A stack file's ``encryptionsalt``, read as one top-level line (no full parse: an
    unrelated broken file must not fail this stack's check)."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    match = re.search(r"^encryptionsalt:\s*(\S+)\s*$", text, re.MULTILINE)
    return match.group(1).strip("'\"") if match else None


def _decrypts(key: bytes, nonce: bytes, ciphertext: bytes) -> bool:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        AESGCM(key).decrypt(nonce, ciphertext, None)
    except InvalidTag:
        return False
    return True


def check_secure_values(data: Mapping[str, object], file: Path, stack: str) -> list[Problem]:
    """Problems with the ``secure:`` values of a parsed stack file (see the module doc)."""
    salt = data.get("encryptionsalt")
    provider = str(data.get("secretsprovider") or "passphrase")
    found = list(secure_values(data.get("config") or {}, ""))
    found = [(path.lstrip("."), text) for path, text in found]
    if not found or salt is None or not provider.startswith("passphrase"):
        return []
    problems: list[Problem] = []
    parsed: list[tuple[str, bytes, bytes]] = []
    for path, text in found:
        parts = _passphrase_parts(text)
        if parts is None:
            problems.append(
                Problem(
                    f"{file}:{path}",
                    f"not a ciphertext of this stack's passphrase secrets provider "
                    f"(v1:<nonce>:<ciphertext>); {_set_again(path, stack)}",
                )
            )
        else:
            parsed.append((path, *parts))
    key = _stack_key(str(salt), file)
    if isinstance(key, Problem):
        return [*problems, key]
    if key is None:
        return problems
    siblings: list[tuple[str, bytes]] | None = None  # derived once, only when needed
    for path, nonce, ciphertext in parsed:
        if _decrypts(key, nonce, ciphertext):
            continue
        if siblings is None:
            siblings = list(_sibling_keys(file))
        source = next((name for name, k in siblings if _decrypts(k, nonce, ciphertext)), None)
        if source is None:
            why = f"(copied from another stack's file?); {_set_again(path, stack)}"
        else:
            why = _copy_again(path, source, stack)
        problems.append(Problem(f"{file}:{path}", f"does not decrypt for stack {stack!r} {why}"))
    return problems


def _passphrase_parts(text: object) -> tuple[bytes, bytes] | None:
    match = _PASSPHRASE_VALUE.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    try:
        nonce = base64.b64decode(match.group(1), validate=True)
        ciphertext = base64.b64decode(match.group(2), validate=True)
    except binascii.Error:
        return None
    return (nonce, ciphertext) if len(nonce) == 12 and len(ciphertext) >= 16 else None


def _passphrase() -> str | None:
    if "PULUMI_CONFIG_PASSPHRASE" in os.environ:
        return os.environ["PULUMI_CONFIG_PASSPHRASE"]
    path = os.environ.get("PULUMI_CONFIG_PASSPHRASE_FILE")
    if path:
        try:
            return Path(path).read_text().rstrip("\r\n")
        except OSError:
            return None
    return None


def _stack_key(salt: str, file: Path) -> bytes | Problem | None:
    """This stack's key from the passphrase, checked against ``encryptionsalt``; None when
    it cannot be derived here (no passphrase, or no ``cryptography``)."""
    phrase = _passphrase()
    if phrase is None:
        return None
    try:
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:
        return None
    head, _, check = salt.partition(":")
    salt_b64, _, check = check.partition(":")
    parts = _passphrase_parts(check)
    salt_bytes = b""
    try:
        salt_bytes = base64.b64decode(salt_b64, validate=True)
    except binascii.Error:
        parts = None
    if head != "v1" or parts is None:
        return Problem(f"{file}:encryptionsalt", "not a passphrase provider's salt")
    key = hashlib.pbkdf2_hmac("sha256", phrase.encode(), salt_bytes, PBKDF2_ITERATIONS, 32)
    try:
        if AESGCM(key).decrypt(parts[0], parts[1], None) == b"pulumi":
            return key
    except InvalidTag:
        pass
    return Problem(
        f"{file}:encryptionsalt",
        "PULUMI_CONFIG_PASSPHRASE does not unlock this stack; set the stack's passphrase",
    )


def fingerprint_key(variable: str) -> bytes:
    """The key in environment variable ``variable``; ``ValueError`` when unset or short."""
    value = os.environ.get(variable, "")
    if not value:
        raise ValueError(f"environment variable {variable} is not set; put a random key in it")
    if len(value.encode()) < MIN_FINGERPRINT_KEY_BYTES:
        raise ValueError(
            f"the key in {variable} is shorter than {MIN_FINGERPRINT_KEY_BYTES} bytes; "
            "use a long random key (e.g. `openssl rand -hex 32`)"
        )
    return value.encode()


def fingerprint(value: object, key: bytes) -> str:
    """``[secret hmac-sha256 key=<key id> <mac>]``: equal values give equal marks under one
    key; the key id tells renders made with different keys apart."""
    key_id = hmac.new(key, b"langop-infra fingerprint key id", hashlib.sha256).hexdigest()[:8]
    mac = hmac.new(key, str(value).encode(), hashlib.sha256).hexdigest()
    return f"[secret hmac-sha256 key={key_id} {mac}]"
