"""Compare two MCP tool lists and classify every change as breaking or compatible for callers.

Pure functions over the tool objects ``tools/list`` returns. An input schema says what callers
may send and an output schema what they may receive, so the two are judged in opposite
directions: narrowing an input (a new required field, a removed enum value, a tighter type or
bound, ``additionalProperties: false``) breaks callers, while narrowing an output does not, and
widening an output does (a new enum value, a field no longer required). Removing a field breaks
either way.

Local ``$ref`` pointers (``#/$defs/Filters``, as pydantic emits) are followed, and pydantic's
``anyOf: [X, {type: null}]`` reads as type ``[X, null]``. A ``$ref`` that cannot be resolved, and
any keyword not modelled here (``allOf``, ``patternProperties``, ...), is compared as an opaque
value; a change to it counts as breaking since its effect is unknown.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, NamedTuple, cast
from urllib.parse import unquote

from langop_infra._errors import LangopError

ChangeKind = Literal["breaking", "compatible"]
Direction = Literal["input", "output"]

_MISSING: Final[Any] = object()
# Deeper schemas compare as opaque values, so a hostile schema cannot exhaust the stack.
_MAX_DEPTH: Final = 48
_MAX_REF_HOPS: Final = 32
_EXPAND_BUDGET: Final = 20_000
#: Levels of nesting a hashed or compared value may have. The MCP client refuses deeper
#: messages first (``langop_infra.mcp._jsonrpc.MAX_DEPTH``); lock files are held to it too.
MAX_NESTING: Final = 128

_DOC_KEYWORDS: Final = frozenset(
    {"title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly"}
    | {"$comment", "$schema", "$id", "$anchor"}
)
_LOWER_BOUNDS: Final = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS: Final = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_RESTRICTIONS: Final = ("pattern", "format", "multipleOf")
_MODELLED: Final = frozenset(
    {"type", "enum", "const", "properties", "required", "additionalProperties", "items"}
    | {"uniqueItems", "$ref", "$defs", "definitions", *_LOWER_BOUNDS, *_UPPER_BOUNDS}
    | set(_RESTRICTIONS)
)


@dataclass(frozen=True)
class SchemaChange:
    """One difference between two tool lists, located by a path like ``search.input.since``."""

    tool: str
    path: str
    kind: ChangeKind
    message: str

    @property
    def is_breaking(self) -> bool:
        return self.kind == "breaking"

    def __str__(self) -> str:
        return f"{'BREAKING' if self.is_breaking else 'compatible'} {self.tool}: {self.message}"


@dataclass(frozen=True)
class SchemaComparison:
    """Every change from an old tool list to a new one, sorted by tool, then path."""

    changes: tuple[SchemaChange, ...] = ()

    @property
    def breaking(self) -> tuple[SchemaChange, ...]:
        return tuple(c for c in self.changes if c.is_breaking)

    @property
    def compatible(self) -> tuple[SchemaChange, ...]:
        return tuple(c for c in self.changes if not c.is_breaking)

    @property
    def is_breaking(self) -> bool:
        return any(c.is_breaking for c in self.changes)

    @property
    def is_equal(self) -> bool:
        return not self.changes

    def summary(self) -> str:
        """``"1 breaking, 1 compatible change(s)"`` and a line per change, breaking first."""
        if not self.changes:
            return "no changes"
        head = f"{len(self.breaking)} breaking, {len(self.compatible)} compatible change(s)"
        return "\n".join([head, *(f"  {c}" for c in (*self.breaking, *self.compatible))])


class SchemaTooDeep(LangopError, ValueError):
    """A value nested deeper than :data:`MAX_NESTING`: refused before any recursion."""


def check_nesting(value: object, limit: int = MAX_NESTING) -> None:
    """Raise :class:`SchemaTooDeep` when ``value`` nests objects and arrays more than
    ``limit`` levels deep; walks with an explicit stack, so any depth is safe to check."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children: Iterable[object] = cast("Mapping[object, object]", node).values()
        elif isinstance(node, (list, tuple)):
            children = cast("Sequence[object]", node)
        else:
            continue
        if depth > limit:
            raise SchemaTooDeep(
                f"a tool schema is nested more than {limit} levels deep; refusing to hash or "
                "compare it (no real tool needs that many: the server is broken or hostile)"
            )
        stack.extend((child, depth + 1) for child in children)


def canonical_json(value: object) -> str:
    """Sorted keys, no whitespace, non-ASCII kept: equal JSON values give equal strings.
    :class:`SchemaTooDeep` for a value nested over :data:`MAX_NESTING` levels."""
    check_nesting(value)
    return json.dumps(_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def schema_hash(tools: Iterable[Mapping[str, object]]) -> str:
    """SHA-256 (hex) of the canonical JSON of ``tools`` sorted by name; list order is ignored.
    :class:`SchemaTooDeep` for tools nested over :data:`MAX_NESTING` levels."""
    tools = list(tools)
    if _json_within(tools, MAX_NESTING):
        # Plain JSON values: each tool is encoded once, and the list's canonical JSON is
        # those texts joined, in the same order and with the same bytes as below.
        keyed = sorted((_name_of(t) or "", _dumps(t)) for t in tools)
        text = "[" + ",".join(key for _, key in keyed) + "]"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
    check_nesting(tools)
    ordered = sorted((_plain(t) for t in tools), key=lambda t: (_name_of(t) or "", _key(t)))
    return hashlib.sha256(canonical_json(ordered).encode("utf-8")).hexdigest()


_JSON_SCALARS: Final[frozenset[object]] = frozenset({str, int, float, bool, type(None)})


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _json_within(value: object, limit: int) -> bool:
    """Whether ``value`` is built of dicts with string keys, lists and JSON scalars only,
    nested at most ``limit`` levels: then ``_plain`` would return it unchanged and
    :func:`check_nesting` would pass. One pass over containers, level by level, no recursion
    and no per-value function call; False leaves the value to the general path."""
    level: list[object] = [value]
    depth = 0
    scalars = _JSON_SCALARS
    while level:
        depth += 1
        if depth > limit:
            return False
        below: list[object] = []
        for node in level:
            kind: object = type(node)
            if kind is dict:
                if not all(type(k) is str for k in cast("dict[object, object]", node)):
                    return False
                children: Iterable[object] = cast("dict[object, object]", node).values()
            elif kind is list:
                children = cast("list[object]", node)
            else:
                return False
            for child in children:
                kind = type(child)
                if kind is dict or kind is list:
                    below.append(child)
                elif kind not in scalars:
                    return False
        level = below
    return True


def compare_tools(
    old: Sequence[Mapping[str, object]], new: Sequence[Mapping[str, object]]
) -> SchemaComparison:
    """Classify every change from ``old`` to ``new`` (tool objects as ``tools/list`` returns).

    Entries that are not objects with a string ``name`` are ignored; of two entries with one
    name (which a server should never list) the first in canonical order is used.
    :class:`SchemaTooDeep` when either side nests over :data:`MAX_NESTING` levels.
    """
    check_nesting([old, new], MAX_NESTING + 1)
    before, after = _by_name(old), _by_name(new)
    changes = [SchemaChange(n, n, "breaking", "tool removed") for n in before.keys() - after]
    changes += [SchemaChange(n, n, "compatible", "tool added") for n in after.keys() - before]
    for name in before.keys() & after.keys():
        changes += _compare_tool(name, before[name], after[name])
    ordered = sorted(dict.fromkeys(changes), key=lambda c: (c.tool, c.path, c.kind, c.message))
    return SchemaComparison(tuple(ordered))


def _compare_tool(
    name: str, old: Mapping[str, object], new: Mapping[str, object]
) -> list[SchemaChange]:
    changes: list[SchemaChange] = []
    for key in sorted((old.keys() | new.keys()) - {"name"}, key=str):
        before, after = old.get(key, _MISSING), new.get(key, _MISSING)
        if key == "inputSchema":  # none at all: arguments are still an object (MCP)
            any_object = {"type": "object"}
            _SchemaDiff(
                name, "input", _or(before, any_object), _or(after, any_object), changes
            ).run()
        elif key == "outputSchema":
            had, has = _or(before, None) is not None, _or(after, None) is not None
            if had and has:
                _SchemaDiff(name, "output", before, after, changes).run()
            elif has:
                message = "output schema added"
                changes.append(SchemaChange(name, f"{name}.output", "compatible", message))
            elif had:
                message = "output schema removed: structured output is no longer promised"
                changes.append(SchemaChange(name, f"{name}.output", "breaking", message))
        elif _key(before) != _key(after):
            message = f"{key} {_verb(before, after)}"
            was, now = _object(before), _object(after)
            if key == "annotations" and was is not None and now is not None:
                hints = [str(k) for k in was.keys() | now.keys() if _differs(was, now, k)]
                message += f": {', '.join(sorted(hints))}"
            changes.append(SchemaChange(name, f"{name}.{key}", "compatible", message))
    if not changes and _key(old) != _key(new):
        message = "definition changed without effect on callers (list order or unused $defs)"
        changes.append(SchemaChange(name, name, "compatible", message))
    return changes


class _Here(NamedTuple):
    """Where the walk is: field path, $refs expanded on each side so far, nesting depth."""

    parts: tuple[str, ...]
    old_seen: frozenset[str]
    new_seen: frozenset[str]
    depth: int

    def child(self, part: str) -> _Here:
        return _Here((*self.parts, part), self.old_seen, self.new_seen, self.depth + 1)


class _SchemaDiff:
    """Walks an old and a new JSON Schema side by side, recording changes for one direction."""

    def __init__(
        self, tool: str, direction: Direction, old: Any, new: Any, out: list[SchemaChange]
    ) -> None:
        self.tool, self.direction, self.out = tool, direction, out
        self.old_root, self.new_root = old, new

    def run(self) -> None:
        if _key(self.old_root) == _key(self.new_root):
            return
        root = frozenset({"#"})  # the root is being compared: "#" recurses into it
        self._node(self.old_root, self.new_root, _Here((), root, root, 0))

    def _subject(self, here: _Here) -> str:
        label = _suffix(here.parts).lstrip(".")
        return f"{self.direction} field '{label}'" if label else f"{self.direction} schema"

    def _record(self, kind: ChangeKind, here: _Here, message: str) -> None:
        path = f"{self.tool}.{self.direction}{_suffix(here.parts)}"
        self.out.append(SchemaChange(self.tool, path, kind, f"{self._subject(here)} {message}"))

    def _narrowed(self, here: _Here, message: str) -> None:
        """Fewer values allowed: breaks callers who send them, not callers who read them."""
        self._record("breaking" if self.direction == "input" else "compatible", here, message)

    def _widened(self, here: _Here, message: str) -> None:
        """More values allowed: breaks callers who read them, not callers who send them."""
        self._record("compatible" if self.direction == "input" else "breaking", here, message)

    def _same(self, old: object, new: object) -> bool:
        """Equal once local $refs are expanded, so a changed definition is not missed."""
        old_key, new_key = _key(old), _key(new)
        if '"$ref"' not in old_key and '"$ref"' not in new_key:
            return old_key == new_key
        return _key(_expand(old, self.old_root)) == _key(_expand(new, self.new_root))

    def _opaque(self, here: _Here, what: str, old: Any, new: Any) -> None:
        if not self._same(old, new):
            self._record("breaking", here, f"{what} changed (compared as an opaque value)")

    def _node(self, old: Any, new: Any, here: _Here) -> None:
        old, old_seen, old_problem = _resolve(old, self.old_root, here.old_seen)
        new, new_seen, new_problem = _resolve(new, self.new_root, here.new_seen)
        if old_problem or new_problem:
            if old_problem == new_problem == "is recursive" and _key(old) == _key(new):
                return  # the same recursion on both sides: its body is compared where it began
            ref = (old if old_problem else new)["$ref"]
            self._opaque(here, f"$ref {ref!r}, which {old_problem or new_problem},", old, new)
            return
        if here.depth > _MAX_DEPTH:
            self._opaque(here, f"schema nested over {_MAX_DEPTH} levels deep", old, new)
            return
        old, new = (_true_as_empty(v) for v in (old, new))
        old_object, new_object = _object(old), _object(new)
        if old_object is None or new_object is None:
            self._opaque(here, "schema, not a JSON object,", old, new)
            return
        old, old_seen = _flatten_union(old_object, self.old_root, old_seen)
        new, new_seen = _flatten_union(new_object, self.new_root, new_seen)
        here = here._replace(old_seen=old_seen, new_seen=new_seen)

        if not self._type(old, new, here):
            return  # an unrelated type: differences below it would only be noise
        for keyword in ("enum", "const"):
            self._allowed_values(keyword, old, new, here)
        self._properties(old, new, here)
        self._additional_properties(old, new, here)
        self._items(old, new, here)
        self._bounds(old, new, here)
        for key in sorted(old.keys() | new.keys(), key=str):
            before, after = old.get(key, _MISSING), new.get(key, _MISSING)
            if key in _MODELLED or self._same(before, after):
                continue
            if key in _DOC_KEYWORDS or str(key).startswith("x-"):
                detail = f" ({_change(before, after)})" if key == "default" else ""
                self._record("compatible", here, f"{key} {_verb(before, after)}{detail}")
            else:
                self._opaque(here, f"keyword {key!r}", before, after)

    def _type(self, old: Mapping[str, object], new: Mapping[str, object], here: _Here) -> bool:
        """Record a type change; False when old and new types have nothing in common."""
        if not (_valid_type(old) and _valid_type(new)):
            self._opaque(here, "type", old.get("type"), new.get("type"))
            return True
        before, after = _types(old), _types(new)
        if before == after:
            return True
        shown = f"from {_show_types(before)} to {_show_types(after)}"
        if _accepts(after, before):
            self._widened(here, f"type widened {shown}")
        elif _accepts(before, after):
            self._narrowed(here, f"type narrowed {shown}")
        else:
            self._record("breaking", here, f"type changed {shown}")
            return False
        return True

    def _allowed_values(
        self, keyword: str, old: Mapping[str, Any], new: Mapping[str, Any], here: _Here
    ) -> None:
        before, after = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
        if keyword == "const":
            before, after = (v if v is _MISSING else [v] for v in (before, after))
        if _key(before) == _key(after):
            return
        if not all(v is _MISSING or isinstance(v, list) for v in (before, after)):
            self._opaque(here, keyword, before, after)
        elif before is _MISSING:
            self._narrowed(here, f"{keyword} added: only {_show_values(after)}")
        elif after is _MISSING:
            self._widened(here, f"{keyword} removed: any value allowed")
        else:
            old_values, new_values = {_key(v): v for v in before}, {_key(v): v for v in after}
            if removed := [old_values[k] for k in sorted(old_values.keys() - new_values.keys())]:
                self._narrowed(here, f"{keyword} narrowed: removed {_show_values(removed)}")
            if added := [new_values[k] for k in sorted(new_values.keys() - old_values.keys())]:
                self._widened(here, f"{keyword} widened: added {_show_values(added)}")

    def _properties(
        self, old: Mapping[str, object], new: Mapping[str, object], here: _Here
    ) -> None:
        given_before, given_after = old.get("properties", {}), new.get("properties", {})
        before: Mapping[str, object] | None = _object(given_before)
        after: Mapping[str, object] | None = _object(given_after)
        if before is None or after is None:
            self._opaque(here, "properties", given_before, given_after)
            before, after = {}, {}
        old_required, new_required = _required(old), _required(new)
        if old_required is None or new_required is None:
            self._opaque(here, "required", old.get("required"), new.get("required"))
            old_required = new_required = frozenset[str]()
        for name in sorted(before.keys() | after.keys(), key=str):
            field = here.child(str(name))
            if name not in after:
                self._record("breaking", field, "removed")
            elif name in before:
                self._node(before[name], after[name], field)
            elif self.direction == "output":
                self._record("compatible", field, "added")
            elif name in new_required:
                self._record("breaking", field, "added as required")
            else:
                self._record("compatible", field, "added as optional")
        for name in sorted(old_required ^ new_required):
            if (name in before) == (name in after):  # added or removed fields are reported above
                field = here.child(name)
                if name in new_required:
                    self._narrowed(field, "became required")
                else:
                    self._widened(field, "is no longer required")

    def _additional_properties(
        self, old: Mapping[str, Any], new: Mapping[str, Any], here: _Here
    ) -> None:
        before = old.get("additionalProperties", True)
        after = new.get("additionalProperties", True)
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            self._node(before, after, here.child("*"))
            return
        old_rank, new_rank = _openness(before), _openness(after)
        if old_rank == new_rank is not None:
            return
        if old_rank is None or new_rank is None:
            self._opaque(here, "additionalProperties", before, after)
        elif new_rank < old_rank:
            what = "turned false" if after is False else "restricted to a schema"
            self._narrowed(here, f"additionalProperties {what}: fewer unlisted fields allowed")
        else:
            what = "turned true" if after is True else "relaxed to a schema"
            self._widened(here, f"additionalProperties {what}: more unlisted fields allowed")

    def _items(self, old: Mapping[str, Any], new: Mapping[str, Any], here: _Here) -> None:
        before, after = old.get("items", _MISSING), new.get("items", _MISSING)
        if before is _MISSING and after is _MISSING:
            return
        if isinstance(before, list) or isinstance(after, list):
            self._opaque(here, "items (tuple form)", before, after)
        else:
            self._node(_or(before, {}), _or(after, {}), here.child("[]"))

    def _bounds(self, old: Mapping[str, Any], new: Mapping[str, Any], here: _Here) -> None:
        for keyword in (*_LOWER_BOUNDS, *_UPPER_BOUNDS, *_RESTRICTIONS, "uniqueItems"):
            before, after = old.get(keyword, _MISSING), new.get(keyword, _MISSING)
            if _key(before) == _key(after):
                continue
            message = f"{keyword} {_verb(before, after)} ({_change(before, after)})"
            if keyword == "uniqueItems":
                if not all(v is _MISSING or isinstance(v, bool) for v in (before, after)):
                    self._opaque(here, keyword, before, after)
                elif bool(_or(before, False)) != bool(_or(after, False)):
                    (self._narrowed if after is True else self._widened)(here, message)
            elif keyword in _RESTRICTIONS:
                if before is _MISSING:
                    self._narrowed(here, message)
                elif after is _MISSING:
                    self._widened(here, message)
                else:
                    self._record("breaking", here, message)  # neither wider nor narrower
            elif not all(v is _MISSING or _is_number(v) for v in (before, after)):
                self._opaque(here, keyword, before, after)
            else:
                lower = keyword in _LOWER_BOUNDS
                unset = float("-inf") if lower else float("inf")
                old_bound, new_bound = _or(before, unset), _or(after, unset)
                if old_bound != new_bound:
                    tighter = (new_bound > old_bound) == lower
                    (self._narrowed if tighter else self._widened)(here, message)


def _resolve(node: Any, root: Any, seen: frozenset[str]) -> tuple[Any, frozenset[str], str | None]:
    """Follow local ``$ref`` pointers; the third value says why a ``$ref`` was left in place."""
    for _ in range(_MAX_REF_HOPS):
        fields = _object(node)
        if fields is None or "$ref" not in fields:
            return node, seen, None
        ref = fields["$ref"]
        if not isinstance(ref, str):
            return node, seen, "is not a string"
        if ref in seen:
            return node, seen, "is recursive"
        pointed = _pointer(root, ref)
        target: Mapping[str, Any] | None = {} if pointed is True else _object(pointed)
        if target is None:
            return node, seen, "cannot be resolved"
        # Keywords next to a $ref (allowed since draft 2019-09) refine the target.
        node = {**target, **{k: v for k, v in fields.items() if k != "$ref"}}
        seen = seen | {ref}
    return node, seen, "cannot be resolved"


def _true_as_empty(schema: object) -> Any:
    """``true``, the schema that admits anything, as the equivalent ``{}``."""
    return {} if schema is True else schema


def _object(value: object) -> Mapping[str, Any] | None:
    """``value`` when it is a JSON object (a mapping), else None."""
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _array(value: object) -> list[Any] | None:
    """``value`` when it is a JSON array (a list), else None."""
    return cast("list[Any]", value) if isinstance(value, list) else None


def _pointer(root: object, ref: str) -> Any:
    """The target of a local JSON pointer (``#/$defs/A``); ``_MISSING`` for anything else."""
    fragment = unquote(ref[1:]) if ref.startswith("#") else None
    if fragment is None or (fragment and not fragment.startswith("/")):
        return _MISSING  # another document or a named anchor: never fetched
    node: object = root
    for token in fragment.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        mapping, items = _object(node), _array(node)
        if mapping is not None and token in mapping:
            node = mapping[token]
        elif items is not None and token.isdigit() and int(token) < len(items):
            node = items[int(token)]
        else:
            return _MISSING
    return node


def _flatten_union(
    node: Mapping[str, object], root: object, seen: frozenset[str]
) -> tuple[Mapping[str, Any], frozenset[str]]:
    """Rewrite ``anyOf``/``oneOf`` of plain types, or of ``X`` and null, as a ``type`` list."""
    for keyword in ("anyOf", "oneOf"):
        options = _array(node.get(keyword))
        if "type" in node or not options:
            continue
        resolved: list[Mapping[str, object]] = []
        expanded = seen
        for option in options:
            option, option_seen, problem = _resolve(option, root, seen)
            schema = _object(option)
            if problem or schema is None:
                return node, seen
            resolved.append(schema)
            expanded |= option_seen
        rest = {k: v for k, v in node.items() if k != keyword}
        plain = [_plain_type(o) for o in resolved]
        if all(plain):
            return {**rest, "type": sorted({t for t in plain if t})}, seen
        others = [o for o, t in zip(resolved, plain, strict=True) if t != "null"]
        if len(others) == 1 < len(resolved) and _valid_type(others[0]):
            types = _types(others[0])
            if types is not None:
                # The option's $refs are expanded into this node now: the walk must know them.
                return {**others[0], **rest, "type": sorted(types | {"null"})}, expanded
    return node, seen


def _expand(
    value: Any, root: Any, seen: frozenset[str] = frozenset(), budget: list[int] | None = None
) -> Any:
    """``value`` with local $refs replaced by their targets (recursive ones kept), for equality."""
    budget = [_EXPAND_BUDGET] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return value  # a pathological fan-out of $refs: compare what is there
    if isinstance(value, Mapping):
        value, seen, _problem = _resolve(value, root, seen)
        return {str(k): _expand(v, root, seen, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, root, seen, budget) for v in cast("list[object]", value)]
    return value


def _openness(value: Any) -> int | None:
    """How many unlisted fields ``additionalProperties`` admits: 0 none, 1 some, 2 any."""
    if isinstance(value, Mapping):
        return 1
    return {True: 2, False: 0}[value] if isinstance(value, bool) else None


def _plain_type(option: Mapping[str, Any]) -> str | None:
    """The type of an option that is nothing but a type (and docs), else None."""
    kind = option.get("type")
    plain = isinstance(kind, str) and option.keys() <= {"type", "title", "description"}
    return kind if plain else None


def _valid_type(node: Mapping[str, object]) -> bool:
    kind = node.get("type")
    return (
        kind is None
        or isinstance(kind, str)
        or (isinstance(kind, list) and all(isinstance(k, str) for k in cast("list[object]", kind)))
    )


def _types(node: Mapping[str, Any]) -> frozenset[str] | None:
    """The JSON types a schema with a valid ``type`` allows; None for any."""
    kind = node.get("type")
    if kind is None:
        return None
    return frozenset([kind] if isinstance(kind, str) else kind)


def _accepts(outer: frozenset[str] | None, inner: frozenset[str] | None) -> bool:
    """Whether every value of a type in ``inner`` also has a type in ``outer``."""
    if outer is None or inner is None:
        return outer is None
    return all(t in outer or (t == "integer" and "number" in outer) for t in inner)


def _required(node: Mapping[str, Any]) -> frozenset[str] | None:
    names = _array(node.get("required", []))
    if names is None or not all(isinstance(n, str) for n in names):
        return None
    return frozenset(names)


def _by_name(tools: Sequence[Mapping[str, object]]) -> dict[str, Mapping[str, Any]]:
    if isinstance(tools, (str, bytes, Mapping)):
        raise TypeError(f"expected a list of tool objects, got {type(tools).__name__}")
    found: dict[str, Mapping[str, object]] = {}
    for tool in tools or ():
        name = _name_of(tool)
        if name is not None and (name not in found or _key(tool) < _key(found[name])):
            found[name] = tool
    return found


def _name_of(tool: object) -> str | None:
    fields = _object(tool)
    name = fields.get("name") if fields is not None else None
    return name if isinstance(name, str) else None


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in cast("Mapping[object, object]", value).items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in cast("Sequence[object]", value)]
    return value


def _key(value: object) -> str:
    """A canonical string for equality; never raises (a non-JSON value is shown by repr)."""
    if value is _MISSING:
        return "<missing>"
    try:
        return canonical_json(value)
    except SchemaTooDeep:
        return f"<nested too deep: {id(value)}>"  # never equal to another value
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _suffix(parts: tuple[str, ...]) -> str:
    return "".join(p if p == "[]" else f".{p}" for p in parts)


def _or(value: object, fallback: object) -> Any:
    return fallback if value is _MISSING or value is None else value


def _differs(old: Mapping[str, Any], new: Mapping[str, Any], key: Any) -> bool:
    return _key(old.get(key, _MISSING)) != _key(new.get(key, _MISSING))


def _verb(old: object, new: object) -> str:
    return "added" if old is _MISSING else "removed" if new is _MISSING else "changed"


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _change(old: object, new: object) -> str:
    return f"{_show(old)} -> {_show(new)}"


def _show(value: object) -> str:
    return "unset" if value is _MISSING else _key(value)


def _show_values(values: Sequence[object]) -> str:
    shown = ", ".join(_key(v) for v in values[:8])
    return shown + (f" and {len(values) - 8} more" if len(values) > 8 else "")


def _show_types(types: frozenset[str] | None) -> str:
    if types is None:
        return "any"
    ordered = sorted(types)
    return ordered[0] if len(ordered) == 1 else f"[{', '.join(ordered)}]"
