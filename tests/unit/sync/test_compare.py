"""``langop_infra.sync._compare``: every breaking and compatible case, paths, summaries, hashes,
properties. The survivor of #37's mutation run is here: an integer widened to a number is
compatible for an input (callers still send integers) and breaking for an output."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from langop_infra.sync._compare import (
    SchemaChange,
    SchemaComparison,
    SchemaTooDeep,
    canonical_json,
    check_nesting,
    compare_tools,
    schema_hash,
)


def obj(properties: dict[str, Any], required: Sequence[str] = (), **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), **extra}


def tool(
    name: str = "search",
    input_schema: Any = None,
    output_schema: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "description": f"{name} things", **extra}
    out["inputSchema"] = input_schema if input_schema is not None else obj({})
    if output_schema is not None:
        out["outputSchema"] = output_schema
    return out


SEARCH_INPUT = obj(
    {
        "query": {"type": "string", "description": "What to look for"},
        "limit": {"type": "integer"},
        "mode": {"type": "string", "enum": ["fast", "exact"]},
        "filters": obj({"since": {"type": ["string", "null"]}, "kind": {"type": "string"}}),
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    required=["query"],
)
SEARCH_OUTPUT = obj(
    {"hits": {"type": "array", "items": obj({"id": {"type": "string"}}, ["id"])}},
    required=["hits"],
)


def search(input_schema: Any = None, output_schema: Any = None, **extra: Any) -> dict[str, Any]:
    return tool(
        "search",
        copy.deepcopy(SEARCH_INPUT) if input_schema is None else input_schema,
        copy.deepcopy(SEARCH_OUTPUT) if output_schema is None else output_schema,
        **extra,
    )


def changed_input(edit: Any) -> dict[str, Any]:
    """The search tool with ``edit`` applied to a copy of its input schema."""
    schema = copy.deepcopy(SEARCH_INPUT)
    edit(schema)
    return search(input_schema=schema)


def changed_output(edit: Any) -> dict[str, Any]:
    schema = copy.deepcopy(SEARCH_OUTPUT)
    edit(schema)
    return search(output_schema=schema)


def only(comparison: SchemaComparison) -> SchemaChange:
    assert len(comparison.changes) == 1, comparison.summary()
    return comparison.changes[0]


def assert_change(
    change: SchemaChange, kind: str, path: str, *words: str, tool_name: str = "search"
) -> None:
    assert (change.kind, change.tool, change.path) == (kind, tool_name, path), change
    for word in words:
        assert word in change.message, (word, change.message)


# -- breaking ------------------------------------------------------------------------------


def test_tool_removed_is_breaking() -> None:
    change = only(compare_tools([search(), tool("fetch")], [search()]))

    assert_change(change, "breaking", "fetch", "tool removed", tool_name="fetch")


def test_new_required_input_field_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["index"] = {"type": "string"}
        s["required"].append("index")

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.index", "input field 'index'", "required")


def test_input_field_removed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        del s["properties"]["limit"]

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.limit", "input field 'limit' removed")


def test_input_field_type_changed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["limit"]["type"] = "string"

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.limit", "type changed", "integer", "string")


def test_type_list_narrowed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["filters"]["properties"]["since"]["type"] = "string"

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(
        change,
        "breaking",
        "search.input.filters.since",
        "input field 'filters.since'",
        "type narrowed from [null, string] to string",
    )


def test_enum_narrowed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["mode"]["enum"] = ["fast"]

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.mode", "enum narrowed", '"exact"')


def test_optional_field_becoming_required_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["required"].append("limit")

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.limit", "input field 'limit' became required")


@pytest.mark.parametrize("before", [None, True], ids=["absent", "true"])
def test_additional_properties_turned_false_is_breaking(before: bool | None) -> None:
    old_schema = copy.deepcopy(SEARCH_INPUT)
    if before is not None:
        old_schema["additionalProperties"] = before
    new_schema = {**copy.deepcopy(SEARCH_INPUT), "additionalProperties": False}

    change = only(compare_tools([search(old_schema)], [search(new_schema)]))

    assert_change(change, "breaking", "search.input", "additionalProperties turned false")


def test_output_field_removed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        del s["properties"]["hits"]["items"]["properties"]["id"]
        s["properties"]["hits"]["items"]["required"] = []

    change = only(compare_tools([search()], [changed_output(edit)]))

    assert_change(change, "breaking", "search.output.hits[].id", "output field 'hits[].id' removed")


def test_output_field_type_changed_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["hits"]["items"]["properties"]["id"]["type"] = "integer"

    change = only(compare_tools([search()], [changed_output(edit)]))

    assert_change(change, "breaking", "search.output.hits[].id", "type changed", "to integer")


def test_output_schema_removed_is_breaking() -> None:
    old = search()
    new = {k: v for k, v in search().items() if k != "outputSchema"}

    change = only(compare_tools([old], [new]))

    assert_change(change, "breaking", "search.output", "output schema removed")


def test_unresolvable_ref_that_changed_is_breaking_with_a_reason() -> None:
    old = search(obj({"query": {"$ref": "https://schemas.example.com/query.json"}}))
    new = search(obj({"query": {"$ref": "https://schemas.example.com/query-v2.json"}}))

    change = only(compare_tools([old], [new]))

    assert_change(
        change, "breaking", "search.input.query", "cannot be resolved", "opaque", "query.json"
    )
    assert compare_tools([old], [copy.deepcopy(old)]).is_equal


def test_non_object_schema_that_changed_is_breaking_with_a_reason() -> None:
    old = search(input_schema="anything goes")
    new = search(input_schema=["a", "list"])

    change = only(compare_tools([old], [new]))

    assert_change(change, "breaking", "search.input", "not a JSON object", "opaque")


def test_unmodelled_keyword_change_is_breaking() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["limit"]["allOf"] = [{"minimum": 1}]

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.limit", "keyword 'allOf'", "opaque")


def test_array_item_type_change_is_breaking_and_named_with_brackets() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["tags"]["items"]["type"] = "integer"

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "breaking", "search.input.tags[]", "input field 'tags[]'", "to integer")


def test_tighter_bound_is_breaking_for_inputs_only() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["hits"]["maxItems"] = 10

    tighter_input = only(
        compare_tools(
            [search()], [changed_input(lambda s: s["properties"]["limit"].update(maximum=50))]
        )
    )
    tighter_output = only(compare_tools([search()], [changed_output(edit)]))

    assert_change(tighter_input, "breaking", "search.input.limit", "maximum added", "-> 50")
    assert_change(tighter_output, "compatible", "search.output.hits", "maxItems added")


# -- compatible ----------------------------------------------------------------------------


def test_tool_added_is_compatible() -> None:
    change = only(compare_tools([search()], [search(), tool("fetch")]))

    assert_change(change, "compatible", "fetch", "tool added", tool_name="fetch")


def test_optional_input_field_added_is_compatible() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["filters"]["properties"]["until"] = {"type": "string"}

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(
        change,
        "compatible",
        "search.input.filters.until",
        "input field 'filters.until'",
        "optional",
    )


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("description", "Find documents by keyword", ("description changed",)),
        ("title", "Search", ("title added",)),
        ("annotations", {"readOnlyHint": True}, ("annotations added",)),
    ],
)
def test_tool_metadata_change_is_compatible(key: str, value: Any, words: tuple[str, ...]) -> None:
    change = only(compare_tools([search()], [search(**{key: value})]))

    assert_change(change, "compatible", f"search.{key}", *words)


def test_annotation_change_names_the_hints() -> None:
    old = search(annotations={"readOnlyHint": True, "openWorldHint": False})
    new = search(annotations={"readOnlyHint": False, "openWorldHint": False})

    change = only(compare_tools([old], [new]))

    assert_change(change, "compatible", "search.annotations", "annotations changed: readOnlyHint")


def test_field_description_change_is_compatible() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["query"]["description"] = "Keywords"

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "compatible", "search.input.query", "description changed")


def test_enum_widened_is_compatible() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["mode"]["enum"] = ["fast", "exact", "fuzzy"]

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "compatible", "search.input.mode", "enum widened", '"fuzzy"')


def test_required_field_becoming_optional_is_compatible() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["required"] = []

    change = only(compare_tools([search()], [changed_input(edit)]))

    assert_change(change, "compatible", "search.input.query", "no longer required")


def test_output_field_added_is_compatible() -> None:
    def edit(s: dict[str, Any]) -> None:
        s["properties"]["total"] = {"type": "integer"}

    change = only(compare_tools([search()], [changed_output(edit)]))

    assert_change(change, "compatible", "search.output.total", "output field 'total' added")


def test_output_schema_added_is_compatible() -> None:
    old = {k: v for k, v in search().items() if k != "outputSchema"}

    change = only(compare_tools([old], [search()]))

    assert_change(change, "compatible", "search.output", "output schema added")


def test_input_type_widened_is_compatible_even_written_as_pydantic_optional() -> None:
    old = search(obj({"since": {"type": "string"}}, ["since"]))
    new = search(obj({"since": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}))

    changes = compare_tools([old], [new]).changes

    assert not compare_tools([old], [new]).is_breaking
    assert [(c.kind, c.path) for c in changes] == [("compatible", "search.input.since")] * 3
    messages = " | ".join(c.message for c in changes)
    assert "type widened from string to [null, string]" in messages
    assert "no longer required" in messages
    assert "default added" in messages


def test_integer_widened_to_number_is_compatible_for_an_input() -> None:
    old = search(obj({"limit": {"type": "integer"}}))
    new = search(obj({"limit": {"type": "number"}}))

    change = only(compare_tools([old], [new]))

    assert_change(
        change,
        "compatible",
        "search.input.limit",
        "input field 'limit' type widened from integer to number",
    )


def test_number_narrowed_to_integer_is_breaking_for_an_input() -> None:
    old = search(obj({"limit": {"type": ["number", "null"]}}))
    new = search(obj({"limit": {"type": "integer"}}))

    change = only(compare_tools([old], [new]))

    assert_change(
        change,
        "breaking",
        "search.input.limit",
        "input field 'limit' type narrowed from [null, number] to integer",
    )


def test_integer_widened_to_number_is_breaking_for_an_output() -> None:
    old = search(output_schema=obj({"n": {"type": "integer"}}))
    new = search(output_schema=obj({"n": {"type": "number"}}))

    change = only(compare_tools([old], [new]))

    assert_change(
        change,
        "breaking",
        "search.output.n",
        "output field 'n' type widened from integer to number",
    )


def test_a_type_removed_means_any_type_and_is_a_widening() -> None:
    old = search(obj({"n": {"type": "integer"}}))
    new = search(obj({"n": {}}))

    change = only(compare_tools([old], [new]))

    assert_change(
        change, "compatible", "search.input.n", "input field 'n' type widened from integer to any"
    )


# -- direction: outputs are judged the other way round ------------------------------------


def test_output_changes_are_judged_from_the_readers_side() -> None:
    status = {"type": "string", "enum": ["ok", "error"]}
    old = search(output_schema=obj({"status": status, "note": {"type": "string"}}, ["status"]))
    wider_status = {**status, "enum": ["ok", "error", "partial"]}
    new = search(output_schema=obj({"status": wider_status, "note": {"type": "string"}}, ["note"]))

    changes = compare_tools([old], [new]).changes

    assert [(c.kind, c.path, c.message) for c in changes] == [
        ("compatible", "search.output.note", "output field 'note' became required"),
        (
            "breaking",
            "search.output.status",
            "output field 'status' enum widened: added \"partial\"",
        ),
        ("breaking", "search.output.status", "output field 'status' is no longer required"),
    ]


# -- $ref, recursion, odd input ------------------------------------------------------------


PYDANTIC_OUTPUT = {
    "$defs": {
        "Memory": obj({"id": {"type": "integer"}, "content": {"type": "string"}}, ["id", "content"])
    },
    **obj({"memories": {"type": "array", "items": {"$ref": "#/$defs/Memory"}}}, ["memories"]),
}


def test_local_refs_are_followed_into_defs() -> None:
    new_output = copy.deepcopy(PYDANTIC_OUTPUT)
    new_output["$defs"]["Memory"]["properties"]["id"]["type"] = "string"
    old = tool("recall", obj({}), PYDANTIC_OUTPUT)

    change = only(compare_tools([old], [tool("recall", obj({}), new_output)]))

    assert_change(
        change, "breaking", "recall.output.memories[].id", "type changed", tool_name="recall"
    )


def test_ref_and_inline_definitions_compare_equal_in_content() -> None:
    inline = copy.deepcopy(PYDANTIC_OUTPUT)
    inline["properties"]["memories"]["items"] = copy.deepcopy(inline.pop("$defs")["Memory"])

    comparison = compare_tools(
        [tool("recall", obj({}), PYDANTIC_OUTPUT)], [tool("recall", obj({}), inline)]
    )

    assert not comparison.is_breaking
    assert [c.message for c in comparison.changes] == [
        "definition changed without effect on callers (list order or unused $defs)"
    ]


def test_recursive_schemas_terminate_and_still_report_changes() -> None:
    def tree(leaf_type: str) -> dict[str, Any]:
        node = obj(
            {"value": {"type": leaf_type}, "children": {"type": "array", "items": {"$ref": "#"}}}
        )
        return {**node, "$defs": {"Node": {"$ref": "#"}}}

    assert compare_tools([tool("walk", tree("string"))], [tool("walk", tree("string"))]).is_equal
    change = only(compare_tools([tool("walk", tree("string"))], [tool("walk", tree("integer"))]))
    assert_change(change, "breaking", "walk.input.value", "type changed", tool_name="walk")


def test_missing_input_schema_means_anything_is_accepted() -> None:
    bare = {"name": "ping"}
    with_required = obj({"target": {"type": "string"}}, ["target"])

    assert compare_tools([bare], [{"name": "ping"}]).is_equal
    change = only(compare_tools([bare], [{"name": "ping", "inputSchema": with_required}]))
    assert_change(change, "breaking", "ping.input.target", "added as required", tool_name="ping")


def test_odd_entries_are_ignored_and_odd_values_do_not_crash() -> None:
    odd: list[Any] = ["not a tool", {"description": "no name"}, {"name": 7}, None]
    weird = tool("w", {"type": 3, "properties": [], "required": "x", "items": [1], "enum": 5})

    assert compare_tools([*odd, search()], [search()]).is_equal
    assert compare_tools([weird], [copy.deepcopy(weird)]).is_equal
    assert compare_tools([weird], [tool("w", {"type": 4})]).is_breaking
    with pytest.raises(TypeError, match="list of tool objects"):
        compare_tools({"tools": []}, [])  # type: ignore[arg-type]


# -- the comparison as a whole -------------------------------------------------------------


def test_equal_lists_are_equal_with_an_empty_summary() -> None:
    comparison = compare_tools([search(), tool("fetch")], [search(), tool("fetch")])

    assert comparison.is_equal
    assert not comparison.is_breaking
    assert comparison.changes == comparison.breaking == comparison.compatible == ()
    assert comparison.summary() == "no changes"


def test_tool_order_and_key_order_do_not_matter() -> None:
    old = [search(), tool("fetch", obj({"url": {"type": "string"}}, ["url"]))]
    new = [reordered(t) for t in reversed(copy.deepcopy(old))]

    assert compare_tools(old, new).is_equal
    assert compare_tools(new, old).is_equal


def test_summary_counts_and_lists_breaking_first() -> None:
    def edit(s: dict[str, Any]) -> None:
        del s["properties"]["query"]
        s["required"] = []

    new = changed_input(edit)
    new["description"] = "Find things"

    comparison = compare_tools([search()], [new])

    assert comparison.summary() == (
        "1 breaking, 1 compatible change(s)\n"
        "  BREAKING search: input field 'query' removed\n"
        "  compatible search: description changed"
    )
    assert [c.path for c in comparison.changes] == ["search.description", "search.input.query"]
    assert comparison.is_breaking


def test_changes_are_sorted_by_tool_then_path() -> None:
    old = [tool("b", obj({"x": {"type": "string"}})), tool("a", obj({"y": {"type": "string"}}))]
    new = [tool("b", obj({})), tool("a", obj({})), tool("c")]

    comparison = compare_tools(old, new)

    assert [(c.tool, c.path) for c in comparison.changes] == [
        ("a", "a.input.y"),
        ("b", "b.input.x"),
        ("c", "c"),
    ]


def test_comparison_and_changes_are_immutable() -> None:
    comparison = compare_tools([search()], [])

    with pytest.raises(dataclasses.FrozenInstanceError):
        comparison.changes = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        comparison.changes[0].kind = "compatible"  # type: ignore[misc]


# -- canonical JSON and the schema hash ---------------------------------------------------


def test_canonical_json_sorts_keys_drops_whitespace_and_keeps_unicode() -> None:
    assert canonical_json({"b": [1, {"d": 2, "c": None}], "a": "é"}) == (
        '{"a":"é","b":[1,{"c":null,"d":2}]}'
    )


def test_schema_hash_is_sha256_of_the_name_sorted_canonical_list() -> None:
    tools = [search(), tool("fetch")]
    expected = hashlib.sha256(canonical_json([tool("fetch"), search()]).encode("utf-8")).hexdigest()

    assert schema_hash(tools) == expected
    assert len(expected) == 64


def test_schema_hash_ignores_tool_order_and_key_order() -> None:
    tools = [search(), tool("fetch", obj({"url": {"type": "string"}}))]

    assert schema_hash(tools) == schema_hash([reordered(t) for t in reversed(tools)])


@pytest.mark.parametrize(
    "mutate",
    [
        lambda ts: ts[0].update(description="other"),
        lambda ts: ts[0]["inputSchema"]["properties"]["query"].update(type="integer"),
        lambda ts: ts[0]["inputSchema"]["required"].append("limit"),
        lambda ts: ts.append(tool("fetch")),
        lambda ts: ts.pop(),
        lambda ts: ts[0].update(name="Search"),
    ],
    ids=["description", "type", "required", "tool added", "tool removed", "renamed"],
)
def test_any_change_changes_the_hash(mutate: Any) -> None:
    tools = [search()]
    changed = copy.deepcopy(tools)
    mutate(changed)

    assert schema_hash(changed) != schema_hash(tools)


# -- properties ----------------------------------------------------------------------------


def reordered(value: Any) -> Any:
    """The same JSON value with every object's keys in reverse order."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-2, 2, allow_nan=False, width=16)
    | st.text(alphabet="ab$#/", max_size=3)
)
junk = st.recursive(
    scalars,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text("abc", max_size=2), kids),
    max_leaves=6,
)
names = st.sampled_from(["a", "b", "tags"])
types = st.sampled_from(["string", "integer", "number", "object", "array", "null"])
refs = st.sampled_from(["#", "#/$defs/A", "#/$defs/missing", "#/properties/a", "other.json"])


def _schema_nodes(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries(
        {},
        optional={
            "type": types | st.lists(types, max_size=3),
            "enum": st.lists(scalars, max_size=3),
            "const": scalars,
            "properties": st.dictionaries(names, inner, max_size=3),
            "required": st.lists(names, max_size=3),
            "additionalProperties": st.booleans() | inner,
            "items": inner,
            "anyOf": st.lists(inner, max_size=3),
            "$ref": refs,
            "$defs": st.dictionaries(st.sampled_from(["A", "B"]), inner, max_size=2),
            "minimum": st.integers(-2, 2),
            "maxLength": st.integers(0, 2) | junk,
            "uniqueItems": st.booleans(),
            "pattern": st.text("ab", max_size=2),
            "description": st.text("ab", max_size=2),
            "allOf": st.lists(inner, max_size=2),
        },
    )


schemas = st.recursive(st.booleans() | junk | st.just({}), _schema_nodes, max_leaves=8)
tool_bodies = st.fixed_dictionaries(
    {},
    optional={
        "description": st.text("ab", max_size=3),
        "title": st.text("ab", max_size=3),
        "inputSchema": schemas,
        "outputSchema": st.none() | schemas,
        "annotations": st.dictionaries(st.sampled_from(["readOnlyHint", "x"]), scalars),
    },
)
tool_lists = st.dictionaries(
    st.sampled_from(["alpha", "beta", "gamma", "delta"]), tool_bodies, max_size=4
).map(lambda by_name: [{"name": name, **body} for name, body in by_name.items()])


@settings(deadline=None, database=None)  # examples: tests/unit/conftest.py's profile
@given(tools=tool_lists, data=st.data())
def test_a_list_compared_with_itself_reports_nothing(tools: list[Any], data: st.DataObject) -> None:
    shuffled = [reordered(t) for t in data.draw(st.permutations(copy.deepcopy(tools)))]

    assert compare_tools(tools, tools).changes == ()
    assert compare_tools(tools, shuffled).changes == ()
    assert schema_hash(tools) == schema_hash(shuffled)


@pytest.mark.slow
@settings(deadline=None, database=None)  # examples: tests/unit/conftest.py's profile
@given(old=tool_lists, new=tool_lists)
def test_removed_one_way_is_added_the_other_way(old: list[Any], new: list[Any]) -> None:
    forward, backward = compare_tools(old, new), compare_tools(new, old)

    removed = {c.tool for c in forward.changes if c.message == "tool removed"}
    added_back = {c.tool for c in backward.changes if c.message == "tool added"}
    assert removed == added_back == {t["name"] for t in old} - {t["name"] for t in new}
    assert forward.is_equal == backward.is_equal == (schema_hash(old) == schema_hash(new))
    for change in forward.changes:
        assert change.kind in ("breaking", "compatible")
        assert change.path == change.tool or change.path.startswith(f"{change.tool}.")
    assert list(forward.changes) == sorted(
        forward.changes, key=lambda c: (c.tool, c.path, c.kind, c.message)
    )
    json.dumps([dataclasses.asdict(c) for c in forward.changes])  # changes are plain data


# -- what the mutation run showed untested -------------------------------------------------


def diff(old: Any, new: Any, *, output: bool = False, **defs: Any) -> list[tuple[str, str, str]]:
    """(kind, path, message) of every change between two versions of field ``f``."""

    def schema(field: Any) -> dict[str, Any]:
        return obj({"f": field}, **({"$defs": defs} if defs else {}))

    pair = [
        search(output_schema=schema(side)) if output else search(input_schema=schema(side))
        for side in (old, new)
    ]
    return [(c.kind, c.path, c.message) for c in compare_tools([pair[0]], [pair[1]]).changes]


F = "search.input.f"
# what a change of a tool's definition that callers cannot see gives
NO_EFFECT = [
    (
        "compatible",
        "search",
        "definition changed without effect on callers (list order or unused $defs)",
    )
]


def test_bound_messages_show_both_values_or_unset() -> None:
    assert diff({"maxLength": 5}, {}) == [
        ("compatible", F, "input field 'f' maxLength removed (5 -> unset)")
    ]
    assert diff({}, {"minimum": 1}) == [
        ("breaking", F, "input field 'f' minimum added (unset -> 1)")
    ]
    assert diff({"maxLength": 5}, {"maxLength": 3}) == [
        ("breaking", F, "input field 'f' maxLength changed (5 -> 3)")
    ]


def test_a_boolean_bound_is_no_number() -> None:
    assert diff({"maximum": True}, {"maximum": 5}) == [
        ("breaking", F, "input field 'f' maximum changed (compared as an opaque value)")
    ]


def test_enum_values_shown_are_eight_then_a_count() -> None:
    assert diff({"enum": [0]}, {"enum": list(range(9))}) == [
        ("compatible", F, "input field 'f' enum widened: added 1, 2, 3, 4, 5, 6, 7, 8")
    ]
    assert diff({"enum": [0]}, {"enum": list(range(10))}) == [
        ("compatible", F, "input field 'f' enum widened: added 1, 2, 3, 4, 5, 6, 7, 8 and 1 more")
    ]
    assert diff({"enum": [0]}, {"enum": list(range(11))}) == [
        ("compatible", F, "input field 'f' enum widened: added 1, 10, 2, 3, 4, 5, 6, 7 and 2 more")
    ]


def test_enum_added_removed_and_not_a_list() -> None:
    assert diff({}, {"enum": ["a", "b"]}) == [
        ("breaking", F, 'input field \'f\' enum added: only "a", "b"')
    ]
    assert diff({"enum": ["a"]}, {}) == [
        ("compatible", F, "input field 'f' enum removed: any value allowed")
    ]
    assert diff({"enum": "a"}, {"enum": "b"}) == [
        ("breaking", F, "input field 'f' enum changed (compared as an opaque value)")
    ]


def test_const_is_a_one_value_enum() -> None:
    assert diff({"const": "a"}, {"const": "b"}) == [
        ("breaking", F, "input field 'f' const narrowed: removed \"a\""),
        ("compatible", F, "input field 'f' const widened: added \"b\""),
    ]
    assert diff({}, {"const": "a"}) == [("breaking", F, "input field 'f' const added: only \"a\"")]
    assert diff({"const": ["a"]}, {"const": ["b"]}) == [
        ("breaking", F, "input field 'f' const narrowed: removed [\"a\"]"),
        ("compatible", F, "input field 'f' const widened: added [\"b\"]"),
    ]


def test_an_invalid_type_is_compared_as_an_opaque_value() -> None:
    opaque = [("breaking", F, "input field 'f' type changed (compared as an opaque value)")]
    assert diff({"type": 5}, {"type": 6}) == opaque
    assert diff({"type": "string"}, {"type": 5}) == opaque
    assert diff({"type": 5}, {"type": "string"}) == opaque
    # the same invalid type on both sides is no change; what is below it is still compared
    assert diff({"type": 5, "enum": ["a"]}, {"type": 5, "enum": ["a", "b"]}) == [
        ("compatible", F, "input field 'f' enum widened: added \"b\"")
    ]
    assert diff({"type": 5, "enum": ["a"]}, {"type": 6, "enum": ["a", "b"]}) == [
        ("breaking", F, "input field 'f' type changed (compared as an opaque value)"),
        ("compatible", F, "input field 'f' enum widened: added \"b\""),
    ]


def test_an_unrelated_type_hides_what_is_below_it() -> None:
    assert diff({"type": "string", "enum": ["a"]}, {"type": "integer", "enum": [1]}) == [
        ("breaking", F, "input field 'f' type changed from string to integer")
    ]


def test_a_union_of_plain_types_with_titles_and_descriptions_is_a_type_list() -> None:
    union = {
        "anyOf": [
            {"type": "string", "title": "S", "description": "text"},
            {"type": "integer", "title": "I"},
            {"type": "boolean", "description": "flag"},
        ]
    }
    assert diff(union, {"type": ["boolean", "integer", "string"]}) == NO_EFFECT


def test_a_union_of_x_and_null_keeps_what_x_says() -> None:
    old = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}
    new = {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]}
    assert diff(old, new) == [("breaking", F, "input field 'f' minLength changed (1 -> 2)")]


def test_json_pointer_escapes_and_array_indexes_are_followed() -> None:
    defs = {"a/b": {"type": "string"}, "a~b": {"type": "integer"}, "list": [{}, {"type": "null"}]}
    for ref, kind in [
        ("#/$defs/a~1b", "string"),
        ("#/$defs/a~0b", "integer"),
        ("#/$defs/list/1", "null"),
    ]:
        assert diff({"$ref": ref}, {"type": kind}, **defs) == NO_EFFECT, ref
        assert diff({"$ref": ref}, {"type": "object"}, **defs) == [
            ("breaking", F, f"input field 'f' type changed from {kind} to object")
        ], ref


@pytest.mark.parametrize("ref", ["#/$defs/list/2", "#/$defs/list/x", "#/$defs/a/0", "x/$defs/a"])
def test_a_pointer_that_leads_nowhere_cannot_be_resolved(ref: str) -> None:
    defs = {"list": [{}, {}], "a": {"type": "string"}}
    assert diff({"$ref": ref}, {"type": "object"}, **defs) == [
        (
            "breaking",
            F,
            f"input field 'f' $ref {ref!r}, which cannot be resolved, changed (compared as an "
            "opaque value)",
        )
    ]


def test_a_changed_definition_behind_a_ref_in_an_opaque_keyword_is_seen() -> None:
    field = {"allOf": [{"properties": {"x": {"$ref": "#/$defs/A"}}}]}
    old = search(input_schema={**obj({"f": field}), "$defs": {"A": {"minLength": 1}}})
    new = search(input_schema={**obj({"f": field}), "$defs": {"A": {"maxLength": 1}}})
    assert [(c.kind, c.path, c.message) for c in compare_tools([old], [new]).changes] == [
        ("breaking", F, "input field 'f' keyword 'allOf' changed (compared as an opaque value)")
    ]


def test_a_ref_on_one_side_equal_once_expanded_is_no_change() -> None:
    defs = {"A": {"type": "string"}}
    assert diff({"allOf": [{"$ref": "#/$defs/A"}]}, {"allOf": [{"type": "string"}]}, **defs) == (
        NO_EFFECT
    )
    assert diff({"allOf": [{"type": "string"}]}, {"allOf": [{"$ref": "#/$defs/A"}]}, **defs) == (
        NO_EFFECT
    )


def test_a_fan_out_of_refs_is_compared_within_a_budget() -> None:
    """2^30 paths through 30 definitions: expanding them all would never end."""
    defs = {f"D{i}": {"allOf": [{"$ref": f"#/$defs/D{i + 1}"}] * 2} for i in range(30)}
    defs["D30"] = {"type": "string"}
    old = {"allOf": [{"$ref": "#/$defs/D0"}]}
    new = {"allOf": [{"$ref": "#/$defs/D0"}], "title": "x"}
    assert diff(old, new, **defs) == [("compatible", F, "input field 'f' title added")]


def test_annotation_hints_set_to_null_count_as_changes() -> None:
    old = search(annotations={"readOnlyHint": None, "idempotentHint": True})
    new = search(annotations={"idempotentHint": False, "destructiveHint": None})
    (change,) = compare_tools([old], [new]).changes
    assert change.message == "annotations changed: destructiveHint, idempotentHint, readOnlyHint"


def test_a_metadata_key_removed_says_removed() -> None:
    old, new = search(title="Search"), search()
    (change,) = compare_tools([old], [new]).changes
    assert (change.kind, change.path, change.message) == (
        "compatible",
        "search.title",
        "title removed",
    )


def test_a_field_name_starting_with_x_is_named_whole() -> None:
    old = search(obj({"Xray": {"type": "string"}}))
    new = search(obj({"Xray": {"type": "integer"}}))
    (change,) = compare_tools([old], [new]).changes
    assert change.message == "input field 'Xray' type changed from string to integer"


def test_a_change_at_the_root_names_the_schema() -> None:
    old, new = search(obj({})), search(obj({}, additionalProperties=False))
    (change,) = compare_tools([old], [new]).changes
    assert (change.path, change.message) == (
        "search.input",
        "input schema additionalProperties turned false: fewer unlisted fields allowed",
    )


def test_schemas_nested_deeper_than_48_levels_are_compared_as_opaque_values() -> None:
    def nested(depth: int, leaf: Any) -> Any:
        return leaf if depth == 0 else obj({"p": nested(depth - 1, leaf)})

    old = search(nested(60, {"type": "string"}))
    new = search(nested(60, {"type": "integer"}))
    (change,) = compare_tools([old], [new]).changes
    assert change.path == "search.input" + ".p" * 49
    assert change.message.endswith(
        "schema nested over 48 levels deep changed (compared as an opaque value)"
    )


ARRAY, NUMBER, STRING, OBJECT = ({"type": t} for t in ("array", "number", "string", "object"))


@pytest.mark.parametrize(
    ("old", "new", "kinds", "field", "message"),
    [
        ({**ARRAY, "uniqueItems": True}, ARRAY, "cb", "f", "uniqueItems removed (true -> unset)"),
        (ARRAY, {**ARRAY, "uniqueItems": True}, "bc", "f", "uniqueItems added (unset -> true)"),
        (
            {**ARRAY, "uniqueItems": True},
            {**ARRAY, "uniqueItems": False},
            "cb",
            "f",
            "uniqueItems changed (true -> false)",
        ),
        (
            {**ARRAY, "uniqueItems": "yes"},
            {**ARRAY, "uniqueItems": True},
            "bb",
            "f",
            "uniqueItems changed (compared as an opaque value)",
        ),
        (NUMBER, {**NUMBER, "minimum": 0}, "bc", "f", "minimum added (unset -> 0)"),
        ({**NUMBER, "maximum": 9}, NUMBER, "cb", "f", "maximum removed (9 -> unset)"),
        (
            {**NUMBER, "minimum": 0},
            {**NUMBER, "minimum": -1},
            "cb",
            "f",
            "minimum changed (0 -> -1)",
        ),
        (
            {**NUMBER, "maximum": 9},
            {**NUMBER, "maximum": 10},
            "cb",
            "f",
            "maximum changed (9 -> 10)",
        ),
        ({**NUMBER, "maximum": 9}, {**NUMBER, "maximum": 8}, "bc", "f", "maximum changed (9 -> 8)"),
        (STRING, {**STRING, "pattern": "^a"}, "bc", "f", 'pattern added (unset -> "^a")'),
        ({**STRING, "pattern": "^a"}, STRING, "cb", "f", 'pattern removed ("^a" -> unset)'),
        (
            {**STRING, "pattern": "^a"},
            {**STRING, "pattern": "^b"},
            "bb",
            "f",
            'pattern changed ("^a" -> "^b")',
        ),
        (
            OBJECT,
            {**OBJECT, "additionalProperties": {"type": "string"}},
            "bc",
            "f",
            "additionalProperties restricted to a schema: fewer unlisted fields allowed",
        ),
        (
            {**OBJECT, "additionalProperties": {"type": "string"}},
            OBJECT,
            "cb",
            "f",
            "additionalProperties turned true: more unlisted fields allowed",
        ),
        (
            {**OBJECT, "additionalProperties": False},
            {**OBJECT, "additionalProperties": {"type": "string"}},
            "cb",
            "f",
            "additionalProperties relaxed to a schema: more unlisted fields allowed",
        ),
        (
            {**OBJECT, "additionalProperties": {"type": "string"}},
            {**OBJECT, "additionalProperties": {"type": "integer"}},
            "bb",
            "f.*",
            "type changed from string to integer",
        ),
        (
            {**OBJECT, "additionalProperties": "x"},
            {**OBJECT, "additionalProperties": "y"},
            "bb",
            "f",
            "additionalProperties changed (compared as an opaque value)",
        ),
        (
            {**OBJECT, "additionalProperties": "x"},
            {**OBJECT, "additionalProperties": False},
            "bb",
            "f",
            "additionalProperties changed (compared as an opaque value)",
        ),
    ],
)
def test_bounds_restrictions_unique_items_and_additional_properties_both_ways(
    old: Any, new: Any, kinds: str, field: str, message: str
) -> None:
    kind = {"b": "breaking", "c": "compatible"}
    for direction, code in zip(("input", "output"), kinds, strict=True):
        assert diff(old, new, output=direction == "output") == [
            (kind[code], f"search.{direction}.{field}", f"{direction} field '{field}' {message}")
        ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({**ARRAY, "uniqueItems": False}, ARRAY),
        ({**NUMBER, "minimum": 1}, {**NUMBER, "minimum": 1.0}),
        (OBJECT, {**OBJECT, "additionalProperties": True}),
    ],
)
def test_spellings_of_the_same_bound_are_no_change(old: Any, new: Any) -> None:
    assert diff(old, new) == NO_EFFECT
    assert diff(old, new, output=True) == NO_EFFECT


def test_a_change_without_effect_names_the_tool() -> None:
    old, new = search(obj({"f": {"type": "string"}})), search(obj({"f": {"anyOf": [STRING]}}))
    assert compare_tools([old], [new]).changes == (
        SchemaChange(
            "search",
            "search",
            "compatible",
            "definition changed without effect on callers (list order or unused $defs)",
        ),
    )


def test_no_input_schema_is_any_object() -> None:
    with_schema = tool("t", {"type": "object"})
    without = {k: v for k, v in with_schema.items() if k != "inputSchema"}
    assert [c.message for c in compare_tools([with_schema], [without]).changes] == [
        "definition changed without effect on callers (list order or unused $defs)"
    ]
    assert [c.message for c in compare_tools([without], [with_schema]).changes] == [
        "definition changed without effect on callers (list order or unused $defs)"
    ]


def test_output_schema_added_and_removed_messages() -> None:
    bare = {k: v for k, v in search().items() if k != "outputSchema"}
    assert [(c.kind, c.path, c.message) for c in compare_tools([bare], [search()]).changes] == [
        ("compatible", "search.output", "output schema added")
    ]
    assert [(c.kind, c.path, c.message) for c in compare_tools([search()], [bare]).changes] == [
        (
            "breaking",
            "search.output",
            "output schema removed: structured output is no longer promised",
        )
    ]


def test_one_of_of_plain_types_is_a_type_list_too() -> None:
    assert diff({"oneOf": [STRING, {"type": "integer"}]}, {"type": ["integer", "string"]}) == (
        NO_EFFECT
    )


def test_a_union_next_to_a_type_is_left_as_it_is() -> None:
    old = {"type": "string", "anyOf": [STRING]}
    new = {"type": "string", "anyOf": [STRING, {"type": "null"}]}
    assert diff(old, new) == [
        ("breaking", F, "input field 'f' keyword 'anyOf' changed (compared as an opaque value)")
    ]


@pytest.mark.parametrize("null_first", [False, True])
def test_x_or_null_reads_as_x_with_null_added_to_its_types(null_first: bool) -> None:
    def union(x: dict[str, Any]) -> dict[str, Any]:
        options = [x, {"type": "null"}]
        return {"anyOf": options[::-1] if null_first else options}

    x = {"type": ["integer", "string"], "minLength": 1}
    assert diff(union(x), {"type": ["integer", "null", "string"], "minLength": 1}) == NO_EFFECT
    assert diff(union(x), union({**x, "minLength": 2})) == [
        ("breaking", F, "input field 'f' minLength changed (1 -> 2)")
    ]


def test_x_or_null_follows_refs_in_its_options() -> None:
    defs = {"A": {"type": "string", "minLength": 1}, "B": {"type": "string", "minLength": 2}}
    old = {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]}
    new = {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "null"}]}
    assert diff(old, new, **defs) == [("breaking", F, "input field 'f' minLength changed (1 -> 2)")]


@pytest.mark.parametrize(
    "options",
    [
        [{"type": "string", "minLength": 1}, {"type": "integer", "minimum": 0}],  # two non-plain
        [{"minLength": 1}, {"type": "null"}],  # x has no type
        [5, {"type": "null"}],  # an option that is no schema
        [{"type": 5, "minLength": 1}, {"type": "null"}],  # x's type is invalid
    ],
)
def test_other_unions_are_compared_as_opaque_values(options: list[Any]) -> None:
    changed = [*options, {"type": "boolean", "title": "B"}]
    assert diff({"anyOf": options}, {"anyOf": changed}) == [
        ("breaking", F, "input field 'f' keyword 'anyOf' changed (compared as an opaque value)")
    ]


def test_tuple_items_are_opaque_and_items_added_are_compared_with_any() -> None:
    tuple_form = {**ARRAY, "items": [STRING]}
    assert diff(tuple_form, {**ARRAY, "items": [NUMBER]}) == [
        ("breaking", F, "input field 'f' items (tuple form) changed (compared as an opaque value)")
    ]
    assert diff(tuple_form, {**ARRAY, "items": STRING}) == [
        ("breaking", F, "input field 'f' items (tuple form) changed (compared as an opaque value)")
    ]
    assert diff(ARRAY, {**ARRAY, "items": STRING}) == [
        ("breaking", "search.input.f[]", "input field 'f[]' type narrowed from any to string")
    ]
    assert diff({**ARRAY, "items": STRING}, ARRAY) == [
        ("compatible", "search.input.f[]", "input field 'f[]' type widened from string to any")
    ]


def test_documentation_keywords_and_extensions_are_compatible() -> None:
    assert diff({**STRING, "description": "a"}, STRING) == [
        ("compatible", F, "input field 'f' description removed")
    ]
    assert diff({**STRING, "description": "a"}, {**STRING, "description": "b"}) == [
        ("compatible", F, "input field 'f' description changed")
    ]
    assert diff({**STRING, "default": 1}, {**STRING, "default": 2}) == [
        ("compatible", F, "input field 'f' default changed (1 -> 2)")
    ]
    assert diff(STRING, {**STRING, "default": "x"}) == [
        ("compatible", F, "input field 'f' default added (unset -> \"x\")")
    ]
    assert diff(STRING, {**STRING, "x-note": 1}) == [
        ("compatible", F, "input field 'f' x-note added")
    ]
    assert diff(STRING, {**STRING, "X-note": 1}) == [
        ("breaking", F, "input field 'f' keyword 'X-note' changed (compared as an opaque value)")
    ]


def test_an_unresolvable_ref_on_the_new_side_is_named() -> None:
    assert diff(STRING, {"$ref": "#/$defs/gone"}) == [
        (
            "breaking",
            F,
            "input field 'f' $ref '#/$defs/gone', which cannot be resolved, changed (compared as "
            "an opaque value)",
        )
    ]


def test_properties_or_required_that_are_not_json_are_opaque() -> None:
    old, new = obj({"a": STRING}), {**obj({}), "properties": ["a"]}
    assert [(c.path, c.message) for c in compare_tools([search(old)], [search(new)]).changes] == [
        ("search.input", "input schema properties changed (compared as an opaque value)")
    ]
    old, new = obj({"a": STRING}, ["a"]), {**obj({"a": STRING}), "required": "a"}
    assert [(c.path, c.message) for c in compare_tools([search(old)], [search(new)]).changes] == [
        ("search.input", "input schema required changed (compared as an opaque value)")
    ]


def test_fields_added_as_required_or_optional_or_to_an_output() -> None:
    old, new = obj({}), obj({"a": STRING, "b": STRING}, ["a"])
    assert [(c.kind, c.message) for c in compare_tools([search(old)], [search(new)]).changes] == [
        ("breaking", "input field 'a' added as required"),
        ("compatible", "input field 'b' added as optional"),
    ]
    changes = compare_tools([search(output_schema=old)], [search(output_schema=new)]).changes
    assert [(c.kind, c.message) for c in changes] == [
        ("compatible", "output field 'a' added"),
        ("compatible", "output field 'b' added"),
    ]


def nested_lists(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


def test_check_nesting_counts_levels_from_one_and_names_the_limit() -> None:
    check_nesting(nested_lists(3), 3)
    with pytest.raises(SchemaTooDeep) as caught:
        check_nesting(nested_lists(4), 3)
    assert str(caught.value) == (
        "a tool schema is nested more than 3 levels deep; refusing to hash or compare it (no "
        "real tool needs that many: the server is broken or hostile)"
    )
    check_nesting(nested_lists(128))
    with pytest.raises(SchemaTooDeep):
        check_nesting(nested_lists(129))
    with pytest.raises(SchemaTooDeep):  # a scalar met first does not end the walk
        check_nesting([nested_lists(200), 1])


def deep_tool(depth: int) -> dict[str, Any]:
    return {"name": "deep", "inputSchema": {"x": nested_lists(depth)}}


def test_hash_and_compare_refuse_the_same_depth() -> None:
    deepest = next(d for d in range(130, 110, -1) if _hashes(deep_tool(d)))
    assert compare_tools([deep_tool(deepest)], [deep_tool(deepest)]).changes == ()
    for refuse in (
        lambda: schema_hash([deep_tool(deepest + 1)]),
        lambda: compare_tools([deep_tool(deepest + 1)], []),
        lambda: compare_tools([], [deep_tool(deepest + 1)]),
        lambda: canonical_json(nested_lists(129)),
    ):
        with pytest.raises(SchemaTooDeep):
            refuse()


def _hashes(value: Any) -> bool:
    try:
        schema_hash([value])
    except SchemaTooDeep:
        return False
    return True


def test_refs_that_are_no_string_loop_or_chain_too_long() -> None:
    chain = {f"C{i}": {"$ref": f"#/$defs/C{i + 1}"} for i in range(40)}
    chain["C40"] = STRING
    defs = {"Self": {"$ref": "#/$defs/Self"}, "A": {"$ref": "#/$defs/B"}, "B": STRING, **chain}
    message = "input field 'f' $ref {!r}, which {}, changed (compared as an opaque value)"
    assert diff({"$ref": 5}, NUMBER, **defs) == [
        ("breaking", F, message.format(5, "is not a string"))
    ]
    assert diff({"$ref": "#/$defs/Self"}, NUMBER, **defs) == [
        ("breaking", F, message.format("#/$defs/Self", "is recursive"))
    ]
    assert diff({"$ref": "#/$defs/C0"}, NUMBER, **defs) == [
        ("breaking", F, message.format("#/$defs/C32", "cannot be resolved"))
    ]
    # two hops are followed
    assert diff({"$ref": "#/$defs/A"}, NUMBER, **defs) == [
        ("breaking", F, "input field 'f' type changed from string to number")
    ]


def test_true_is_the_schema_that_allows_anything() -> None:
    assert diff(True, {}) == NO_EFFECT
    assert diff({"$ref": "#/$defs/T"}, {}, T=True) == NO_EFFECT


def test_schema_hash_orders_by_name_then_content() -> None:
    b_tool, a_tool = {"name": "b", "a": 1}, {"name": "a", "z": 1}
    expected = hashlib.sha256(canonical_json([a_tool, b_tool]).encode()).hexdigest()
    assert schema_hash([b_tool, a_tool]) == expected
    nameless, upper = {"x": 1}, {"name": "A"}
    expected = hashlib.sha256(canonical_json([nameless, upper]).encode()).hexdigest()
    assert schema_hash([upper, nameless]) == expected
    twin1, twin2 = {"name": "t", "v": 2}, {"name": "t", "v": 1}
    assert schema_hash([twin1, twin2]) == schema_hash([twin2, twin1])
    expected = hashlib.sha256(canonical_json([twin2, twin1]).encode()).hexdigest()
    assert schema_hash([twin1, twin2]) == expected


def test_of_two_tools_with_one_name_the_first_in_canonical_order_is_used() -> None:
    first, second = tool("t", obj({"a": STRING})), tool("t", obj({"b": STRING}))
    assert compare_tools([second, first], [first]).changes == ()
    assert compare_tools([first], [second, first]).changes == ()


def test_a_tool_list_that_is_a_string_or_an_object_is_refused() -> None:
    with pytest.raises(TypeError, match=r"^expected a list of tool objects, got str$"):
        compare_tools("tools", [])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^expected a list of tool objects, got dict$"):
        compare_tools([], {"name": "t"})  # type: ignore[arg-type]


def test_values_json_cannot_hold_are_told_apart_by_repr() -> None:
    from langop_infra.sync import _compare as compare

    assert compare._key({1}) != compare._key({2})
    assert compare._key({1}) == compare._key({1})


# --- what #37's second mutation run of this module left alive ---------------------------------


def _deeper_than_48(leaf: Any) -> Any:
    for _ in range(50):
        leaf = obj({"p": leaf})
    return leaf


@pytest.mark.parametrize(
    "unchanged",
    [
        5,  # a schema that is not an object
        {"$ref": 5},  # a $ref that is not a string
        _deeper_than_48(STRING),
        {**ARRAY, "items": [STRING]},  # tuple form
        {**OBJECT, "properties": ["a"]},
        {**OBJECT, "required": "a"},
        {**OBJECT, "additionalProperties": "yes"},
        {"enum": "a"},
    ],
    ids=["not-object", "ref-not-string", "deep", "tuple", "properties", "required", "ap", "enum"],
)
def test_an_opaque_value_that_did_not_change_is_not_reported(unchanged: Any) -> None:
    """Only the title added beside it is a change: an opaque value is compared, not flagged."""
    old = search(input_schema=obj({"f": STRING, "g": unchanged}))
    new = search(input_schema=obj({"f": {**STRING, "title": "t"}, "g": unchanged}))
    assert [(c.kind, c.path, c.message) for c in compare_tools([old], [new]).changes] == [
        ("compatible", F, "input field 'f' title added")
    ]


@pytest.mark.parametrize(
    ("keyword", "value"),
    [("allOf", [STRING]), ("maximum", "10"), ("uniqueItems", "yes"), ("enum", "a")],
)
def test_an_opaque_value_set_to_or_from_null_is_a_change(keyword: str, value: Any) -> None:
    message = f"input field 'f' {'keyword ' + repr(keyword) if keyword == 'allOf' else keyword}"
    expected = [("breaking", F, f"{message} changed (compared as an opaque value)")]
    assert diff({keyword: value}, {keyword: None}) == expected
    assert diff({keyword: None}, {keyword: value}) == expected


def test_a_schema_that_became_no_object_is_named() -> None:
    assert diff(STRING, 5) == [
        (
            "breaking",
            F,
            "input field 'f' schema, not a JSON object, changed (compared as an opaque value)",
        )
    ]
    assert diff(5, STRING) == diff(STRING, 5)


def test_a_recursive_ref_whose_definition_went_away_is_a_change() -> None:
    """The same ``$ref`` text on both sides, recursive in the old schema and unresolvable in
    the new one (its definition was inlined once and dropped): not the same recursion."""
    node = {**OBJECT, "properties": {"next": {"$ref": "#/$defs/A"}}}
    old = search(input_schema={**obj({"a": {"$ref": "#/$defs/A"}}), "$defs": {"A": node}})
    new = search(input_schema=obj({"a": node}))
    assert [(c.path, c.message) for c in compare_tools([old], [new]).changes] == [
        (
            "search.input.a.next",
            "input field 'a.next' $ref '#/$defs/A', which is recursive, changed "
            "(compared as an opaque value)",
        )
    ]


@pytest.mark.parametrize("nullable", [False, True])
def test_a_changed_recursive_definition_is_reported_once(nullable: bool) -> None:
    """The walk knows which definitions it has entered, through ``anyOf: [X, null]`` too, so
    a recursion stops where it began instead of repeating the change at every level."""

    def schema(kind: str) -> dict[str, Any]:
        ref: Any = {"$ref": "#/$defs/A"}
        link = {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]} if nullable else ref
        body = {**OBJECT, "properties": {"next": ref, "x": {"type": kind}}}
        return {**obj({"a": link}), "$defs": {"A": body}}

    changes = compare_tools([search(schema("string"))], [search(schema("integer"))]).changes
    assert [(c.path, c.message) for c in changes] == [
        ("search.input.a.x", "input field 'a.x' type changed from string to integer")
    ]


def test_a_single_option_union_is_not_read_as_nullable() -> None:
    """``anyOf: [X]`` has no null option: it stays a union, compared as an opaque value."""
    old = {"anyOf": [obj({"q": STRING})]}
    new = {"anyOf": [obj({"q": NUMBER})]}
    assert diff(old, new) == [
        ("breaking", F, "input field 'f' keyword 'anyOf' changed (compared as an opaque value)")
    ]


@pytest.mark.parametrize(("zeros", "seen"), [(19_998, True), (19_999, False)])
def test_ref_expansion_stops_after_twenty_thousand_values(zeros: int, seen: bool) -> None:
    """One list and ``zeros`` scalars come before the ``$ref``: the 20,000th value expanded is
    the last; past it, values are compared as they are written."""
    field = {"allOf": [*([0] * zeros), {"$ref": "#/$defs/X"}]}
    old = search(input_schema={**obj({"f": field}), "$defs": {"X": {"const": 1}}})
    new = search(input_schema={**obj({"f": field}), "$defs": {"X": {"const": 2}}})
    opaque = (
        "breaking",
        F,
        "input field 'f' keyword 'allOf' changed (compared as an opaque value)",
    )
    found = [(c.kind, c.path, c.message) for c in compare_tools([old], [new]).changes]
    assert found == ([opaque] if seen else NO_EFFECT)


def test_expansions_nested_too_deep_are_never_equal() -> None:
    """A chain of definitions that expands past 128 levels cannot be compared as text; two
    such values are different values, even when they differ only at the bottom."""

    def schema(leaf: int) -> dict[str, Any]:
        defs: dict[str, Any] = {
            f"D{i}": {"items": {"$ref": f"#/$defs/D{i + 1}"}} for i in range(140)
        }
        defs["D140"] = {"const": leaf}
        return {**obj({"f": {"allOf": [{"$ref": "#/$defs/D0"}]}}), "$defs": defs}

    changes = compare_tools([search(schema(1))], [search(schema(2))]).changes
    assert [(c.path, c.message) for c in changes] == [
        (F, "input field 'f' keyword 'allOf' changed (compared as an opaque value)")
    ]


def test_of_two_tools_with_one_name_the_first_in_canonical_order_wins_in_either_order() -> None:
    first, second = tool("t", obj({"a": STRING})), tool("t", obj({"b": STRING}))
    assert compare_tools([first, second], [first]).changes == ()
    assert compare_tools([first], [first, second]).changes == ()


def _frozen(value: Any) -> Any:
    """The same JSON value built of read-only mappings and tuples: not plain JSON containers."""
    from types import MappingProxyType

    if isinstance(value, dict):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


@pytest.mark.parametrize("build", [lambda v: v, _frozen], ids=["plain", "frozen"])
def test_both_routes_of_the_hash_order_by_name_then_content(build: Any) -> None:
    """Plain JSON values take the one-pass route; mappings and tuples of other types take the
    general one. Both give the SHA-256 of the same canonical text (non-ASCII kept as is)."""
    named = [{"name": "b", "a": "é"}, {"name": "A", "z": 1}, {"x": 1}, {"name": "t", "v": 2}]
    named.append({"name": "t", "v": 1})
    expected = [named[2], named[1], named[0], named[4], named[3]]  # "", "A", "b", "t" v1, v2
    digest = hashlib.sha256(canonical_json(expected).encode()).hexdigest()
    assert schema_hash([build(t) for t in named]) == digest
    assert schema_hash([build(t) for t in reversed(named)]) == digest


def test_the_hash_of_keys_that_are_not_strings_is_that_of_their_text() -> None:
    mixed = {"name": "m", 1: "one", "b": {2: [3]}}
    assert schema_hash([mixed]) == schema_hash([{"name": "m", "1": "one", "b": {"2": [3]}}])


def test_a_value_nested_far_past_the_limit_is_refused_before_it_is_walked() -> None:
    """Far deeper than Python's recursion limit, and not plain JSON: refused as too deep, never
    a RecursionError from copying it."""
    value: Any = ()
    for _ in range(5_000):
        value = (value,)
    with pytest.raises(SchemaTooDeep):
        schema_hash([{"name": "deep", "x": value}])
