"""Reading a document's items one by one, so that one bad item does not hide the next one's
problems: each is validated on its own, and a failed one is read partially (without the
fields that failed) so that the checks across items still see it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from langop_infra.config._fields import Spec
from langop_infra.config._pydantic_errors import not_a_mapping, problems_from
from langop_infra.core.problems import Problem


def _all_models(root: type[BaseModel]) -> list[type[BaseModel]]:
    found, stack = [], [root]
    while stack:
        model = stack.pop()
        found.append(model)
        stack.extend(model.__subclasses__())
    return found


def known_fields() -> list[str]:
    """Every field name and alias of every spec model: what a misspelt key is matched
    against. Computed when asked (only for an item that failed), so that every spec model
    defined by then counts, whatever order the modules were imported in."""
    return sorted(
        {
            name
            for model in _all_models(Spec)
            for field_name, info in model.model_fields.items()
            for name in (field_name, info.alias or field_name)
        }
    )


def validate_item(model: type[Spec], data: object, path: str) -> tuple[Any, list[Problem]]:
    if isinstance(data, model):
        return data, []
    if not isinstance(data, Mapping):
        return None, [Problem(path, not_a_mapping(data))]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, problems_from(exc, path, data, known_fields(), model)


class _Invalid:
    """The value of a field that failed validation: equal to nothing else, so that no check
    across fields or items matches on it (two invalid ports are not one port twice)."""

    def __repr__(self) -> str:
        return "<invalid>"


# Fields that checks across items compare: when invalid, they become an _Invalid, not their
# default (a bad port is not port 8080, which another sidecar may use).
_COMPARED = ("port", "deployment_mode", "egress", "endpoint")
# Fields without which an item cannot be told apart: no partial item without them.
_IDENTITY = ("name", "namespace")


_NOTHING_INVALID: frozenset[str] = frozenset()


def _partial(
    model: type[Spec], data: Mapping[str, object], exc: ValidationError
) -> tuple[Any, frozenset[str]]:
    """``data`` without the top-level fields that failed: what the checks across fields and
    items can still read, so that one run reports their problems too, and the fields it was
    read without. None when the item cannot be told apart without them, or fails as a whole."""
    errors = exc.errors()
    if any(not e["loc"] for e in errors):
        return None, _NOTHING_INVALID
    bad = {str(e["loc"][0]) for e in errors}
    fields = {n for n, f in model.model_fields.items() if n in bad or f.alias in bad}
    if fields & set(_IDENTITY):
        return None, _NOTHING_INVALID
    try:
        spec = model.model_validate({k: v for k, v in data.items() if k not in bad})
    except ValidationError:
        return None, _NOTHING_INVALID
    invalid = {name: _Invalid() for name in fields & set(_COMPARED)}
    return spec.model_copy(update=invalid), frozenset(fields)


def validate_partial(
    model: type[Spec], data: object, path: str
) -> tuple[Any, list[Problem], frozenset[str]]:
    """Like :func:`validate_item`, but a failed item gives its partial reading too, and the
    fields that reading lacks."""
    if isinstance(data, model) or not isinstance(data, Mapping):
        spec, found = validate_item(model, data, path)
        return spec, found, _NOTHING_INVALID
    try:
        return model.model_validate(data), [], _NOTHING_INVALID
    except ValidationError as exc:
        found = problems_from(exc, path, data, known_fields(), model)
        spec, invalid = _partial(model, data, exc)
        return spec, found, invalid


def validate_list(
    model: type[Spec], items: object, path: str, partial: bool = False
) -> tuple[list[tuple[int, Any]], list[Problem], dict[int, frozenset[str]]]:
    """The items read, by index; every problem; and, with ``partial``, the fields each item
    read partially (see :func:`_partial`) lacks."""
    if items is None:
        return [], [], {}
    if not isinstance(items, (list, tuple)):
        return [], [Problem(path, f"expected a list, got {type(items).__name__}")], {}
    valid: list[tuple[int, Any]] = []
    problems: list[Problem] = []
    lacking: dict[int, frozenset[str]] = {}
    for index, item in enumerate(items):
        where = f"{path}[{index}]"
        if partial:
            spec, found, invalid = validate_partial(model, item, where)
        else:
            (spec, found), invalid = validate_item(model, item, where), _NOTHING_INVALID
        problems += found
        if spec is not None:
            valid.append((index, spec))
        if invalid:
            lacking[index] = invalid
    return valid, problems, lacking
