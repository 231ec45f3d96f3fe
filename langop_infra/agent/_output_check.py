"""A tool's ``structuredContent`` checked against its ``outputSchema``: the MCP spec says
clients SHOULD validate it; a violation becomes an error result naming the path."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from langop_infra.agent.http_tools import error_result
from langop_infra.mcp._session import ToolCallResult

__all__ = ["OutputChecks", "failed"]


class OutputChecks:
    """The output checks of one registry's tools: each tool's validator is checked and built
    on its first call and kept while the tool's ``outputSchema`` is that same object (a tool
    is listed once and called many times; listing it again replaces the schema)."""

    def __init__(self) -> None:
        self._built: dict[str, tuple[dict[str, Any], Draft202012Validator]] = {}

    def validator(self, name: str, schema: dict[str, Any]) -> Draft202012Validator:
        """Tool ``name``'s validator of ``schema``; :class:`SchemaError` for a schema that is
        not one (never kept)."""
        kept = self._built.get(name)
        if kept is not None and kept[0] is schema:
            return kept[1]
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema)
        self._built[name] = (schema, validator)
        return validator

    def checked(
        self, name: str, definition: Mapping[str, object], result: ToolCallResult
    ) -> ToolCallResult:
        """``result``, or an error result when its ``structuredContent`` violates the tool's
        ``outputSchema``."""
        given = definition.get("outputSchema")
        if result.is_error or not isinstance(given, dict):
            return result
        schema = cast("dict[str, Any]", given)
        if result.structured_content is None:
            return error_result(
                f"tool {name} declares an outputSchema but returned no structuredContent"
            )
        try:
            validator = self.validator(name, schema)
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
