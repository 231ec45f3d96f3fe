"""An inline JSON Schema as an agent or an HTTP tool gives it: a mapping, JSON text or a
pydantic model class, checked against draft-07 at the edge (plain schemas without jsonschema,
see :mod:`._plain_schema`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

import langop_infra._json as _json
from langop_infra.config._invalid import invalid
from langop_infra.config._plain_schema import plainly_valid


def json_schema_input(value: object) -> Any:
    """A JSON Schema as a mapping, a JSON string, or a pydantic model class."""
    if isinstance(value, type) and hasattr(value, "model_json_schema"):
        return cast("type[BaseModel]", value).model_json_schema()
    if isinstance(value, str):
        try:
            value = _json.read(value)
        except json.JSONDecodeError as exc:
            raise invalid(
                "json_schema_input",
                f"inputSchema is not valid JSON: {exc.msg} at line {exc.lineno}",
            ) from None
        except _json.JSONTooDeep:
            raise invalid("json_schema_input", "inputSchema is nested too deeply to read") from None
        except _json.JSONLimitError as exc:
            raise invalid("json_schema_input", f"inputSchema cannot be read: {exc}") from None
    if not isinstance(value, Mapping):
        raise invalid("json_schema_input", "inputSchema must be a JSON Schema object")
    schema = cast("Mapping[str, Any]", value)
    if plainly_valid(schema):  # most inline schemas: no jsonschema import (issue 41)
        return dict(schema)
    from jsonschema import Draft7Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft7Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        raise invalid(
            "json_schema_input",
            f"inputSchema is not valid JSON Schema draft-07 at {where}: {exc.message}",
        ) from None
    except RecursionError:
        raise invalid("json_schema_input", "inputSchema is nested too deeply to check") from None
    return dict(schema)
