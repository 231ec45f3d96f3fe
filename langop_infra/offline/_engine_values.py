"""The values the mock engine hands around, walked: secrets (the engine's ``{sig: secret,
value}`` wrappers and resolved :class:`Secret`), values known only at ``pulumi up``, and their
form in a manifest (secrets redacted leaf by leaf, unknowns as :data:`UNKNOWN_MARKER`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
from pulumi.runtime import rpc

from langop_infra._errors import REDACTED
from langop_infra.core import _pulumi_sdk as pulumi_sdk

# How a value the engine learns only at `pulumi up` shows in a render, as `[secret]` does.
UNKNOWN_MARKER = "[unknown]"
SECRET_SIG = pulumi_sdk.SECRET_SIG
SIG_KEY = pulumi_sdk.SIG_KEY
UNKNOWN = rpc.UNKNOWN


@dataclass(frozen=True)
class Secret:
    """A resolved secret value; ``repr`` never shows it."""

    value: Any

    def __repr__(self) -> str:
        return f"Secret({REDACTED})"


def is_wrapped_secret(value: object) -> bool:
    return isinstance(value, dict) and value.get(SIG_KEY) == SECRET_SIG


Visitor = Callable[[Any, str], object]


def visit(
    value: Any,
    *,
    secret: Visitor | None = None,
    leaf: Visitor | None = None,
    skip_none: bool = False,
    path: str | None = None,
) -> Any:
    """The one walk over values that may hold secrets: engine inputs (``{sig: secret,
    value}`` wrappers) and resolved outputs (:class:`Secret`). Mappings and lists are rebuilt
    around what ``secret(inner, path)`` makes of each secret and ``leaf(scalar, path)`` of
    each other scalar (unset: kept); ``skip_none`` leaves out mapping entries that are None.
    Given a ``path`` (``""`` at the top), the callbacks get each value's, as ``.key`` and
    ``[index]``; without one they get ``""`` (a render walks every object: no strings built)."""

    def walk(value: Any, path: str | None) -> Any:
        # dict and list first: a render walks every object, and ABC checks cost.
        kind = type(value)
        if kind is dict or (kind is not list and isinstance(value, Mapping)):
            if secret is not None and value.get(SIG_KEY) == SECRET_SIG:
                return secret(value["value"], path or "")
            return {
                k: walk(v, None if path is None else f"{path}.{k}")
                for k, v in value.items()
                if not (skip_none and v is None)
            }
        if kind is list or kind is tuple:
            return [walk(v, None if path is None else f"{path}[{i}]") for i, v in enumerate(value)]
        if secret is not None and kind is Secret:
            return secret(value.value, path or "")
        return value if leaf is None else leaf(value, path or "")

    return walk(value, path)


def _integral(value: object, _: str) -> object:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def is_unknown(value: object) -> bool:
    """Whether an engine input is a value known only at `pulumi up` (preview only)."""
    return isinstance(value, pulumi.output.Unknown) or (isinstance(value, str) and value == UNKNOWN)


def unknown_paths(value: Any, path: str = "") -> Iterator[str]:
    """The path of every unknown value in engine inputs (``spec.template...image``)."""
    if is_unknown(value):
        yield path or "(the whole object)"
    elif is_wrapped_secret(value):
        yield from unknown_paths(value["value"], path)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from unknown_paths(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from unknown_paths(v, f"{path}[{i}]")


def _manifest_leaf(value: object, path: str) -> object:
    return UNKNOWN_MARKER if is_unknown(value) else _integral(value, path)


def to_manifest(value: object) -> Any:
    """Engine inputs as a manifest: secrets redacted leaf by leaf, integral numbers as ints,
    values unknown until `pulumi up` as :data:`UNKNOWN_MARKER`."""
    if is_unknown(value):
        return UNKNOWN_MARKER
    return visit(
        value,
        secret=lambda inner, _: redact(to_manifest(inner)),
        leaf=_manifest_leaf,
        skip_none=True,
    )


def redact(value: object) -> Any:
    """The same shape with every scalar replaced by the redaction marker."""
    return visit(value, leaf=lambda _, __: REDACTED)
