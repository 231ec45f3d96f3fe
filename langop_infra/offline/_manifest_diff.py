"""Compare two renders: objects added, removed and changed; changed fields with their paths,
line diffs inside multi-line strings, named list entries that moved, and secret rotations
(when both renders carry keyed fingerprints).

Linear in the size of the renders: objects are matched by key, equal subtrees are skipped by
one comparison, named lists are matched by name. Reports are in
:mod:`langop_infra.offline._diff_report`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langop_infra.core import _yaml_io as yaml_io
from langop_infra.core.problems import Problem, SpecError
from langop_infra.offline._formats import OUT_MARKER, REDACTED
from langop_infra.offline._stack_secrets import FINGERPRINT

# manifests._contract.SECRET_DIGEST_ANNOTATION, not imported: `diff` loads no config models.
SECRET_DIGEST_ANNOTATION = "langop.io/secret-digest"

MAX_RENDER_BYTES = 256 * 1024 * 1024
MAX_RENDER_DEPTH = 128

ObjectKey = tuple[str, str, str, str]

# Fields the API server will not change in place: pulumi-kubernetes replaces the object when
# one changes (a fixed name means delete, then create).
IMMUTABLE_FIELDS: dict[str, tuple[str, ...]] = {
    "PersistentVolumeClaim": (
        "spec.storageClassName",
        "spec.accessModes",
        "spec.volumeMode",
        "spec.selector",
        "spec.volumeName",
        "spec.dataSource",
    ),
    "Deployment": ("spec.selector",),
    "Job": ("spec.selector", "spec.template"),
    "Service": ("spec.clusterIP", "spec.clusterIPs"),
}


class _Missing:
    def __repr__(self) -> str:
        return "(absent)"


MISSING: Any = _Missing()
_MISSING = MISSING  # the name earlier releases used


def object_key(manifest: Mapping[str, Any]) -> ObjectKey:
    meta: Any = manifest.get("metadata") or {}
    return (
        str(manifest.get("apiVersion", "")),
        str(manifest.get("kind", "")),
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
    )


def replaced_by(key: ObjectKey, changes: list[FieldChange]) -> str | None:
    """The first changed field that makes the engine replace the object, if any."""
    for change in changes:
        for field_path in IMMUTABLE_FIELDS.get(key[1], ()):
            inside = (f"{field_path}.", f"{field_path}[")
            if change.path == field_path or change.path.startswith(inside):
                return change.path
    return None


def describe(key: ObjectKey) -> str:
    _, kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def _not_a_render(path: Path, why: str) -> SpecError:
    return SpecError([Problem(str(path), f"{why}: not a render")], subject="render")


def load_render(path: str | Path) -> dict[ObjectKey, dict[str, Any]]:
    """A render from a YAML stream file or an ``--out`` folder, keyed by object.

    Refused (``SpecError``) unless it is one: a stream with at least one object, or a folder
    holding render's ``.langop-render`` marker. A failed render must not read as "everything
    was deleted".
    """
    path = Path(path)
    if not path.exists():
        raise SpecError([Problem(str(path), "no such file or directory")], subject="render")
    if path.is_dir():
        if not (path / OUT_MARKER).is_file():
            raise _not_a_render(path, f"a folder without {OUT_MARKER} (written by render --out)")
        files = sorted(path.rglob("*.yaml"))
    else:
        files = [path]
    objects: dict[ObjectKey, dict[str, object]] = {}
    for file in files:
        for doc in _documents(file):
            key = object_key(doc)
            if key in objects:
                raise SpecError(
                    [Problem(str(file), f"holds {describe(key)} twice")], subject="render"
                )
            objects[key] = doc
    if not objects and not path.is_dir():
        raise _not_a_render(path, "holds no Kubernetes objects (did the render fail?)")
    return objects


def _documents(file: Path) -> Iterator[dict[str, Any]]:
    try:
        if file.stat().st_size > MAX_RENDER_BYTES:
            raise yaml_io.ConfigYAMLError(f"over {MAX_RENDER_BYTES} bytes")
        data = file.read_bytes()
        # Bounded as stack files are (a pull request can change a render), scaled to renders:
        # without aliases every value takes a byte or more, so only a bomb is refused.
        documents = yaml_io.load_config_all(
            data,
            max_bytes=MAX_RENDER_BYTES,
            max_depth=MAX_RENDER_DEPTH,
            max_values=max(yaml_io.MAX_VALUES, len(data)),
        )
    except yaml_io.YAMLError as exc:
        problem = Problem(str(file), f"not valid YAML: {exc}")
        raise SpecError([problem], subject="render") from None
    except OSError as exc:
        problem = Problem(str(file), f"cannot read: {exc.strerror}")
        raise SpecError([problem], subject="render") from None
    for doc in documents:
        if doc is None:
            continue
        if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
            raise SpecError(
                [Problem(str(file), "holds a document that is not an object")], subject="render"
            )
        yield doc


@dataclass(frozen=True)
class FieldChange:
    """One difference inside an object.

    ``kind``: ``changed``, ``added``, ``removed`` (a field), ``text`` (a multi-line string;
    see :meth:`lines`), ``moved`` (a named list entry; ``old``/``new`` are its positions) or
    ``secret`` (a secret value changed; ``old``/``new`` are fingerprints).
    """

    path: str
    old: Any
    new: Any
    kind: str = "changed"

    def lines(self, context: int = 2) -> list[str]:
        """For ``text`` changes: unified-diff lines, hunk headers included, no file header."""
        if self.kind != "text":
            return []
        old = "" if self.old is MISSING else str(self.old)
        new = "" if self.new is MISSING else str(self.new)
        diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=context)
        return list(diff)[2:]


@dataclass
class RenderDiff:
    added: list[ObjectKey] = field(default_factory=list[ObjectKey])
    removed: list[ObjectKey] = field(default_factory=list[ObjectKey])
    changed: dict[ObjectKey, list[FieldChange]] = field(
        default_factory=dict[ObjectKey, list[FieldChange]]
    )
    # Secret values present in both renders that could not be compared: redacted on a side,
    # or fingerprinted with different keys.
    unseen_secrets: int = 0
    key_mismatch: bool = False

    @property
    def equal(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff_renders(
    old: Mapping[ObjectKey, Mapping[str, object]], new: Mapping[ObjectKey, Mapping[str, object]]
) -> RenderDiff:
    result = RenderDiff()
    result.added = sorted(set(new) - set(old))
    result.removed = sorted(set(old) - set(new))
    tally = _SecretTally()
    for key in sorted(set(old) & set(new)):
        changes = list(field_changes(old[key], new[key], tally=tally))
        if changes:
            result.changed[key] = changes
    result.unseen_secrets = tally.unseen
    result.key_mismatch = tally.key_mismatch
    if tally.key_mismatch:
        # Pods' secret digests under keys derived from different fingerprint keys: no
        # comparison either (the report's note says so).
        for key, changes in list(result.changed.items()):
            kept = [c for c in changes if not c.path.endswith(SECRET_DIGEST_ANNOTATION)]
            if kept:
                result.changed[key] = kept
            else:
                del result.changed[key]
    return result


@dataclass
class _SecretTally:
    unseen: int = 0
    key_mismatch: bool = False


def field_changes(
    old: Any, new: Any, path: str = "", *, tally: _SecretTally | None = None
) -> Iterator[FieldChange]:
    """Leaf-level differences; lists of named items (containers, env, ports, volumes) are
    matched by name, so inserting one entry does not report every later entry as changed,
    and an entry whose place among the others changed is reported as moved."""
    tally = tally if tally is not None else _SecretTally()
    if old == new and type(old) is type(new):
        if isinstance(old, (dict, list)) or old == REDACTED:
            tally.unseen += _redacted_leaves(old)
        return
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        was, now = cast("Mapping[Any, Any]", old), cast("Mapping[Any, Any]", new)
        for k in sorted(set(was) | set(now), key=str):
            sub = f"{path}.{k}" if path else str(k)
            yield from field_changes(was.get(k, MISSING), now.get(k, MISSING), sub, tally=tally)
    elif isinstance(old, list) and isinstance(new, list):
        before, after = cast("list[Any]", old), cast("list[Any]", new)
        if _named(before) and _named(after):
            yield from _named_list_changes(before, after, path, tally)
        else:
            for i in range(max(len(before), len(after))):
                yield from field_changes(
                    before[i] if i < len(before) else MISSING,
                    after[i] if i < len(after) else MISSING,
                    f"{path}[{i}]",
                    tally=tally,
                )
    else:
        yield from _leaf_change(old, new, path, tally)


def _leaf_change(old: Any, new: Any, path: str, tally: _SecretTally) -> Iterator[FieldChange]:
    if old is MISSING:
        yield FieldChange(path, old, new, "added")
        return
    if new is MISSING:
        yield FieldChange(path, old, new, "removed")
        return
    old_mark, new_mark = _secret_mark(old), _secret_mark(new)
    if old_mark or new_mark:
        if old_mark and new_mark and old_mark[0] == new_mark[0]:
            yield FieldChange(path, old, new, "secret")
        elif old_mark and new_mark:
            tally.key_mismatch = True
            tally.unseen += 1
        elif old_mark or new_mark:
            # One side redacted, the other fingerprinted: the values cannot be compared.
            if REDACTED in (old, new):
                tally.unseen += 1
            else:
                yield FieldChange(path, old, new)
        return
    if isinstance(old, str) and isinstance(new, str) and ("\n" in old or "\n" in new):
        yield FieldChange(path, old, new, "text")
        return
    yield FieldChange(path, old, new)


def _secret_mark(value: object) -> tuple[str, str] | None:
    """``(key id, mac)`` of a fingerprint; ``("", "")`` for a plain redaction marker."""
    if value == REDACTED:
        return ("", "")
    if isinstance(value, str) and (m := FINGERPRINT.fullmatch(value)):
        return (m.group(1), m.group(2))
    return None


def _redacted_leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_redacted_leaves(v) for v in cast("dict[Any, Any]", value).values())
    if isinstance(value, list):
        return sum(_redacted_leaves(v) for v in cast("list[Any]", value))
    return 1 if value == REDACTED else 0


def _named_list_changes(
    old: list[Any], new: list[Any], path: str, tally: _SecretTally
) -> Iterator[FieldChange]:
    before = {item["name"]: (i, item) for i, item in enumerate(old)}
    after = {item["name"]: (i, item) for i, item in enumerate(new)}
    for name in [*before, *(n for n in after if n not in before)]:
        sub = f"{path}[name={name}]"
        yield from field_changes(
            before[name][1] if name in before else MISSING,
            after[name][1] if name in after else MISSING,
            sub,
            tally=tally,
        )
    for name in _moved(list(before), list(after)):
        yield FieldChange(f"{path}[name={name}]", before[name][0], after[name][0], "moved")


def _moved(old_names: list[str], new_names: list[str]) -> list[str]:
    """Names whose order relative to the others changed: those outside the longest run of
    names kept in order (an insertion or removal elsewhere is not a move)."""
    common = set(old_names) & set(new_names)
    a = [n for n in old_names if n in common]
    b = [n for n in new_names if n in common]
    if a == b:
        return []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    blocks = matcher.get_matching_blocks()
    kept = {name for block in blocks for name in a[block.a : block.a + block.size]}
    return [n for n in b if n not in kept]


def _named(items: list[object]) -> bool:
    names = [cast("Mapping[str, Any]", i).get("name") for i in items if isinstance(i, Mapping)]
    return (
        len(names) == len(items)
        and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    )
