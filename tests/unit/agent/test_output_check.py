"""Output-schema checks (langop_infra.agent._output_check): each tool's validator is checked
and built once per schema object and owned by its registry's checks; the check itself."""

from __future__ import annotations

from typing import Any, cast

import pytest
from jsonschema.exceptions import SchemaError

from langop_infra.agent._output_check import OutputChecks, failed
from langop_infra.mcp._session import ToolCallResult

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


def test_one_validator_per_tool_while_its_schema_is_the_same_object() -> None:
    checks = OutputChecks()
    first = checks.validator("t", SCHEMA)
    assert checks.validator("t", SCHEMA) is first
    assert checks.validator("u", SCHEMA) is not first  # another tool: its own
    relisted = dict(SCHEMA)
    again = checks.validator("t", relisted)
    assert again is not first and checks.validator("t", relisted) is again
    assert OutputChecks().validator("t", SCHEMA) is not first  # another registry: its own


def test_an_invalid_schema_is_never_kept() -> None:
    checks, invalid = OutputChecks(), {"type": "no-such-type"}
    for _ in range(2):
        with pytest.raises(SchemaError):
            checks.validator("t", invalid)
    result = checks.checked("t", {"outputSchema": invalid}, ToolCallResult([], False, {"n": 1}))
    assert result.is_error and result.content[0]["text"].startswith(
        "tool t has an invalid outputSchema: 'no-such-type' is not valid under any of"
    )


def test_a_violation_is_an_error_result_naming_the_first_path() -> None:
    checks, definition = OutputChecks(), {"outputSchema": SCHEMA}
    good = ToolCallResult([], False, {"n": 1})
    assert checks.checked("t", definition, good) is good
    checked = checks.checked("t", definition, ToolCallResult([], False, {"n": "one"}))
    assert checked.is_error and checked.content[0]["text"] == (
        "tool t returned structuredContent that violates its outputSchema at n: 'one' is not "
        "of type 'integer'"
    )
    # a server's structuredContent that is no object (what a hostile server may send)
    root = checks.checked("t", definition, ToolCallResult([], False, cast(Any, [])))
    assert root.content[0]["text"].startswith("tool t returned structuredContent that violates")
    assert " at (root): " in root.content[0]["text"]


def test_what_is_not_checked_passes_and_a_missing_structured_content_does_not() -> None:
    checks = OutputChecks()
    error = ToolCallResult([{"type": "text", "text": "boom"}], True, {"n": "x"})
    assert checks.checked("t", {"outputSchema": SCHEMA}, error) is error
    plain = ToolCallResult([], False, {"n": "x"})
    assert checks.checked("t", {}, plain) is plain
    assert checks.checked("t", {"outputSchema": "no"}, plain) is plain
    missing = checks.checked("t", {"outputSchema": SCHEMA}, ToolCallResult([], False))
    assert missing.content[0]["text"] == (
        "tool t declares an outputSchema but returned no structuredContent"
    )


def test_failed_is_is_error_or_agentlabs_success_false() -> None:
    assert failed(ToolCallResult([], True, {"success": True})) is True
    assert failed(ToolCallResult([], False, {"success": False})) is True
    assert failed(ToolCallResult([], False, {"success": 0})) is False
    assert failed(ToolCallResult([], False, cast(Any, ["success"]))) is False
    assert failed(ToolCallResult([], False)) is False
