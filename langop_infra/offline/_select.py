"""Which rendered objects to show: helm's ``--show-only KIND/NAME`` and kubectl's label
selectors (``-l app=x,tier!=db,env in (dev,qa),!legacy``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from langop_infra._errors import LangopError

Manifest = Mapping[str, Any]
Match = Callable[[Mapping[str, str]], bool]

# One requirement of a selector, as kubectl's parser takes them (k8s.io/apimachinery labels).
_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[A-Za-z0-9]?[-A-Za-z0-9_.]*"
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s+\(\s*({_VALUE}(?:\s*,\s*{_VALUE})*)\s*\)$")
_EQUALITY = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*({_VALUE})$")
_EXISTS = re.compile(rf"^(!?)\s*({_KEY})$")


class SelectionError(LangopError, ValueError):
    """A selector or ``--show-only`` that cannot be read, or matches nothing."""


def label_selector(text: str) -> Match:
    """A predicate over labels; every comma-separated requirement must hold."""
    requirements = [_requirement(part.strip()) for part in _split(text)]
    if not requirements:
        raise SelectionError(f"empty selector {text!r}")
    return lambda labels: all(r(labels) for r in requirements)


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses (``env in (a,b),tier=db``)."""
    parts: list[str] = []
    depth, current = 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p for p in [*parts, current] if p.strip()]


def _requirement(part: str) -> Match:
    if found := _SET.match(part):
        key, op, values = found.group(1), found.group(2), found.group(3)
        allowed = {v.strip() for v in values.split(",")}
        if op == "in":
            return lambda labels: labels.get(key) in allowed
        return lambda labels: labels.get(key) not in allowed
    if found := _EQUALITY.match(part):
        key, op, value = found.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if found := _EXISTS.match(part):
        negated, key = found.groups()
        return lambda labels: (key in labels) != bool(negated)
    raise SelectionError(
        f"cannot read selector requirement {part!r}; write key=value, key!=value, "
        "key in (a,b), key notin (a,b), key or !key"
    )


def _labels(manifest: Manifest) -> Mapping[str, str]:
    labels = _metadata(manifest).get("labels")
    return cast("Mapping[str, str]", labels) if isinstance(labels, Mapping) else {}


def _kind_name(manifest: Manifest) -> tuple[str, str]:
    name = _metadata(manifest).get("name")
    return str(manifest.get("kind", "")).lower(), str(name or "")


def _metadata(manifest: Manifest) -> Mapping[str, object]:
    """The manifest's ``metadata``, or an empty one when it is not a mapping."""
    meta = manifest.get("metadata")
    return cast("Mapping[str, object]", meta) if isinstance(meta, Mapping) else {}


def select(
    manifests: Sequence[dict[str, object]],
    show_only: Sequence[str] = (),
    selector: str | None = None,
) -> list[dict[str, Any]]:
    """The objects named by ``show_only`` (``KIND/NAME``, kind case-insensitive; any of
    them) that also match ``selector``. A ``show_only`` entry that names no object is an
    error listing what there is, as helm's is."""
    chosen = list(manifests)
    if show_only:
        wanted: dict[tuple[str, str], str] = {}
        for entry in show_only:
            kind, slash, name = entry.partition("/")
            if not slash or not kind or not name:
                message = f"--show-only {entry!r}: write KIND/NAME, e.g. Deployment/memory"
                raise SelectionError(message)
            wanted[(kind.lower(), name)] = entry
        present = {_kind_name(m) for m in chosen}
        missing = [entry for key, entry in wanted.items() if key not in present]
        if missing:
            raise SelectionError(
                f"--show-only {', '.join(missing)}: no such object in this render; objects: "
                + ", ".join(sorted(f"{m['kind']}/{_kind_name(m)[1]}" for m in chosen))
            )
        chosen = [m for m in chosen if _kind_name(m) in wanted]
    if selector is not None:
        match = label_selector(selector)
        chosen = [m for m in chosen if match(_labels(m))]
    return chosen
