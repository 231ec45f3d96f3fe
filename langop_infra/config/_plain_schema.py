"""Whether an inline JSON Schema is plainly valid draft-07, without importing jsonschema.

Most inline schemas (an agent's or an HTTP tool's ``inputSchema``) are a few ``type``,
``properties``, ``required`` and ``description`` keywords. Checking those against the draft-07
meta-schema needs no validator library, and importing jsonschema is most of what a
``validate`` of such a stack would cost. :func:`plainly_valid` answers ``True`` only for a
schema made of the keywords below, each with a value the meta-schema accepts; for anything
else (another keyword, ``$ref``, a ``Mapping`` that is not a ``dict``, a value it is unsure of,
deep nesting) it answers ``False`` and the caller checks with jsonschema, which also words
every error. So it can only skip the check of a schema jsonschema accepts (a property test
compares the two).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

_SIMPLE_TYPES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_MAX_DEPTH = 32  # deeper schemas go to jsonschema (and its RecursionError handling)


def plainly_valid(schema: object) -> bool:
    """True if ``schema`` is certainly a valid draft-07 schema; False if unsure."""
    return _schema(schema, 0)


def _schema(value: object, depth: int) -> bool:
    if type(value) is bool:
        return True
    if type(value) is not dict or depth > _MAX_DEPTH:
        return False
    for key, item in cast("dict[Any, Any]", value).items():
        if type(key) is not str:
            return False
        check = _KEYWORDS.get(key)
        if check is None or not check(item, depth + 1):
            return False
    return True


def _string(value: object, _depth: int) -> bool:
    return type(value) is str


def _boolean(value: object, _depth: int) -> bool:
    return type(value) is bool


def _number(value: object, _depth: int) -> bool:
    return type(value) is int or type(value) is float


def _positive_number(value: object, depth: int) -> bool:
    return _number(value, depth) and cast(float, value) > 0


def _count(value: object, _depth: int) -> bool:
    return type(value) is int and value >= 0


def _anything(_value: object, _depth: int) -> bool:
    return True


def _list(value: object, _depth: int) -> bool:
    return type(value) is list


def _unique_strings(value: object) -> bool:
    if type(value) is not list:
        return False
    items = cast("list[Any]", value)
    return all(type(i) is str for i in items) and len(set(items)) == len(items)


def _string_array(value: object, _depth: int) -> bool:
    return _unique_strings(value)


def _regex(value: object, _depth: int = 0) -> bool:
    if type(value) is not str:
        return False
    try:
        re.compile(value)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def _type(value: object, _depth: int) -> bool:
    if type(value) is str:
        return value in _SIMPLE_TYPES
    if not _unique_strings(value):
        return False
    names = cast("list[str]", value)
    return len(names) > 0 and all(t in _SIMPLE_TYPES for t in names)


def _schema_array(value: object, depth: int) -> bool:
    if type(value) is not list or not value:
        return False
    items = cast("list[Any]", value)
    return all(_schema(i, depth) for i in items)


def _schema_or_array(value: object, depth: int) -> bool:
    if type(value) is list:
        return _schema_array(cast("list[Any]", value), depth)
    return _schema(value, depth)


def _string_keyed(value: object, depth: int, check: Callable[[object, int], bool]) -> bool:
    """Whether ``value`` is an object of string keys whose every value passes ``check``."""
    if type(value) is not dict:
        return False
    items = cast("dict[Any, Any]", value)
    return all(type(k) is str and check(v, depth) for k, v in items.items())


def _schema_map(value: object, depth: int) -> bool:
    return _string_keyed(value, depth, _schema)


def _pattern_map(value: object, depth: int) -> bool:
    if not _schema_map(value, depth):
        return False
    return all(_regex(k) for k in cast("dict[str, Any]", value))


def _dependencies(value: object, depth: int) -> bool:
    return _string_keyed(value, depth, _dependency)


def _dependency(value: object, depth: int) -> bool:
    if type(value) is list:
        return _unique_strings(cast("list[Any]", value))
    return _schema(value, depth)


# Each draft-07 meta-schema keyword this module understands, and what its value must be.
_KEYWORDS: dict[str, Callable[[object, int], bool]] = {
    "$comment": _string,
    "title": _string,
    "description": _string,
    "default": _anything,
    "readOnly": _boolean,
    "examples": _list,
    "multipleOf": _positive_number,
    "maximum": _number,
    "exclusiveMaximum": _number,
    "minimum": _number,
    "exclusiveMinimum": _number,
    "maxLength": _count,
    "minLength": _count,
    "pattern": _regex,
    "additionalItems": _schema,
    "items": _schema_or_array,
    "maxItems": _count,
    "minItems": _count,
    "uniqueItems": _boolean,
    "contains": _schema,
    "maxProperties": _count,
    "minProperties": _count,
    "required": _string_array,
    "additionalProperties": _schema,
    "definitions": _schema_map,
    "properties": _schema_map,
    "patternProperties": _pattern_map,
    "dependencies": _dependencies,
    "propertyNames": _schema,
    "const": _anything,
    "enum": _list,
    "type": _type,
    "format": _string,
    "contentMediaType": _string,
    "contentEncoding": _string,
    "if": _schema,
    "then": _schema,
    "else": _schema,
    "allOf": _schema_array,
    "anyOf": _schema_array,
    "oneOf": _schema_array,
    "not": _schema,
}
