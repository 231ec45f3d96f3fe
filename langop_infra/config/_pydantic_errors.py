"""pydantic's validation errors, rephrased as problems with a path and a fix: read against
the config models (their fields, aliases and types), so it lives beside them."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator, Mapping, Sequence
from contextvars import ContextVar
from types import UnionType
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel, to_snake

from langop_infra.core._text import closest
from langop_infra.core.problems import Problem, join_path, loc_path


def _child(node: object, part: int | str) -> tuple[bool, object]:
    """``(True, node[part])`` when ``node`` is a mapping with key ``part`` or a list or tuple
    with index ``part``; ``(False, None)`` otherwise."""
    if isinstance(node, Mapping):
        mapping = cast("Mapping[object, object]", node)
        if part in mapping:
            return True, mapping[part]
    elif isinstance(node, (list, tuple)) and isinstance(part, int):
        items = cast("Sequence[object]", node)
        if part < len(items):
            return True, items[part]
    return False, None


def _data_loc(data: object, loc: tuple[int | str, ...]) -> list[int | str]:
    """The parts of pydantic's ``loc`` that are keys or indexes of the data; it also holds
    validator tags (``function-after[...]``) that are not."""
    if data is None:
        return [p for p in loc if not (isinstance(p, str) and "[" in p)]
    kept: list[int | str] = []
    node: object = data
    # "[key]" marks an error in a mapping's key rather than its value: the key names it.
    loc = tuple(p for p in loc if p != "[key]")
    for n, part in enumerate(loc):
        found, child = _child(node, part)
        if found:
            kept.append(part)
            node = child
        elif n == len(loc) - 1 or not (isinstance(part, str) and "[" in part):
            # a missing field's name, or a key under a model instance given as is
            kept.append(part)
            node = None
    return kept


def _parent(data: Any, loc: Sequence[int | str]) -> Any:
    """The mapping or list in ``data`` that holds ``loc[-1]``, or None."""
    parent = data
    for part in loc[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return None
    return parent


def _given_twice(data: object, loc: list[int | str]) -> str | None:
    """The other spelling of ``loc[-1]`` when the same mapping holds both."""
    parent = _parent(data, loc)
    if not isinstance(parent, Mapping) or not loc:
        return None
    field = str(loc[-1])
    spellings = {to_camel(field), to_snake(field)} - {field}
    return next((s for s in spellings if s in parent), None)


def problems_from(
    error: ValidationError,
    prefix: str = "",
    data: object = None,
    known_fields: Sequence[str] = (),
    model: type[BaseModel] | None = None,
) -> list[Problem]:
    """Turn pydantic's errors into problems with paths and a fix.

    ``known_fields`` are the field names a misspelt key may be matched against; ``model``,
    the model ``data`` was validated against, narrows them to the fields where the key is
    and describes the expected form of a value of the wrong type.
    """
    problems: list[Problem] = []
    for item in error.errors(include_url=False):
        loc = _data_loc(data, item["loc"])
        path = join_path(prefix, loc_path(loc))
        kind, message = item["type"], item["msg"]
        if kind == "extra_forbidden":
            field = str(loc[-1]) if loc else ""
            here = _fields_of(_type_at(model, loc[:-1])) if model is not None else None
            close = _suggestion(field, here, known_fields, _parent(data, loc))
            twin = _given_twice(data, loc)
            if twin is not None:
                message = (
                    f"given twice, as {twin!r} and {field!r} (camelCase and snake_case name "
                    "the same field); keep one"
                )
            elif close and close != field:
                message = f"unknown field; did you mean {close!r}?"
            elif close or (here is not None and field in known_fields):
                message = "unknown field: this object has no such field; remove it"
            else:
                message = "unknown field; remove it or fix its spelling"
        elif kind in ("model_type", "model_attributes_type", "dict_type", "list_type"):
            message = _expected_form(model, loc, item.get("input")) or message
        elif kind == "missing":
            message = "required field is missing; add it"
        elif kind == "value_error":
            # a validator that raised ValueError: its own text, without pydantic's preamble
            message = str(item.get("ctx", {}).get("error", message))
        elif kind == "string_pattern_mismatch":
            pattern = item.get("ctx", {}).get("pattern", "")
            message = f"{item.get('input')!r} does not match the allowed pattern {pattern}"
        else:
            ctx = item.get("ctx") or {}
            message = _rephrased(kind, ctx, item.get("input"), model, loc) or message
        problems.append(Problem(path, message, kind))
    return problems


_BOUNDS = {
    "greater_than_equal": ("ge", "at least {}"),
    "greater_than": ("gt", "more than {}"),
    "less_than_equal": ("le", "at most {}"),
    "less_than": ("lt", "less than {}"),
}
# True while a stack file's config is validated: its problems speak YAML (`quote it in
# YAML`, `null`); from the Python API they speak Python (`got None`).
STACK_WORDING: ContextVar[bool] = ContextVar("STACK_WORDING", default=False)


@contextlib.contextmanager
def stack_wording() -> Generator[None, None, None]:
    """Word the problems found inside as a stack file's."""
    token = STACK_WORDING.set(True)
    try:
        yield
    finally:
        STACK_WORDING.reset(token)


_TYPES = {
    "int_type": "a whole number",
    "int_parsing": "a whole number",
    "int_from_float": "a whole number (no fraction)",
    "float_type": "a number",
    "float_parsing": "a number",
    "string_type": "a string (quote it in YAML)",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
}


def _rephrased(
    kind: str, ctx: Mapping[str, object], given: object, model: object, loc: Sequence[int | str]
) -> str | None:
    """pydantic's wording for ranges, types, choices and lengths, said with the fix."""
    if kind in _BOUNDS:
        key, bound = _BOUNDS[kind]
        return f"must be {bound.format(ctx.get(key))}, got {given!r}; change the value"
    if kind in _TYPES:
        expected = _TYPES[kind]
        if not STACK_WORDING.get():
            expected = expected.removesuffix(" (quote it in YAML)")
            expected = "True or False" if expected == "true or false" else expected
            if given is None or isinstance(given, bool):  # `got None`, not `got None None`
                return f"expected {expected}, got {given!r}; write the value as such"
        return f"expected {expected}, got {_kind_of(given)} {given!r}; write the value as such"
    if kind == "langop_int_not_bool" and not STACK_WORDING.get():  # Python words, not YAML
        return f"expected an integer, got {given!r}; write a number"
    if kind in ("literal_error", "enum"):
        choices = [c.strip().strip("'") for c in re.split(r",| or ", str(ctx.get("expected", "")))]
        choices = [c for c in choices if c]
        close = closest(given, choices)
        hint = f"; did you mean {close!r}?" if close else "; use one of them"
        listed = ", ".join(repr(c) for c in choices)
        return f"{given!r} is not one of {listed}{hint}"
    if kind in ("string_too_short", "string_too_long"):
        size = ctx.get("min_length" if kind == "string_too_short" else "max_length")
        word = "at least" if kind == "string_too_short" else "at most"
        return f"must be {word} {size} characters long, got {len(str(given))}; change the value"
    if kind in ("too_short", "too_long"):
        size = ctx.get("min_length" if kind == "too_short" else "max_length")
        word = "at least" if kind == "too_short" else "at most"
        return f"must hold {word} {size} item(s), got {ctx.get('actual_length')}; change the list"
    return None


def _unwrap(tp: object) -> Any:
    """``tp`` without ``Annotated`` metadata and without ``None`` in an optional union."""
    while True:
        if get_origin(tp) is Annotated:
            tp = get_args(tp)[0]
        elif get_origin(tp) in (Union, UnionType):
            members = [a for a in get_args(tp) if a is not type(None)]
            if len(members) != 1:
                return tp
            tp = members[0]
        else:
            return tp


def _is_model(tp: object) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _field(model: type[BaseModel], key: int | str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info
    return None


def _type_at(model: Any, loc: Sequence[int | str]) -> Any:
    """The type ``model`` expects at ``loc`` (field names, keys, indexes), or None."""
    tp = model
    for part in loc:
        tp = _unwrap(tp)
        origin, args = get_origin(tp), get_args(tp)
        if _is_model(tp):
            info = _field(tp, part)
            if info is None:
                return None
            tp = info.annotation
        elif origin in (list, tuple, Sequence) and args and isinstance(part, int):
            tp = args[0]
        elif origin in (dict, Mapping) and len(args) == 2:
            tp = args[1]
        else:
            return None
    return _unwrap(tp)


def _fields_of(tp: Any) -> list[tuple[str, str]] | None:
    """``(snake_case, camelCase)`` names of a model's fields."""
    if not _is_model(tp):
        return None
    return [(name, info.alias or name) for name, info in tp.model_fields.items()]


def _squash(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _suggestion(
    key: str,
    here: list[tuple[str, str]] | None,
    known_fields: Sequence[str],
    siblings: object,
) -> str | None:
    """The field ``key`` was probably meant to be, spelt as the keys around it are."""
    if here is None:
        return closest(key, known_fields)
    keys: Mapping[object, object] = (
        cast("Mapping[object, object]", siblings) if isinstance(siblings, Mapping) else {}
    )
    others = [str(k) for k in keys if k != key]
    snake = any("_" in k for k in others) or (
        not any(k != k.lower() for k in others) and "_" in key
    )
    names = [s if snake else c for s, c in here]
    same = [n for n in names if _squash(n) == _squash(key)]
    return same[0] if same else closest(key, names)


def _kind_of(value: object) -> str:
    """What ``value`` is, in a stack file's words (``null``, ``a mapping``) or, from the
    Python API, in Python's (``None``, ``a dict``)."""
    python = not STACK_WORDING.get()
    if isinstance(value, bool):
        return repr(value) if python else "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a dict" if python else "a mapping"
    if isinstance(value, tuple) and python:
        return "a tuple"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None:
        return "None" if python else "null"
    return type(value).__name__


def _describe(tp: Any, plural: bool = False) -> str | None:
    """``{port, protocol}``, ``a list of strings``, ``a mapping of names to strings``; from
    the Python API in Python's words (``a dict``, ``True or False``, snake_case fields)."""
    python = not STACK_WORDING.get()
    tp = _unwrap(tp)
    origin, args = get_origin(tp), get_args(tp)
    if _is_model(tp):
        fields = tp.model_fields
        shown = [
            n if python else i.alias or n
            for n, i in fields.items()
            if len(fields) <= 6 or i.is_required()
        ]
        return "{" + ", ".join(shown) + (", …" if len(shown) < len(fields) else "") + "}"
    if origin in (list, tuple, Sequence) and args:
        inner = _describe(args[0], plural=True)
        return ("lists" if plural else "a list") + (f" of {inner}" if inner else "")
    if origin in (dict, Mapping) and len(args) == 2:
        inner = _describe(args[1], plural=True)
        mapping = ("dicts" if plural else "a dict") if python else _mapping(plural)
        return mapping + (f" of names to {inner}" if inner else "")
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    words = {
        str: ("a string", "strings"),
        int: ("an integer", "integers"),
        bool: ("True or False", "bools") if python else ("true or false", "true/false values"),
        float: ("a number", "numbers"),
    }
    return words[tp][plural] if tp in words else None


def not_a_mapping(given: object) -> str:
    """The problem with a whole spec that is not a mapping (a dict, from Python)."""
    expected = "a mapping" if STACK_WORDING.get() else "a dict"
    return f"expected {expected}, got {type(given).__name__}"


def _mapping(plural: bool) -> str:
    return "mappings" if plural else "a mapping"


def _expected_form(model: object, loc: Sequence[int | str], given: object) -> str | None:
    """``expected a list of {port, protocol}; this item is a number`` for a value of the
    wrong type, from the model's own fields; None when the type is not known."""
    if model is None:
        return None
    tp = _type_at(model, loc)
    container = _unwrap(_type_at(model, loc[:-1])) if loc else None
    if loc and isinstance(loc[-1], int) and get_origin(container) in (list, tuple, Sequence):
        whole = _describe(container)
        return f"expected {whole}; this item is {_kind_of(given)}" if whole else None
    form = _describe(tp)
    if form is None:
        return None
    if _is_model(_unwrap(tp)):
        form = f"{'a dict' if not STACK_WORDING.get() else 'a mapping'} {form}"
    return f"expected {form}, got {_kind_of(given)}"
