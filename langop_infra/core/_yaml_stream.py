"""Plain data built straight from a YAML event stream, within the limits of hand-written
config files (``yaml_io.load_config``): one pass, no node graph.

Composing a document first (PyYAML's nodes, each with two marks) costs about 40-90 bytes of
memory per input byte; built from events, a document costs what its values cost (3-7 bytes
per byte for a schema lock or a render). The checks are those of the node graph: nesting
depth, duplicate keys, aliases that refer to themselves, integers over Python's digit limit,
and the number of values a document expands to through aliases, each counted as it arrives.
Scalars are resolved and constructed by PyYAML's own safe resolver and constructor, so values
are the same as ``yaml.safe_load``'s; equal short strings share one object.

Rare forms (an explicit tag on a mapping or sequence, merge keys ``<<``) raise
:class:`Unsupported`; the caller reads such a document through the node graph instead.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import yaml
from yaml.composer import ComposerError
from yaml.nodes import ScalarNode

from langop_infra._errors import LangopError

_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_STR_TAG = "tag:yaml.org,2002:str"
_INT_TAG = "tag:yaml.org,2002:int"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# A plain decimal integer as SafeConstructor reads it (no sign, underscore, base or
# sexagesimal part); at most _SHARED_MAX characters, far below Python's digit limit.
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_SHARED_MAX = 64  # strings up to this length are shared between equal values
_CACHED = 4096  # entries each cache holds before it starts again: its cost stays constant


class Unsupported(LangopError):
    """A document this builder leaves to the node graph."""


@dataclass(slots=True)
class _Open:
    """A mapping or sequence being built: its value, size so far, and where it started."""

    value: Any
    line: int
    anchor: str | None
    parent: _Open | None  # the collection it sits in, for its place in messages
    slot: int | str | None  # its index there, its key's label, or None (it is a key)
    size: int = 1
    key: Any = None
    has_key: bool = False
    key_label: str = ""
    # Where each key was given (its start mark), by what it is: the text of a string key,
    # (tag, text) for any other scalar key: one key whatever its quoting, as in the node graph.
    keys: dict[object, Any] = field(default_factory=dict[object, Any])
    keys_seen: int = 0

    def label(self) -> str:
        """Its place, for messages: ``tools[3].inputSchema`` (built only when needed)."""
        chain: list[_Open] = []
        node: _Open | None = self
        while node is not None:
            chain.append(node)
            node = node.parent
        label = ""
        for node in reversed(chain):
            slot = node.slot
            if isinstance(slot, int):
                label = f"{label}[{slot}]"
            elif isinstance(slot, str):
                label = f"{label}.{slot}" if label else slot
        return label


class Builder:
    """Builds the documents of one stream; ``error`` makes the caller's exception type."""

    def __init__(
        self,
        loader: type[yaml.SafeLoader],
        max_depth: int,
        max_values: int,
        error: Callable[[str, int | None, int], Exception],
    ) -> None:
        self.resolver = loader("")
        self.constructor = loader("")
        self.max_depth = max_depth
        self.budget = max_values
        self.error = error
        self.shared: dict[str, str] = {}
        self.plain_tags: dict[str, str] = {}  # the tags of plain scalars, by text
        self.last_tag = ""  # of the last scalar built: a key's, when one is added
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, size, line (0: open)

    def documents(self, events: Iterable[yaml.Event], single: bool) -> list[Any]:
        found: list[Any] = []
        stack: list[_Open] = []
        root: list[tuple[Any, int]] = []
        first_start: Any = None
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                if not (stack and self._common_scalar(stack[-1], event)):  # type: ignore[arg-type]
                    self._add(stack, root, self._scalar(event, stack), 1, event)  # type: ignore[arg-type]
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                self._open(stack, event, kind)  # type: ignore[arg-type]
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                done = stack.pop()
                if done.has_key:  # pragma: no cover - the parser pairs keys and values
                    raise Unsupported("a key without a value")
                if done.anchor is not None:
                    self.anchors[done.anchor] = (done.value, done.size, 0)
                self._add(stack, root, done.value, done.size, event)
            elif kind is yaml.AliasEvent:
                self._add(stack, root, *self._alias(event), event)  # type: ignore[arg-type]
            elif kind is yaml.DocumentStartEvent:
                if single and first_start is not None:
                    raise ComposerError(
                        "expected a single document in the stream",
                        first_start,
                        "but found another document",
                        event.start_mark,
                    )
                first_start = event.start_mark
                self.anchors = {}
            elif kind is yaml.DocumentEndEvent:
                value, size = root.pop() if root else (None, 1)
                self.budget -= size
                found.append(value)
        return found

    # --- values --------------------------------------------------------------------------

    def _common_scalar(self, parent: _Open, event: yaml.ScalarEvent) -> bool:
        """Add the most common values to ``parent`` with the work of :meth:`_scalar`,
        :meth:`_add` and :meth:`_key` in one call: a short string without anchor or tag (to
        a list, as a value or as a new key), or a plain decimal integer (to a list or as a
        value). False for anything else, or anything to refuse: nothing is done, and the
        general path does it or says why."""
        value: str = event.value
        if len(value) > _SHARED_MAX or event.tag is not None or event.anchor is not None:
            return False
        tag = self.plain_tags.get(value) if event.implicit[0] else _STR_TAG
        if tag is None:
            tag = self._tag(event)
        if parent.size >= self.budget:
            return False
        container = parent.value
        if tag == _STR_TAG:
            shared = self.shared
            known = shared.get(value)
            if known is None:
                if len(shared) >= _CACHED:
                    shared.clear()
                known = shared[value] = value
            if type(container) is list:
                container.append(known)  # pyright: ignore[reportUnknownMemberType]
            elif parent.has_key:
                parent.has_key = False
                container[parent.key] = known
            elif known not in parent.keys:
                parent.keys[known] = event.start_mark
                parent.keys_seen += 1
                parent.key, parent.key_label, parent.has_key = known, known, True
            else:
                return False  # given twice
        elif tag == _INT_TAG and _DECIMAL.fullmatch(value):
            # What SafeConstructor makes of a plain decimal, without its passes.
            if type(container) is list:
                container.append(int(value))  # pyright: ignore[reportUnknownMemberType]
            elif parent.has_key:
                parent.has_key = False
                container[parent.key] = int(value)
            else:
                return False
        else:
            return False
        parent.size += 1
        return True

    def _tag(self, event: yaml.ScalarEvent) -> str:
        """The scalar's tag as PyYAML's composer resolves it (remembered for short plain
        values)."""
        tag: str | None = event.tag
        if tag is not None and tag != "!":
            return tag
        value, implicit = event.value, event.implicit
        if not implicit[0]:
            # Quoted or a block: SafeLoader's resolver has no path resolvers, so it is a
            # string whatever the text.
            return _STR_TAG
        if len(value) > _SHARED_MAX:
            return self._resolve(value, implicit)
        known = self.plain_tags.get(value)  # plain: resolved by its text alone
        if known is None:
            if len(self.plain_tags) >= _CACHED:
                self.plain_tags.clear()
            known = self.plain_tags[value] = self._resolve(value, implicit)
        return known

    def _resolve(self, value: str, implicit: tuple[bool, bool]) -> str:
        resolve: Callable[..., str] = self.resolver.resolve  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        return resolve(ScalarNode, value, implicit)

    def _scalar(self, event: yaml.ScalarEvent, stack: list[_Open]) -> Any:
        value = event.value
        tag = self.last_tag = self._tag(event)
        if tag == _STR_TAG:
            if len(value) <= _SHARED_MAX:
                if len(self.shared) >= _CACHED:
                    self.shared.clear()
                value = self.shared.setdefault(value, value)
            return self._anchored(event.anchor, value)
        if tag == _MERGE_TAG:
            raise Unsupported("merge keys")
        node = ScalarNode(tag, value, event.start_mark, event.end_mark)
        if tag == _INT_TAG:
            self._check_int(value, event, stack)
        constructor = self.constructor.yaml_constructors.get(tag)
        if constructor is None:
            raise Unsupported(f"the tag {tag}")  # PyYAML words the error
        try:
            value = constructor(self.constructor, node)
        except ValueError as exc:  # a value Python cannot hold
            line = event.start_mark.line + 1
            raise self.error(f"a value cannot be read: {exc}", line, 1) from None
        return self._anchored(event.anchor, value)

    def _anchored(self, anchor: str | None, value: object) -> Any:
        if anchor is not None:
            if anchor in self.anchors:
                raise Unsupported("a duplicate anchor")  # PyYAML words the error
            self.anchors[anchor] = (value, 1, 0)
        return value

    def _alias(self, event: yaml.AliasEvent) -> tuple[Any, int]:
        anchor = event.anchor
        if anchor not in self.anchors:
            raise Unsupported("an undefined alias")  # PyYAML words the error
        value, size, line = self.anchors[anchor]
        if line:
            raise self.error(f"an alias refers to itself at line {line}", line, 1)
        return value, size

    def _open(self, stack: list[_Open], event: yaml.CollectionStartEvent, kind: type) -> None:
        mapping = kind is yaml.MappingStartEvent
        default = _MAP_TAG if mapping else _SEQ_TAG
        if event.tag not in (None, "!", default):
            raise Unsupported(f"the tag {event.tag}")
        line = event.start_mark.line + 1
        if len(stack) >= self.max_depth:
            message = f"nested more than {self.max_depth} levels deep at line {line}"
            raise self.error(message, line, 1)
        parent = stack[-1] if stack else None
        slot: int | str | None = None
        if parent is not None:
            container: Any = parent.value
            if type(container) is list:
                slot = len(cast("list[Any]", container))
            elif parent.has_key:
                slot = parent.key_label
        opened = _Open({} if mapping else [], line, event.anchor, parent, slot)
        if event.anchor is not None:
            if event.anchor in self.anchors:
                raise Unsupported("a duplicate anchor")  # PyYAML words the error
            self.anchors[event.anchor] = (None, 0, line)  # open: an alias to it is a cycle
        stack.append(opened)

    def _add(self, stack: list[_Open], root: list[Any], value: Any, size: int, event: Any) -> None:
        if not stack:
            root.append((value, size))
            return
        parent = stack[-1]
        parent.size += size
        if parent.size > self.budget:
            raise self.error(
                f"expands to more than {self.budget} values (aliases) at line {parent.line}; "
                "write the values out or use fewer aliases",
                parent.line,
                1,
            )
        container = parent.value
        if type(container) is list:
            container.append(value)  # pyright: ignore[reportUnknownMemberType]
        elif not parent.has_key:
            self._key(parent, value, event)
        else:
            parent.has_key = False
            container[parent.key] = value

    def _key(self, parent: _Open, key: object, event: object) -> None:
        if type(event) is yaml.ScalarEvent:
            tag = self.last_tag
            line = event.start_mark.line + 1
            known = event.value if tag == _STR_TAG else (tag, event.value)
            first = parent.keys.setdefault(known, event.start_mark).line + 1
            if parent.keys_seen == len(parent.keys):  # the key was there already
                raise self.error(
                    f"key {event.value!r} given twice, at line {first} and line {line}; keep one",
                    line,
                    event.start_mark.column + 1,
                )
            parent.keys_seen += 1
            parent.key_label = event.value
        else:
            parent.key_label = "?"
        try:
            hash(key)
        except TypeError:
            raise Unsupported("an unhashable key") from None  # PyYAML words the error
        parent.key, parent.has_key = key, True

    # --- checks ---------------------------------------------------------------------------

    @staticmethod
    def _child_label(stack: list[_Open]) -> str:
        """The place of a value added now to the innermost open collection."""
        if not stack:
            return ""
        parent = stack[-1]
        label = parent.label()
        container: object = parent.value
        if isinstance(container, list):
            return f"{label}[{len(cast('list[Any]', container))}]"
        if not parent.has_key:
            return label  # a key's own place is its mapping's
        return f"{label}.{parent.key_label}" if label else parent.key_label

    def _check_int(self, value: str, event: yaml.ScalarEvent, stack: list[_Open]) -> None:
        limit = sys.get_int_max_str_digits()
        digits = sum(c.isdigit() for c in value)
        if limit and digits > limit:
            line = event.start_mark.line + 1
            path = self._child_label(stack)
            raise self.error(
                f"{path or 'the document'}: a number of {digits} digits at line {line}; at "
                f"most {limit} can be read: write a real value (quote it if it is text)",
                line,
                1,
            )
