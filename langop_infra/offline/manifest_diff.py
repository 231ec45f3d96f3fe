"""Compare two renders: objects added, removed and changed, with changed field paths."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langop_infra import yaml_io
from langop_infra.errors import Problem, SpecError

ObjectKey = tuple[str, str, str, str]


def object_key(manifest: Mapping[str, Any]) -> ObjectKey:
    meta = manifest.get("metadata") or {}
    return (
        str(manifest.get("apiVersion", "")),
        str(manifest.get("kind", "")),
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
    )


def describe(key: ObjectKey) -> str:
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def load_render(path: str | Path) -> dict[ObjectKey, dict[str, Any]]:
    """A render from a YAML stream file or an ``--out`` directory, keyed by object."""
    path = Path(path)
    files = sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
    if not path.exists():
        raise SpecError([Problem(str(path), "no such file or directory")], subject="render")
    objects: dict[ObjectKey, dict[str, Any]] = {}
    for file in files:
        try:
            documents = yaml_io.load_all(file.read_text())
        except yaml_io.YAMLError as exc:
            raise SpecError(
                [Problem(str(file), f"not valid YAML: {exc}")], subject="render"
            ) from None
        for doc in documents:
            if doc is None:
                continue
            if not isinstance(doc, dict) or "kind" not in doc:
                raise SpecError(
                    [Problem(str(file), "holds a document that is not an object")], subject="render"
                )
            objects[object_key(doc)] = doc
    return objects


@dataclass(frozen=True)
class FieldChange:
    path: str
    old: Any
    new: Any


@dataclass
class RenderDiff:
    added: list[ObjectKey] = field(default_factory=list)
    removed: list[ObjectKey] = field(default_factory=list)
    changed: dict[ObjectKey, list[FieldChange]] = field(default_factory=dict)

    @property
    def equal(self) -> bool:
        return not (self.added or self.removed or self.changed)

    def report(self) -> str:
        lines = []
        lines += [f"+ {describe(k)}" for k in self.added]
        lines += [f"- {describe(k)}" for k in self.removed]
        for key, changes in self.changed.items():
            lines.append(f"~ {describe(key)}")
            for c in changes:
                lines.append(f"    {c.path}: {_show(c.old)} -> {_show(c.new)}")
        total = len(self.added) + len(self.removed) + len(self.changed)
        summary = (
            f"{len(self.added)} added, {len(self.removed)} removed, {len(self.changed)} changed"
        )
        return "\n".join([*lines, summary if total else "no differences"]) + "\n"


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(absent)"
    text = yaml_io.dump(value, flow=True).strip()
    text = text.removesuffix("...").strip()
    return text if len(text) <= 200 else text[:197] + "..."


_MISSING = object()


def diff_renders(
    old: Mapping[ObjectKey, Mapping[str, Any]], new: Mapping[ObjectKey, Mapping[str, Any]]
) -> RenderDiff:
    result = RenderDiff()
    result.added = sorted(set(new) - set(old))
    result.removed = sorted(set(old) - set(new))
    for key in sorted(set(old) & set(new)):
        changes = list(field_changes(old[key], new[key]))
        if changes:
            result.changed[key] = changes
    return result


def field_changes(old: Any, new: Any, path: str = "") -> Iterator[FieldChange]:
    """Leaf-level differences; lists of named items (containers, env, ports, volumes) are
    matched by name, so inserting one entry does not report every later entry as changed."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for k in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{k}" if path else str(k)
            yield from field_changes(old.get(k, _MISSING), new.get(k, _MISSING), sub)
    elif isinstance(old, list) and isinstance(new, list):
        if _named(old) and _named(new):
            before = {item["name"]: item for item in old}
            after = {item["name"]: item for item in new}
            for name in [*before, *(n for n in after if n not in before)]:
                sub = f"{path}[name={name}]"
                yield from field_changes(before.get(name, _MISSING), after.get(name, _MISSING), sub)
        else:
            for i in range(max(len(old), len(new))):
                yield from field_changes(
                    old[i] if i < len(old) else _MISSING,
                    new[i] if i < len(new) else _MISSING,
                    f"{path}[{i}]",
                )
    elif old != new or type(old) is not type(new):
        yield FieldChange(path, old, new)


def _named(items: list[Any]) -> bool:
    names = [i.get("name") for i in items if isinstance(i, Mapping)]
    return (
        len(names) == len(items)
        and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    )
