"""Output-schema validators are checked and built once per schema object
(langop_infra.agent._output_check), bounded; the check itself is unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema.exceptions import SchemaError

from langop_infra.agent import _output_check
from langop_infra.agent._output_check import MAX_VALIDATORS, checked_output, validator_for
from langop_infra.mcp._session import ToolCallResult

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}


def test_one_validator_per_schema_object() -> None:
    first = validator_for(SCHEMA)
    assert validator_for(SCHEMA) is first
    equal = dict(SCHEMA)
    assert validator_for(equal) is not first  # another object: built for it
    with pytest.raises(SchemaError):
        validator_for({"type": "no-such-type"})
    with pytest.raises(SchemaError):  # an invalid schema is never cached
        validator_for({"type": "no-such-type"})


def test_the_cache_is_bounded_least_recently_used_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_output_check, "_validators", type(_output_check._validators)())
    schemas = [{"type": "object", "title": str(n)} for n in range(MAX_VALIDATORS + 1)]
    built = [validator_for(s) for s in schemas]
    assert len(_output_check._validators) == MAX_VALIDATORS
    assert validator_for(schemas[-1]) is built[-1]
    assert validator_for(schemas[0]) is not built[0]  # dropped, then built again


def test_a_violation_is_still_an_error_result() -> None:
    definition = {"outputSchema": SCHEMA}
    good = ToolCallResult([], False, {"n": 1})
    bad = ToolCallResult([], False, {"n": "one"})
    assert checked_output("t", definition, good) is good
    checked = checked_output("t", definition, bad)
    assert checked.is_error and checked.content[0]["text"] == (
        "tool t returned structuredContent that violates its outputSchema at n: 'one' is not "
        "of type 'integer'"
    )
