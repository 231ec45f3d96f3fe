"""A tool's ``structuredContent`` checked against its ``outputSchema``: the MCP spec says
clients SHOULD validate it; a violation becomes an error result naming the path."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from langop_infra.agent.http_tools import error_result
from langop_infra.mcp._session import ToolCallResult

__all__ = ["checked_output", "validator_for"]

MAX_VALIDATORS = 256
# id(schema) -> (schema, its validator): the schema is held so that its id stays its own.
_validators: OrderedDict[int, tuple[dict[str, Any], Draft202012Validator]] = OrderedDict()


def validator_for(schema: dict[str, Any]) -> Draft202012Validator:
    """The validator of ``schema``, checked and built once per schema object (a tool's
    definition is listed once and called many times), the least recently used dropped.
    Raises :class:`SchemaError` for a schema that is not one."""
    cached = _validators.get(id(schema))
    if cached is not None and cached[0] is schema:
        _validators.move_to_end(id(schema))
        return cached[1]
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    _validators[id(schema)] = (schema, validator)
    while len(_validators) > MAX_VALIDATORS:
        _validators.popitem(last=False)
    return validator


def checked_output(
    name: str, definition: Mapping[str, object], result: ToolCallResult
) -> ToolCallResult:
    """``result``, or an error result when its ``structuredContent`` violates the tool's
    ``outputSchema`` (the MCP spec: clients SHOULD validate it)."""
    given = definition.get("outputSchema")
    if result.is_error or not isinstance(given, dict):
        return result
    schema = cast("dict[str, Any]", given)
    if result.structured_content is None:
        return error_result(
            f"tool {name} declares an outputSchema but returned no structuredContent"
        )
    try:
        validator = validator_for(schema)
        # typeshed's jsonschema stub leaves iter_errors' deprecated overload untyped.
        errors = validator.iter_errors(result.structured_content)  # pyright: ignore[reportUnknownMemberType]
        problems = list(errors)
    except SchemaError as exc:
        return error_result(f"tool {name} has an invalid outputSchema: {exc.message}")
    if not problems:
        return result
    first = min(problems, key=lambda e: list(map(str, e.absolute_path)))
    where = "/".join(map(str, first.absolute_path)) or "(root)"
    return error_result(
        f"tool {name} returned structuredContent that violates its outputSchema at "
        f"{where}: {first.message}"
    )


def failed(result: ToolCallResult) -> bool:
    """Whether a result reports failure: ``isError``, or AgentLab's ``success: false``."""
    structured: Any = result.structured_content
    if result.is_error or not isinstance(structured, dict):
        return result.is_error
    return cast("dict[str, Any]", structured).get("success") is False
