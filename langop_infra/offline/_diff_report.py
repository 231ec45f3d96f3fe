"""A :class:`~langop_infra.offline._manifest_diff.RenderDiff` as text (optionally coloured),
Markdown (for a pull-request comment) or JSON."""

from __future__ import annotations

import json
import re
from typing import Any, cast

from langop_infra.core import _yaml_io as yaml_io
from langop_infra.offline._formats import REDACTED
from langop_infra.offline._manifest_diff import (
    MISSING,
    FieldChange,
    ObjectKey,
    RenderDiff,
    describe,
    replaced_by,
)
from langop_infra.offline._stack_secrets import FINGERPRINT

WIDTH = 200
MARKDOWN_LIMIT = 60_000  # GitHub refuses comments over 65,536 characters
_COLOURS = {"+": "32", "-": "31", "~": "33", "@": "36", "!": "35"}


def report(diff: RenderDiff, fmt: str = "text", *, colour: bool = False) -> str:
    if fmt == "json":
        return json.dumps(as_json(diff), indent=2, ensure_ascii=False) + "\n"
    lines = body_lines(diff)
    if fmt == "markdown":
        return markdown(diff, lines)
    if colour:
        lines = [_paint(line) for line in lines]
    return "\n".join([*lines, *notes(diff), summary(diff)]) + "\n"


def summary(diff: RenderDiff) -> str:
    """One line: objects added, removed and changed, and what changed inside them."""
    if diff.equal:
        return "no differences"
    counts: dict[str, int] = {}
    for changes in diff.changed.values():
        for change in changes:
            counts[change.kind] = counts.get(change.kind, 0) + 1
    moved, secrets = counts.pop("moved", 0), counts.pop("secret", 0)
    fields = sum(counts.values())
    parts = [f"{fields} field{'s' if fields != 1 else ''}"] if fields else []
    parts += [f"{moved} moved"] if moved else []
    parts += [f"{secrets} secret value{'s' if secrets != 1 else ''} changed"] if secrets else []
    inside = f" ({', '.join(parts)})" if parts else ""
    return (
        f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed{inside}"
    )


def notes(diff: RenderDiff) -> list[str]:
    if diff.key_mismatch:
        return [
            "note: the renders' secret fingerprints were made with different keys, so secret "
            "changes cannot be seen; render both with the same --fingerprint-key-env key"
        ]
    if diff.unseen_secrets:
        count = diff.unseen_secrets
        return [
            f"note: {count} secret value{'s are' if count != 1 else ' is'} redacted, so "
            "secret changes cannot be seen; render both with --fingerprint-key-env VAR"
        ]
    return []


def body_lines(diff: RenderDiff) -> list[str]:
    lines = [f"+ {describe(k)}" for k in diff.added]
    lines += [f"- {describe(k)}" for k in diff.removed]
    for key, changes in diff.changed.items():
        immutable = replaced_by(key, changes)
        lines.append(
            f"+- {describe(key)} (replace: {immutable} cannot change in place)"
            if immutable
            else f"~ {describe(key)}"
        )
        for change in changes:
            lines += _change_lines(change)
    return lines


def _change_lines(change: FieldChange) -> list[str]:
    if change.kind == "moved":
        return [f"    {change.path}: moved from position {change.old} to {change.new}"]
    if change.kind == "secret":
        return [f"    {change.path}: secret value changed"]
    if change.kind == "text":
        return [f"    {change.path}:", *(f"      {line}" for line in change.lines())]
    old, new = _show_pair(change.old, change.new)
    return [f"    {change.path}: {old} -> {new}"]


def _show_pair(old: object, new: object) -> tuple[str, str]:
    """Both values on one line each; two long strings are cut around where they differ."""
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > WIDTH:
        start = 0
        while start < min(len(old), len(new)) and old[start] == new[start]:
            start += 1
        start = max(0, start - 40)
        return _window(old, start), _window(new, start)
    return _show(old), _show(new)


def _window(text: str, start: int) -> str:
    end = start + WIDTH - 40
    return (
        ("..." if start else "")
        + _show(text[start:end], cut=False)
        + ("..." if end < len(text) else "")
    )


def _show(value: object, *, cut: bool = True) -> str:
    if value is MISSING:
        return "(absent)"
    value = _plain_secrets(value)
    text = yaml_io.dump(value, flow=True).strip()
    text = text.removesuffix("...").strip()
    return text if not cut or len(text) <= WIDTH else text[: WIDTH - 3] + "..."


def _plain_secrets(value: object) -> object:
    """Fingerprints read as the redaction marker in text (the JSON report keeps them)."""
    if isinstance(value, dict):
        return {k: _plain_secrets(v) for k, v in cast("dict[Any, Any]", value).items()}
    if isinstance(value, list):
        return [_plain_secrets(v) for v in cast("list[Any]", value)]
    if isinstance(value, str) and FINGERPRINT.fullmatch(value):
        return REDACTED
    return value


def _paint(line: str) -> str:
    stripped = line.lstrip()
    mark = stripped[:1]
    if line.startswith("    ") and not line.startswith("      "):
        return line  # a field path line
    code = _COLOURS.get(mark)
    return f"\x1b[{code}m{line}\x1b[0m" if code else line


def markdown(diff: RenderDiff, lines: list[str]) -> str:
    """A heading line with the summary, notes, and the report in a ``diff`` code block
    (GitHub colours its + and - lines), cut to fit a comment."""
    out = [f"**langop-infra diff**: {summary(diff)}"]
    out += ["", *(f"> {note}" for note in notes(diff))] if notes(diff) else []
    if not lines:
        return "\n".join(out).rstrip() + "\n"
    body: list[str] = []
    size = kept = 0
    for line in lines:
        size += len(line) + 1
        if size > MARKDOWN_LIMIT:
            break
        body.append(line)
        kept += 1
    if kept < len(lines):
        body.append(f"... {len(lines) - kept} more lines: run langop-infra diff locally")
    longest = max((len(m) for m in re.findall(r"`+", "\n".join(body))), default=0)
    fence = "`" * max(3, longest + 1)
    out += ["", f"{fence}diff", *body, fence]
    return "\n".join(out).strip("\n") + "\n"


def as_json(diff: RenderDiff) -> dict[str, Any]:
    def obj(key: ObjectKey) -> dict[str, str]:
        api_version, kind, namespace, name = key
        return {"apiVersion": api_version, "kind": kind, "namespace": namespace, "name": name}

    def change(c: FieldChange) -> dict[str, Any]:
        item: dict[str, object] = {"path": c.path, "kind": c.kind}
        if c.old is not MISSING:
            item["old"] = c.old
        if c.new is not MISSING:
            item["new"] = c.new
        if c.kind == "text":
            item["lines"] = c.lines()
        return item

    return {
        "equal": diff.equal,
        "summary": summary(diff),
        "notes": notes(diff),
        "added": [obj(k) for k in diff.added],
        "removed": [obj(k) for k in diff.removed],
        "changed": [
            {"object": obj(k), "changes": [change(c) for c in changes]}
            for k, changes in diff.changed.items()
        ],
    }
