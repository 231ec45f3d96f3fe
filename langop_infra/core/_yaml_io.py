"""YAML in and out through libyaml when PyYAML has it (its wheels do), pure Python otherwise.

libyaml parses about five times faster. The two dumpers differ only in how they fold long
lines, so nothing is folded: the bytes (and so config checksums) never depend on which one a
machine has.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any, cast

import yaml

from langop_infra._errors import LangopError
from langop_infra.core import _yaml_stream as yaml_stream

LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
NO_FOLD = 2**31 - 1
YAMLError = yaml.YAMLError
# typeshed's PyYAML stub leaves the stream, node and value parameters of compose(),
# compose_all(), parse(), construct_document(), dispose() and represent_scalar() without a
# type, so each call to them carries `pyright: ignore[reportUnknownMemberType]`.


def load(text: str | bytes) -> Any:
    """One document, safely (plain data only)."""
    return yaml.load(text, Loader=LOADER)


def load_all(text: str | bytes) -> list[Any]:
    """Every document of a stream, safely."""
    return list(yaml.load_all(text, Loader=LOADER))


class _LiteralDumper(DUMPER):  # type: ignore[misc, valid-type]
    """Multi-line strings as ``|`` blocks, for output people read."""


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)  # pyright: ignore[reportUnknownMemberType]


_LiteralDumper.add_representer(str, _represent_str)


def dump(
    value: object, *, sort_keys: bool = True, flow: bool = False, literal_blocks: bool = False
) -> str:
    """``value`` as block YAML (flow style with ``flow``), never folded, Unicode kept;
    multi-line strings as ``|`` blocks with ``literal_blocks``."""
    return yaml.dump(
        value,
        Dumper=_LiteralDumper if literal_blocks else DUMPER,
        sort_keys=sort_keys,
        default_flow_style=flow,
        allow_unicode=True,
        width=NO_FOLD,
    )


# Limits for files people write by hand (stack files, Pulumi.yaml). Checked on the event
# stream and on the composed node graph, where an alias is still one shared node: nothing is
# expanded, and no recursion deeper than MAX_DEPTH happens, before the checks pass.
MAX_CONFIG_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_VALUES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_INT_TAG = "tag:yaml.org,2002:int"


class ConfigYAMLError(LangopError, ValueError, yaml.YAMLError):
    """A config file that is refused before it is built; ``line`` is 1-based when known.
    A :data:`YAMLError` too, so a caller that reports bad YAML reports this as well."""

    def __init__(self, message: str, line: int | None = None, column: int = 1) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def load_config(
    data: bytes,
    *,
    max_bytes: int = MAX_CONFIG_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int = MAX_VALUES,
) -> Any:
    """One document of a hand-written config file, refused with :class:`ConfigYAMLError`
    when it is not UTF-8, too large, nested too deep, expands through aliases to too many
    values, or gives a mapping key twice. Malformed YAML raises :data:`YAMLError`."""
    if len(data) > max_bytes:
        raise ConfigYAMLError(f"{len(data)} bytes; a config file may hold at most {max_bytes}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigYAMLError(
            f"not UTF-8 text (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); "
            "save the file as UTF-8"
        ) from None
    built = _built(text, max_depth, max_values, single=True)
    if built is not None:
        return built[0] if built else None
    _check_depth(text, max_depth)
    node = cast("yaml.Node | None", yaml.compose(text, Loader=LOADER))  # pyright: ignore[reportUnknownMemberType]
    if node is None:
        return None
    _check_nodes(node, max_values)
    return _construct(node)


def load_config_all(
    data: bytes,
    *,
    max_bytes: int = MAX_CONFIG_BYTES,
    max_depth: int = MAX_DEPTH,
    max_values: int = MAX_VALUES,
) -> list[Any]:
    """Every document of a stream, within the limits of :func:`load_config`; ``max_values``
    bounds all the documents together."""
    if len(data) > max_bytes:
        raise ConfigYAMLError(f"{len(data)} bytes; a file here may hold at most {max_bytes}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigYAMLError(f"not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    built = _built(text, max_depth, max_values, single=False)
    if built is not None:
        return built
    _check_depth(text, max_depth)
    composed = cast("Iterable[yaml.Node]", yaml.compose_all(text, Loader=LOADER))  # pyright: ignore[reportUnknownMemberType]
    nodes = list(composed)
    budget = max_values
    for node in nodes:
        budget -= _check_nodes(node, budget)
    return [_construct(node) for node in nodes]


def _built(text: str, max_depth: int, max_values: int, *, single: bool) -> list[object] | None:
    """The documents built straight from the event stream (``yaml_stream``: a few bytes of
    memory per input byte); None for the rare forms read through the node graph instead."""
    builder = yaml_stream.Builder(LOADER, max_depth, max_values, ConfigYAMLError)
    events = cast("Iterable[yaml.Event]", yaml.parse(text, Loader=LOADER))  # pyright: ignore[reportUnknownMemberType]
    try:
        return builder.documents(events, single)
    except yaml_stream.Unsupported:
        return None


def _construct(node: yaml.Node) -> object:
    loader = LOADER("")
    try:
        return cast(Any, loader.construct_document(node))  # pyright: ignore[reportUnknownMemberType]
    except ValueError as exc:  # a value Python cannot hold, e.g. int's digit limit
        line = node.start_mark.line + 1
        raise ConfigYAMLError(f"a value cannot be read: {exc}", line) from None
    finally:
        loader.dispose()  # pyright: ignore[reportUnknownMemberType]


def _check_depth(text: str, max_depth: int) -> None:
    depth = 0
    events = cast("Iterable[yaml.Event]", yaml.parse(text, Loader=LOADER))  # pyright: ignore[reportUnknownMemberType]
    for event in events:
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > max_depth:
                line = event.start_mark.line + 1
                raise ConfigYAMLError(
                    f"nested more than {max_depth} levels deep at line {line}", line
                )
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _check_nodes(root: yaml.Node, max_values: int) -> int:
    """Duplicate keys, alias cycles, integers Python cannot read, and the size the document
    would have once expanded (returned)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, path: str) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            line = node.start_mark.line + 1
            raise ConfigYAMLError(f"an alias refers to itself at line {line}", line)
        open_nodes.add(key)
        total = 1
        children: list[tuple[yaml.Node, str]] = []
        if isinstance(node, yaml.MappingNode):
            _check_duplicate_keys(node)
            for name, value in node.value:
                label = name.value if isinstance(name, yaml.ScalarNode) else "?"
                children += [(name, path), (value, f"{path}.{label}" if path else str(label))]
        elif isinstance(node, yaml.SequenceNode):
            children = [(child, f"{path}[{i}]") for i, child in enumerate(node.value)]
        elif isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
            _check_int(node, path)
        for child, where in children:
            total += size(child, where)
            if total > max_values:
                line = node.start_mark.line + 1
                raise ConfigYAMLError(
                    f"expands to more than {max_values} values (aliases) at line {line}; "
                    "write the values out or use fewer aliases",
                    line,
                )
        open_nodes.discard(key)
        sizes[key] = total
        return total

    return size(root, "")


def _check_int(node: yaml.ScalarNode, path: str) -> None:
    """An integer over Python's digit limit is refused by name, not by a traceback."""
    limit = sys.get_int_max_str_digits()
    digits = sum(c.isdigit() for c in node.value)
    if limit and digits > limit:
        line = node.start_mark.line + 1
        raise ConfigYAMLError(
            f"{path or 'the document'}: a number of {digits} digits at line {line}; at most "
            f"{limit} can be read: write a real value (quote it if it is text)",
            line,
        )


def _check_duplicate_keys(node: yaml.MappingNode) -> None:
    seen: dict[tuple[str, str], int] = {}
    for key, _ in node.value:
        if not isinstance(key, yaml.ScalarNode) or key.tag == _MERGE_TAG:
            continue
        line = key.start_mark.line + 1
        first = seen.get((key.tag, key.value))
        if first is None:
            seen[(key.tag, key.value)] = line
        else:
            raise ConfigYAMLError(
                f"key {key.value!r} given twice, at line {first} and line {line}; keep one",
                line,
                key.start_mark.column + 1,
            )
