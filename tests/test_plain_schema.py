"""Property (issue 41): ``config/_plain_schema.plainly_valid`` skips jsonschema only for a schema
jsonschema's draft-07 meta-schema check accepts, and an inline schema's errors are still
jsonschema's own words. The dev stack's inputSchema takes the plain path."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft7Validator
from jsonschema.exceptions import SchemaError
from pydantic_core import PydanticCustomError

from langop_infra.config._input_schema import json_schema_input
from langop_infra.config._plain_schema import _KEYWORDS, plainly_valid  # pyright: ignore[reportPrivateUsage]

REPO = Path(__file__).resolve().parents[1]
SIMPLE_TYPES = ["array", "boolean", "integer", "null", "number", "object", "string"]


def jsonschema_accepts(schema: Any) -> bool:
    try:
        Draft7Validator.check_schema(schema)
    except SchemaError:
        return False
    return True


JUNK = st.sampled_from([None, 1, -1, 1.5, True, "x", "", [], {}, math.nan])
SCHEMA_LEAVES = st.sampled_from([True, False, {}, {"type": "string"}])
NAMES = st.sampled_from(["a", "b", "^x", "(", "[a-"])
NUMBERS = st.sampled_from([0, 1, -1, 2.5, -0.0, 0.0, math.inf, math.nan, True, "1", None])
COUNTS = st.sampled_from([0, 1, 5, -1, True, False, 1.0, 2.0, "3", None])
BOOLEANS = st.sampled_from([True, False, 0, 1, "true", None])
STRINGS = st.sampled_from(["", "x", "date-time", 1, None, True, ["x"]])
REGEXES = st.sampled_from(["^a+$", "", "\\d+", "(", "[a-", "*", 1, None])
TYPE_NAMES = st.sampled_from([*SIMPLE_TYPES, "text", "", "Integer", 1])
STRING_LISTS = st.lists(st.sampled_from(["a", "b", "c", 1, None]), max_size=3)


def keyword_values(inner: st.SearchStrategy[Any]) -> dict[str, st.SearchStrategy[Any]]:
    """Each draft-07 keyword's value: mostly right, sometimes a near miss."""
    schema = st.one_of(SCHEMA_LEAVES, inner, JUNK)
    schema_list = st.one_of(st.lists(st.one_of(SCHEMA_LEAVES, inner), max_size=3), JUNK)
    schema_map = st.dictionaries(NAMES, st.one_of(SCHEMA_LEAVES, inner), max_size=3)
    kinds: dict[st.SearchStrategy[Any], str] = {
        NUMBERS: "multipleOf maximum exclusiveMaximum minimum exclusiveMinimum",
        COUNTS: "maxLength minLength maxItems minItems maxProperties minProperties",
        BOOLEANS: "readOnly uniqueItems",
        STRINGS: "$comment title description format contentMediaType contentEncoding",
        REGEXES: "pattern",
        schema: "additionalItems contains additionalProperties propertyNames not if then else",
        schema_list: "allOf anyOf oneOf",
        st.one_of(schema, schema_list): "items",
        st.one_of(schema_map, JUNK): "definitions properties patternProperties",
        st.one_of(STRING_LISTS, JUNK): "required",
        st.one_of(TYPE_NAMES, st.lists(TYPE_NAMES, max_size=3), JUNK): "type",
        st.one_of(st.lists(JUNK, max_size=2), JUNK): "examples enum default const",
        st.one_of(
            st.dictionaries(NAMES, st.one_of(SCHEMA_LEAVES, inner, STRING_LISTS), max_size=2),
            JUNK,
        ): "dependencies",
        JUNK: "$ref $id $schema unknownKeyword",
    }
    return {key: values for values, keys in kinds.items() for key in keys.split()}


def schemas() -> st.SearchStrategy[Any]:
    def keyed(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        values = keyword_values(inner)
        pair = st.sampled_from(sorted(values)).flatmap(
            lambda key: st.tuples(st.just(key), values[key])
        )
        return st.one_of(
            st.lists(pair, max_size=3).map(dict),
            st.dictionaries(st.integers(0, 2), inner, max_size=1),
        )

    return st.recursive(SCHEMA_LEAVES, keyed, max_leaves=8)


def test_the_strategy_names_every_keyword() -> None:
    assert set(_KEYWORDS) <= set(keyword_values(SCHEMA_LEAVES))


@pytest.mark.slow
@settings(
    max_examples=1000, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(schemas())
def test_plainly_valid_only_when_jsonschema_accepts(schema: Any) -> None:
    if plainly_valid(schema):
        assert jsonschema_accepts(schema), schema


def test_the_property_sees_both_answers() -> None:
    """The strategy above yields schemas with keywords that the plain path accepts and ones it
    leaves to jsonschema, so the property is not vacuous."""
    found: set[bool] = set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(schemas())
    def collect(schema: Any) -> None:
        if type(schema) is dict and schema:
            found.add(plainly_valid(schema))

    collect()
    assert found == {True, False}


def dev_input_schema() -> dict[str, Any]:
    stack = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    for agent in stack["config"]["langop-infra:agents"]:
        for tool in agent.get("webhookTools", []):
            if "inputSchema" in tool:
                return tool["inputSchema"]
    raise AssertionError("the dev stack has no inputSchema")


@pytest.mark.parametrize(
    ("schema", "plain"),
    [
        pytest.param(dev_input_schema(), True, id="dev-stack"),
        pytest.param({"type": ["string", "null"], "minLength": 1}, True, id="type-list"),
        pytest.param({"properties": {"a": {"pattern": "^a+$"}}}, True, id="good-pattern"),
        pytest.param({"items": [{"type": "string"}, True]}, True, id="items-array"),
        pytest.param({"dependencies": {"a": ["b"], "c": {"required": []}}}, True, id="deps"),
        pytest.param({"type": "text"}, False, id="bad-type"),
        pytest.param({"type": ["string", "string"]}, False, id="type-twice"),
        pytest.param({"type": []}, False, id="type-empty"),
        pytest.param({"pattern": "("}, False, id="bad-pattern"),
        pytest.param({"patternProperties": {"(": {}}}, False, id="bad-pattern-key"),
        pytest.param({"required": ["a", "a"]}, False, id="required-twice"),
        pytest.param({"maxLength": True}, False, id="bool-count"),
        pytest.param({"maxLength": -1}, False, id="negative-count"),
        pytest.param({"multipleOf": 0}, False, id="zero-multiple"),
        pytest.param({"allOf": []}, False, id="empty-allof"),
        pytest.param({"$ref": "#/definitions/a"}, False, id="ref-left-to-jsonschema"),
        pytest.param({"x-extension": 1}, False, id="unknown-left-to-jsonschema"),
        # JSON object keys are strings: any other key is a value it is unsure of
        pytest.param({"properties": {1: {}}}, False, id="properties-int-key"),
        pytest.param({"dependencies": {1: ["b"]}}, False, id="dependencies-int-key"),
    ],
)
def test_plain_answers(schema: dict[str, Any], plain: bool) -> None:
    assert plainly_valid(schema) is plain
    if plain:
        assert jsonschema_accepts(schema)


def test_deep_schema_goes_to_jsonschema() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(40):
        schema = {"properties": {"a": schema}}
    assert plainly_valid(schema) is False
    assert json_schema_input(schema) == schema  # jsonschema accepts it


@pytest.mark.parametrize(
    ("schema", "where", "message"),
    [
        ({"type": "text"}, "type", "'text' is not valid under any of the given schemas"),
        ({"properties": {"a": {"pattern": "("}}}, "properties/a/pattern", "'(' is not a 'regex'"),
        ({"required": ["a", "a"]}, "required", "['a', 'a'] has non-unique elements"),
    ],
)
def test_errors_are_jsonschemas_words(schema: dict[str, Any], where: str, message: str) -> None:
    with pytest.raises(PydanticCustomError) as caught:
        json_schema_input(schema)
    assert caught.value.type == "langop_json_schema_input"
    assert caught.value.message() == (
        f"inputSchema is not valid JSON Schema draft-07 at {where}: {message}"
    )
