"""A2A data parts read back with their whole numbers as ints.

``google.protobuf.Value``, which carries a data part, stores every number as a double, so
``a2a.helpers.get_data_parts`` gives ``4326.0`` for a sent ``4326``. JSON has one number type
and a peer's JSON ``4326`` is an integer to Python's ``json``: a whole double reads as an int
here, as the SDK's own note on ``get_data_parts`` advises.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from a2a.helpers import get_data_parts as get_protobuf_data_parts
from a2a.types import Part

__all__ = ["get_data_parts", "whole_numbers"]


def whole_numbers(value: Any) -> Any:
    """``value`` with every float that is a whole number as an int, in lists and mappings."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: whole_numbers(v) for k, v in cast("dict[str, Any]", value).items()}
    if isinstance(value, list):
        return [whole_numbers(v) for v in cast("list[Any]", value)]
    return value


def get_data_parts(parts: Sequence[Part]) -> list[Any]:
    """The data of every data part, as ``a2a.helpers.get_data_parts``, whole numbers as ints."""
    return [whole_numbers(data) for data in get_protobuf_data_parts(parts)]
